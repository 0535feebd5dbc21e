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

// TestCompareAndSetOnlyStaleCache: a CompareAndSetOnly Update of one process reads records
// from its cache (filled by Prefetch and by earlier Updates), which another process's writes
// make stale; the stale read must neither
// commit (its batch's check fails and the function runs again on fresh reads) nor refuse (a
// function that fails on a cached read runs again on fresh reads).
func TestCompareAndSetOnlyStaleCache(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	b, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	ctx := context.Background()
	cas := store.CompareAndSetOnly(ctx)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(a.Update(ctx, func(tx store.Tx) error {
		return errors.Join(tx.Insert(&store.Record{Kind: "x", ID: "src", Data: []byte("old")}),
			tx.Insert(&store.Record{Kind: "x", ID: "dst"}))
	}))
	calls := 0
	copySrc := func(tx store.Tx) error { // dst := src, or refuse
		calls++
		src, err := tx.Get("x", "src")
		if err != nil {
			return err
		}
		if string(src.Data) == "refuse" {
			return errRefused
		}
		dst, err := tx.Get("x", "dst")
		if err != nil {
			return err
		}
		dst.Data = src.Data
		return tx.Put(dst)
	}
	setSrc := func(data string) {
		must(b.Update(ctx, func(tx store.Tx) error {
			r, err := tx.Get("x", "src")
			if err != nil {
				return err
			}
			r.Data = []byte(data)
			return tx.Put(r)
		}))
	}
	read, err := a.(*postgres.Store).Prefetch(ctx, "x", []string{"src", "dst", "missing"}) // a caches src
	must(err)
	if len(read) != 2 || read[0].Kind != "x" || read[0].Version == 0 || read[0].ID == read[1].ID {
		t.Fatalf("Prefetch of src, dst and missing = %+v, want src and dst", read)
	}
	setSrc("new")
	calls = 0
	must(a.Update(cas, copySrc))
	if got, _ := b.Get(ctx, "x", "dst"); string(got.Data) != "new" || calls != 2 {
		t.Errorf("after a stale cached read: dst = %q after %d runs, want \"new\" after 2 (one on the cache, one fresh)", got.Data, calls)
	}
	setSrc("refuse")
	if err := a.Update(cas, copySrc); !errors.Is(err, errRefused) {
		t.Fatalf("Update refusing: %v", err)
	}
	setSrc("fine")
	calls = 0
	must(a.Update(cas, copySrc))
	if got, _ := b.Get(ctx, "x", "dst"); string(got.Data) != "fine" || calls != 2 {
		t.Errorf("after a refusal on a stale cached read: dst = %q after %d runs, want \"fine\" after 2", got.Data, calls)
	}
}

var errRefused = errors.New("refused")
