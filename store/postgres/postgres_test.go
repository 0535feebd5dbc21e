package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/postgres"
	"github.com/hoist-gg/hoist/store/storetest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func open(dsn string) (store.Store, error) { return postgres.Open(context.Background(), dsn) }

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dsn := pgtest.DSN(t)
		return func() (store.Store, error) { return open(dsn) }
	})
}

func TestCrash(t *testing.T) {
	storetest.Crash(t, func(t *testing.T) string { return pgtest.DSN(t) }, open)
}

// TestTwoStoresOneDatabase stands for two Hoist processes sharing a database: both open it at
// once (racing to create the schema), and each sees the other's writes.
func TestTwoStoresOneDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	stores := make([]store.Store, 4)
	errs := make([]error, len(stores))
	var wg sync.WaitGroup
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = open(dsn) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent Open %d: %v", i, err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	ctx := context.Background()
	r := &store.Record{Kind: "alias", ID: "a", Data: []byte("x")}
	if err := stores[0].Update(ctx, func(tx store.Tx) error { return tx.Insert(r) }); err != nil {
		t.Fatal(err)
	}
	err := stores[1].Update(ctx, func(tx store.Tx) error {
		return tx.Insert(&store.Record{Kind: "alias", ID: "a"})
	})
	if !errors.Is(err, store.ErrExists) {
		t.Errorf("Insert through the second store: %v, want ErrExists", err)
	}
}

func BenchmarkGetInView(b *testing.B) {
	storetest.BenchGet(b, openBench(b))
}

func BenchmarkInsertInUpdate(b *testing.B) {
	storetest.BenchInsert(b, openBench(b))
}

func openBench(b *testing.B) store.Store {
	s, err := open(pgtest.DSN(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}
