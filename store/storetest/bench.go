package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// benchRecords is how many records BenchGet reads among.
const benchRecords = 1000

// BenchGet measures one Get inside a View, among benchRecords records of about 200 bytes.
func BenchGet(b *testing.B, s store.Store) {
	data := make([]byte, 200)
	err := s.Update(context.Background(), func(tx store.Tx) error {
		for i := range benchRecords {
			r := &store.Record{Kind: "alias", ID: fmt.Sprintf("alias-%04d", i), Data: data}
			if err := tx.Insert(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	ids := make([]string, benchRecords)
	for i := range ids {
		ids[i] = fmt.Sprintf("alias-%04d", i)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		err := s.View(ctx, func(tx store.Tx) error {
			_, err := tx.Get("alias", ids[i%benchRecords])
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchInsert measures one Update that inserts one record of about 200 bytes.
func BenchInsert(b *testing.B, s store.Store) {
	data := make([]byte, 200)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		id := fmt.Sprintf("gs-%09d", i)
		err := s.Update(ctx, func(tx store.Tx) error {
			return tx.Insert(&store.Record{Kind: "gamesession", ID: id, Parent: "fleet-1", Data: data})
		})
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchInsertParallel measures Updates that each insert one record of about 200 bytes, issued
// by writers goroutines at once; it reports the throughput as writes/s. With one writer it
// measures the same as BenchInsert; with more it shows how a store batches or overlaps commits.
func BenchInsertParallel(b *testing.B, s store.Store, writers int) {
	data := make([]byte, 200)
	ctx := context.Background()
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for w := range writers {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				id := fmt.Sprintf("gs-%02d-%09d", w, i)
				err := s.Update(ctx, func(tx store.Tx) error {
					return tx.Insert(&store.Record{Kind: "gamesession", ID: id, Parent: "fleet-1", Data: data})
				})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "writes/s")
}
