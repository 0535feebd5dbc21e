package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// testViewConsistency has one writer keep two records equal while readers check, in Views,
// that they never see one of them changed without the other.
func testViewConsistency(t *testing.T, s store.Store) {
	insert(t, s, &store.Record{Kind: "pair", ID: "x", Data: []byte("0")},
		&store.Record{Kind: "pair", ID: "y", Data: []byte("0")})
	var done atomic.Bool
	var wg sync.WaitGroup
	var views atomic.Int64
	for range 2 {
		wg.Go(func() {
			for !done.Load() || views.Load() < 20 {
				views.Add(1)
				if err := s.View(ctx(), checkPair); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	for i := 1; i <= 30; i++ {
		update(t, s, func(tx store.Tx) error { return setPair(tx, strconv.Itoa(i)) })
	}
	done.Store(true)
	wg.Wait()
}

// checkPair reads x, then the list, then y, and reports whether they disagree.
func checkPair(tx store.Tx) error {
	x, err := tx.Get("pair", "x")
	if err != nil {
		return err
	}
	rs, err := tx.List("pair", store.ListOptions{})
	if err != nil {
		return err
	}
	y, err := tx.Get("pair", "y")
	if err != nil {
		return err
	}
	if len(rs) != 2 || string(x.Data) != string(y.Data) || string(rs[0].Data) != string(rs[1].Data) ||
		string(rs[0].Data) != string(x.Data) {
		return fmt.Errorf("inconsistent View: x=%s y=%s list=%d records", x.Data, y.Data, len(rs))
	}
	return nil
}

// setPair sets both records of the pair to v.
func setPair(tx store.Tx, v string) error {
	for _, id := range []string{"x", "y"} {
		r, err := tx.Get("pair", id)
		if err != nil {
			return err
		}
		r.Data = []byte(v)
		if err := tx.Put(r); err != nil {
			return err
		}
	}
	return nil
}

// testCounter has many goroutines increment one counter record with read-modify-write
// Updates; compare-and-set plus retry must not lose an increment.
func testCounter(t *testing.T, s store.Store) {
	counter(t, s, ctx())
}

// testCounterCompareAndSetOnly is testCounter with Updates marked CompareAndSetOnly: the
// compare-and-set alone must keep every increment.
func testCounterCompareAndSetOnly(t *testing.T, s store.Store) {
	counter(t, s, store.CompareAndSetOnly(ctx()))
}

func counter(t *testing.T, s store.Store, c context.Context) {
	const workers, each = 8, 20
	insert(t, s, &store.Record{Kind: "counter", ID: "c", Data: []byte("0")})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				if err := s.Update(c, increment); err != nil {
					t.Errorf("increment: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := get(t, s, "counter", "c")
	if string(got.Data) != strconv.Itoa(workers*each) || got.Version != workers*each+1 {
		t.Errorf("counter = %s at Version %d, want %d at Version %d",
			got.Data, got.Version, workers*each, workers*each+1)
	}
}

// increment adds one to the counter record.
func increment(tx store.Tx) error {
	r, err := tx.Get("counter", "c")
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(string(r.Data))
	if err != nil {
		return err
	}
	r.Data = []byte(strconv.Itoa(n + 1))
	return tx.Put(r)
}

// testInsertRace has many goroutines Insert the same ID at once: exactly one must win.
func testInsertRace(t *testing.T, s store.Store) {
	const workers = 12
	start := make(chan struct{})
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			<-start
			errs[i] = s.Update(ctx(), func(tx store.Tx) error {
				return tx.Insert(&store.Record{Kind: "alias", ID: "same", Data: []byte(strconv.Itoa(i))})
			})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("workers %d and %d both inserted the same ID", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrExists):
			t.Errorf("worker %d: %v, want ErrExists", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no worker inserted the record")
	}
	if got := get(t, s, "alias", "same"); string(got.Data) != strconv.Itoa(winner) {
		t.Errorf("stored Data %s, want the winner's %d", got.Data, winner)
	}
}

// testReopen closes a store and opens its data again: everything committed is there, and Seq
// keeps increasing past every Seq handed out before.
func testReopen(t *testing.T, open Opener) {
	s, err := open()
	must(t, "open", err)
	rs := insert(t, s, rec("alias", "a", "p"), rec("build", "b", ""), rec("alias", "c", "p"), rec("alias", "d", ""))
	rs[0].Data = []byte("changed")
	update(t, s, func(tx store.Tx) error { return tx.Put(rs[0]) })
	update(t, s, func(tx store.Tx) error { return tx.Delete("alias", "d") })
	failed := s.Update(ctx(), func(tx store.Tx) error {
		must(t, "Insert", tx.Insert(rec("alias", "e", "")))
		return errBoom
	})
	wantErr(t, "failed Update", failed, errBoom)
	must(t, "close", s.Close())

	s = mustOpen(t, open)
	sameRecord(t, "put record", get(t, s, "alias", "a"), rs[0])
	sameRecord(t, "other kind", get(t, s, "build", "b"), rs[1])
	wantIDs(t, "List after reopen", list(t, s, "alias", store.ListOptions{Parent: "p"}), "a", "c")
	wantIDs(t, "all after reopen", list(t, s, "alias", store.ListOptions{}), "a", "c")
	n := insert(t, s, rec("alias", "new", ""))[0]
	if n.Seq <= rs[3].Seq {
		t.Errorf("Seq after reopen %d, want > %d (the deleted record's)", n.Seq, rs[3].Seq)
	}
}

// casOnlyStore marks every Update's context store.CompareAndSetOnly.
type casOnlyStore struct{ store.Store }

func (s casOnlyStore) Update(c context.Context, fn func(store.Tx) error) error {
	return s.Store.Update(store.CompareAndSetOnly(c), fn)
}

// casOnly runs a test of Update's semantics with every Update marked CompareAndSetOnly: a
// store that defers such an Update's writes must keep them.
func casOnly(test func(*testing.T, store.Store)) func(*testing.T, store.Store) {
	return func(t *testing.T, s store.Store) { test(t, casOnlyStore{s}) }
}

// testCASAllOrNone: a CompareAndSetOnly Update whose write fails (an Insert of a taken ID, a
// Put or Delete of a record that is gone, a Put that stays stale) fails with that write's
// error, whether the store reports it at the write or at commit, and applies none of its
// writes.
func testCASAllOrNone(t *testing.T, s store.Store) {
	insert(t, s, rec("alias", "taken", ""), rec("alias", "stale", ""))
	stale := get(t, s, "alias", "stale")
	update(t, s, func(tx store.Tx) error { return tx.Put(get(t, s, "alias", "stale")) })
	cas := store.CompareAndSetOnly(ctx())
	failing := []struct {
		name  string
		write func(tx store.Tx) error
		want  error
	}{
		{"Insert of a taken ID", func(tx store.Tx) error { return tx.Insert(rec("alias", "taken", "")) }, store.ErrExists},
		{"Put of a record gone", func(tx store.Tx) error { return tx.Put(&store.Record{Kind: "alias", ID: "no", Version: 1}) }, store.ErrNotFound},
		{"Delete of a record gone", func(tx store.Tx) error { return tx.Delete("alias", "no") }, store.ErrNotFound},
		{"stale Put", func(tx store.Tx) error { r := *stale; return tx.Put(&r) }, store.ErrConflict},
	}
	for _, f := range failing {
		err := s.Update(cas, func(tx store.Tx) error {
			must(t, "Insert", tx.Insert(rec("alias", "first", "")))
			taken := mustGet(t, tx, "alias", "taken")
			taken.Data = []byte("changed")
			must(t, "Put", tx.Put(taken))
			return f.write(tx)
		})
		wantErr(t, f.name, err, f.want)
		wantIDs(t, "records after "+f.name, list(t, s, "alias", store.ListOptions{}), "taken", "stale")
		if got := get(t, s, "alias", "taken"); string(got.Data) == "changed" {
			t.Errorf("%s: the Update's Put was applied", f.name)
		}
	}
}
