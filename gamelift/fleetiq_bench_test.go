//go:build unix

package gamelift

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// benchServers is how many game servers BenchmarkClaimGameServer registers, benchPerInstance
// of them on each instance.
const (
	benchServers     = 20000
	benchPerInstance = 100
)

// BenchmarkClaimGameServer claims game servers of one ACTIVE group by group name (FleetIQ
// placement) from 4 concurrent claimers on 2 Ps, on the embedded store. Besides ns/op it
// reports the process's CPU time per claim as cpu-ns/op, which other load on a shared machine
// disturbs less. Any claim error fails it.
//
// The fake clock does not move while claims run, so the group runs out after benchServers
// claims; an epoch gate then waits for the claims under way and advances the clock past
// ClaimDuration, which makes every claimed game server claimable again (its claim lapses on
// the clock, without a write).
func BenchmarkClaimGameServer(b *testing.B) {
	f := newFixture(b, "")
	activeBenchGroup(b, f, "g")
	registerBenchServers(b, f, "g")
	in := &api.ClaimGameServerInput{GameServerGroupName: api.String("g")}
	gate := &epochGate{f: f, per: benchServers}
	b.SetParallelism(2)
	cpu0 := processCPU()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			gate.enter()
			_, err := f.svc.ClaimGameServer(f.ctx, in)
			gate.leave()
			if err != nil {
				b.Fatal(err)
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

// epochGate lets per claims through for each position of the fake clock. The claim that
// starts a new epoch waits until the claims of the last one have finished, then advances the
// clock past ClaimDuration; later claims wait behind it.
type epochGate struct {
	f       *fixture
	per     int
	mu      sync.Mutex
	started int
	running atomic.Int64
}

func (g *epochGate) enter() {
	g.mu.Lock()
	if g.started > 0 && g.started%g.per == 0 {
		for g.running.Load() > 0 {
			runtime.Gosched()
		}
		g.f.clock.Advance(ClaimDuration + time.Second)
	}
	g.started++
	g.running.Add(1)
	g.mu.Unlock()
}

func (g *epochGate) leave() { g.running.Add(-1) }

// activeBenchGroup creates a group and steps the FleetIQ loop until it is ACTIVE.
func activeBenchGroup(b *testing.B, f *fixture, name string) {
	if _, err := f.svc.CreateGameServerGroup(f.ctx, groupInput(name)); err != nil {
		b.Fatal(err)
	}
	loop := NewFleetIQLoop(f.svc)
	for range 2 {
		if err := loop.Step(f.ctx); err != nil {
			b.Fatal(err)
		}
	}
	_, status, err := f.svc.groupStatus(f.ctx, api.String(name), api.NotFoundException)
	if err != nil || status != groupActive {
		b.Fatalf("group status = %q, %v; want ACTIVE", status, err)
	}
}

// registerBenchServers registers benchServers game servers on group, one instance per
// transaction, as RegisterGameServer does one at a time.
func registerBenchServers(b *testing.B, f *fixture, group string) {
	now := f.svc.nowMillis()
	for inst := range benchServers / benchPerInstance {
		err := f.svc.update(f.ctx, func(tx store.Tx) error {
			for n := range benchPerInstance {
				d := &serverDoc{Group: group, ID: fmt.Sprintf("gs-%03d-%03d", inst, n), Instance: instanceID(inst),
					Conn: "10.0.0.1:7777", Registered: now}
				if err := f.svc.register(tx, d); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	f.svc.placements().invalidate(group)
}

// processCPU is the CPU time, user and system, that this process has used so far, in
// nanoseconds; 0 if the system will not say.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
