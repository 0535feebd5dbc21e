package gamelift

import (
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/postgres"
	"github.com/hoist-gg/hoist/store/sqlite"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestMonitorOnTwoNodes runs the monitor of two Services ("server nodes") sharing one store
// at the same time, many times over, and checks each transition happened once: one
// TerminateProcess push per process across both nodes, one event per cause.
func TestMonitorOnTwoNodes(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		st, err := sqlite.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		monitorTwice(t, st)
	})
	t.Run("postgres", func(t *testing.T) {
		st, err := postgres.Open(t.Context(), pgtest.DSN(t))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		monitorTwice(t, st)
	})
}

func monitorTwice(t *testing.T, st store.Store) {
	clk := clock.NewFake(t0)
	a, na := hostFixtureOn(t, st, clk, "a")
	b, _ := hostFixtureOn(t, st, clk, "b")
	fleet := a.anywhereFleet(t, "shared")
	a.register(t, fleet, "host-1")
	h := &host{f: a, n: na, fleet: fleet, token: a.token(t, fleet, "host-1")}
	const procs = 4
	for i := range procs {
		h.ready(t, string(rune('p'+i)), 7000+i)
	}
	stepBoth := func() {
		var wg sync.WaitGroup
		for _, f := range []*fixture{a, b, a, b} {
			wg.Go(func() {
				if err := f.svc.ProcessMonitor().Step(f.ctx); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	clk.Advance(healthChecksMissed * DefaultHealthCheckInterval) // every process misses its checks
	stepBoth()
	if got := len(na.pushes()); got != procs { // the nodes share one store, and so one outbox
		t.Errorf("%d TerminateProcess pushes across the nodes, want %d", got, procs)
	}
	clk.Advance(DefaultTerminationGracePeriod)
	stepBoth()
	codes := a.eventCodes(t, fleet)
	if u, f := countCode(codes, api.EventCodeServerProcessTerminatedUnhealthy), countCode(codes, api.EventCodeServerProcessForceTerminated); u != procs || f != procs {
		t.Errorf("events: %d TERMINATED_UNHEALTHY and %d FORCE_TERMINATED, want %d each", u, f, procs)
	}
	ok(b.h.DeleteFleet(b.ctx, &api.DeleteFleetInput{FleetId: api.String(fleet)}))(t)
	clk.Advance(time.Second)
	stepBoth()
	if got := countCode(a.eventCodes(t, fleet), api.EventCodeFleetDeleted); got != 1 {
		t.Errorf("FLEET_DELETED recorded %d times, want once", got)
	}
}

func countCode(codes []string, c api.EventCode) int {
	n := 0
	for _, s := range codes {
		if s == string(c) {
			n++
		}
	}
	return n
}
