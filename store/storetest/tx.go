package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// ctx is the context of the suite's calls that expect errors.
func ctx() context.Context { return context.Background() }

func testOwnWrites(t *testing.T, s store.Store) {
	committed := insert(t, s, rec("alias", "old", ""), rec("alias", "gone", ""))[0]
	update(t, s, func(tx store.Tx) error {
		n := rec("alias", "new", "")
		must(t, "Insert", tx.Insert(n))
		sameRecord(t, "Get of own Insert", mustGet(t, tx, "alias", "new"), n)
		o := mustGet(t, tx, "alias", "old")
		o.Data = []byte("changed")
		must(t, "Put", tx.Put(o))
		sameRecord(t, "Get of own Put", mustGet(t, tx, "alias", "old"), o)
		o.Data = []byte("changed twice")
		must(t, "second Put of own write", tx.Put(o))
		must(t, "Delete", tx.Delete("alias", "gone"))
		_, err := tx.Get("alias", "gone")
		wantErr(t, "Get of own Delete", err, store.ErrNotFound)
		wantErr(t, "Delete of own Delete", tx.Delete("alias", "gone"), store.ErrNotFound)
		wantErr(t, "Insert over own Insert", tx.Insert(rec("alias", "new", "")), store.ErrExists)
		return nil
	})
	if got := get(t, s, "alias", "old"); string(got.Data) != "changed twice" || got.Version != committed.Version+2 {
		t.Errorf("after commit: %+v", got)
	}
	wantIDs(t, "List after commit", list(t, s, "alias", store.ListOptions{}), "old", "new")
}

func testOwnWritesList(t *testing.T, s store.Store) {
	insert(t, s, rec("gs", "a", "f1"), rec("gs", "b", "f1"), rec("gs", "c", "f2"), rec("gs", "d", "f1"))
	update(t, s, func(tx store.Tx) error {
		must(t, "Delete", tx.Delete("gs", "b"))
		c := mustGet(t, tx, "gs", "c")
		c.Parent = "f1"
		must(t, "Put", tx.Put(c))
		must(t, "Insert", tx.Insert(rec("gs", "e", "f1")))
		must(t, "Insert", tx.Insert(rec("gs", "f", "f2")))
		must(t, "Delete own Insert", tx.Delete("gs", "f"))
		must(t, "re-Insert deleted", tx.Insert(rec("gs", "b", "f2")))
		wantIDs(t, "own List", mustList(t, tx, "gs", store.ListOptions{}), "a", "c", "d", "e", "b")
		wantIDs(t, "own List f1", mustList(t, tx, "gs", store.ListOptions{Parent: "f1"}), "a", "c", "d", "e")
		wantIDs(t, "own List f2", mustList(t, tx, "gs", store.ListOptions{Parent: "f2"}), "b")
		wantIDs(t, "own List limit", mustList(t, tx, "gs", store.ListOptions{Parent: "f1", Limit: 3}), "a", "c", "d")
		d := mustGet(t, tx, "gs", "d")
		wantIDs(t, "own List after", mustList(t, tx, "gs", store.ListOptions{AfterSeq: d.Seq}), "e", "b")
		return nil
	})
	wantIDs(t, "List after commit", list(t, s, "gs", store.ListOptions{}), "a", "c", "d", "e", "b")
}

func testOwnDeletesLimit(t *testing.T, s store.Store) {
	for i := range 10 {
		insert(t, s, rec("gs", fmt.Sprintf("r%d", i), ""))
	}
	update(t, s, func(tx store.Tx) error {
		for _, id := range []string{"r0", "r1", "r3", "r4"} {
			must(t, "Delete", tx.Delete("gs", id))
		}
		wantIDs(t, "List limit 3", mustList(t, tx, "gs", store.ListOptions{Limit: 3}), "r2", "r5", "r6")
		return nil
	})
}

func testContinueAfterExists(t *testing.T, s store.Store) {
	insert(t, s, rec("alias", "taken", ""))
	update(t, s, func(tx store.Tx) error {
		wantErr(t, "Insert of a taken ID", tx.Insert(rec("alias", "taken", "")), store.ErrExists)
		wantErr(t, "Put of a missing record", tx.Put(&store.Record{Kind: "alias", ID: "no", Version: 1}), store.ErrNotFound)
		return tx.Insert(rec("alias", "free", ""))
	})
	get(t, s, "alias", "free")
}

func testFailedUpdate(t *testing.T, s store.Store) {
	before := insert(t, s, rec("alias", "keep", "p"), rec("alias", "del", "p"))
	err := s.Update(ctx(), func(tx store.Tx) error {
		must(t, "Insert", tx.Insert(rec("alias", "new", "p")))
		k := mustGet(t, tx, "alias", "keep")
		k.Data, k.Parent = []byte("changed"), "q"
		must(t, "Put", tx.Put(k))
		must(t, "Delete", tx.Delete("alias", "del"))
		return fmt.Errorf("wrapped: %w", errBoom)
	})
	wantErr(t, "Update whose function fails", err, errBoom)
	sameRecord(t, "record after failed Put", get(t, s, "alias", "keep"), before[0])
	sameRecord(t, "record after failed Delete", get(t, s, "alias", "del"), before[1])
	wantIDs(t, "List after failed Update", list(t, s, "alias", store.ListOptions{Parent: "p"}), "keep", "del")
	insert(t, s, rec("alias", "new", "")) // the failed Insert left nothing behind
}

func testRetryConflict(t *testing.T, s store.Store) {
	calls := 0
	update(t, s, func(tx store.Tx) error {
		calls++
		must(t, "Insert", tx.Insert(rec("alias", fmt.Sprint("try", calls), "")))
		if calls < 3 {
			return fmt.Errorf("lost a race: %w", store.ErrConflict)
		}
		return nil
	})
	if calls != 3 {
		t.Errorf("fn ran %d times, want 3", calls)
	}
	wantIDs(t, "records after retries", list(t, s, "alias", store.ListOptions{}), "try3")
}

func testGiveUpConflict(t *testing.T, s store.Store) {
	calls := 0
	err := s.Update(ctx(), func(tx store.Tx) error {
		calls++
		return store.ErrConflict
	})
	wantErr(t, "Update that always conflicts", err, store.ErrConflict)
	if calls < 2 || calls > 1000 {
		t.Errorf("fn ran %d times, want a small number above 1", calls)
	}
}

func testStalePut(t *testing.T, s store.Store) {
	insert(t, s, rec("alias", "a", ""))
	stale := get(t, s, "alias", "a")
	fresh := get(t, s, "alias", "a")
	update(t, s, func(tx store.Tx) error { return tx.Put(fresh) })
	calls := 0
	update(t, s, func(tx store.Tx) error {
		calls++
		r := stale // the first attempt uses what a View read earlier
		if calls > 1 {
			r = mustGet(t, tx, "alias", "a")
		}
		r.Data = []byte("mine")
		return tx.Put(r)
	})
	if calls != 2 {
		t.Errorf("fn ran %d times, want 2 (one conflict, one retry)", calls)
	}
	if got := get(t, s, "alias", "a"); got.Version != 3 || string(got.Data) != "mine" {
		t.Errorf("after retried Put: %+v", got)
	}
}

func testViewReadOnly(t *testing.T, s store.Store) {
	insert(t, s, rec("alias", "a", ""))
	s.View(ctx(), func(tx store.Tx) error {
		if err := tx.Insert(rec("alias", "b", "")); err == nil {
			t.Error("Insert inside View succeeded")
		}
		return nil
	})
	wantIDs(t, "List after View", list(t, s, "alias", store.ListOptions{}), "a")
}

func testCancelled(t *testing.T, s store.Store) {
	c, cancel := context.WithCancel(context.Background())
	cancel()
	ran := false
	err := s.Update(c, func(tx store.Tx) error { ran = true; return tx.Insert(rec("a", "b", "")) })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a cancelled context: %v", err)
	}
	err = s.View(c, func(tx store.Tx) error { ran = true; return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("View with a cancelled context: %v", err)
	}
	if ran {
		t.Error("a transaction with a cancelled context ran its function")
	}
}

func testCopies(t *testing.T, s store.Store) {
	r := rec("alias", "a", "p")
	update(t, s, func(tx store.Tx) error {
		if err := tx.Insert(r); err != nil {
			return err
		}
		r.Data[0], r.Parent = 'X', "changed after Insert"
		return nil
	})
	want := get(t, s, "alias", "a")
	if string(want.Data) != "data-a" || want.Parent != "p" {
		t.Fatalf("the store kept the caller's record: %+v", want)
	}
	g := get(t, s, "alias", "a")
	g.Data[0], g.Version, g.Parent = 'X', 42, "x"
	l := list(t, s, "alias", store.ListOptions{})
	l[0].Data[0], l[0].Seq = 'Y', 42
	update(t, s, func(tx store.Tx) error {
		u := mustGet(t, tx, "alias", "a")
		u.Data[0] = 'Z'
		mustList(t, tx, "alias", store.ListOptions{})[0].Data[0] = 'W'
		return nil
	})
	sameRecord(t, "record after callers mutated copies", get(t, s, "alias", "a"), want)
}

// must fails the test if err is not nil.
func must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// mustGet is Get that fails the test on an error.
func mustGet(t testing.TB, tx store.Tx, kind, id string) *store.Record {
	t.Helper()
	r, err := tx.Get(kind, id)
	must(t, "Get "+kind+"/"+id, err)
	return r
}

// mustList is List that fails the test on an error.
func mustList(t testing.TB, tx store.Tx, kind string, opt store.ListOptions) []*store.Record {
	t.Helper()
	rs, err := tx.List(kind, opt)
	must(t, "List "+kind, err)
	return rs
}
