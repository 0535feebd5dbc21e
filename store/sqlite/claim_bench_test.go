//go:build unix

package sqlite

import (
	"context"
	"fmt"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// BenchmarkClaimPattern is FleetIQ's claim as the store sees it, with 100,000 game servers:
// each Update reads a game server record, Puts it back, and moves its slot record to another
// parent (Delete, then Insert with a new Seq), from 4 concurrent writers. It reports Updates
// per commit as batch, and the process's CPU time per Update as cpu-ns/op, which
// other load on a shared machine disturbs less than the wall time.
func BenchmarkClaimPattern(b *testing.B) {
	const n = 100000
	s, err := Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	for lo := 0; lo < n; lo += 10000 {
		err := s.Update(ctx, func(tx store.Tx) error {
			for i := lo; i < lo+10000; i++ {
				id := fmt.Sprintf("gs-%06d", i)
				if err := tx.Insert(&store.Record{Kind: "gs", ID: id, Parent: "g", Data: []byte(`{"g":"g","id":"` + id + `","i":"i-0001","r":1700000000000}`)}); err != nil {
					return err
				}
				if err := tx.Insert(&store.Record{Kind: "slot", ID: id, Parent: fmt.Sprintf("g/i-%04d/free", i/100)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	commits := s.commits.Load()
	b.SetParallelism(2) // 4 writers on 2 Ps
	cpu0 := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := fmt.Sprintf("gs-%06d", next.Add(1)%n)
			if err := s.Update(ctx, func(tx store.Tx) error { return claimLike(tx, id) }); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/float64(s.commits.Load()-commits), "batch")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
}

// cpuTime is the process's user and system CPU time so far, in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// claimLike does the writes of one claim of game server id.
func claimLike(tx store.Tx, id string) error {
	r, err := tx.Get("gs", id)
	if err != nil {
		return err
	}
	r.Data = append(r.Data[:len(r.Data)-1], []byte(`,"cl":1700000060000}`)...)
	if err := tx.Put(r); err != nil {
		return err
	}
	slot, err := tx.Get("slot", id)
	if err != nil {
		return err
	}
	if err := tx.Delete("slot", id); err != nil {
		return err
	}
	return tx.Insert(&store.Record{Kind: "slot", ID: id, Parent: slot.Parent + "/c", Data: []byte("1700000060000")})
}
