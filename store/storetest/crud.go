package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

func testGetMissing(t *testing.T, s store.Store) {
	view(t, s, func(tx store.Tx) error {
		r, err := tx.Get("alias", "nope")
		wantErr(t, "Get of a missing record", err, store.ErrNotFound)
		if r != nil {
			t.Errorf("Get of a missing record returned %+v", r)
		}
		return nil
	})
}

func testInsertGet(t *testing.T, s store.Store) {
	r := &store.Record{Kind: "alias", ID: "a1", Parent: "p", Data: []byte(`{"Name":"x"}`), Version: 7, Seq: 99}
	update(t, s, func(tx store.Tx) error { return tx.Insert(r) })
	if r.Version != 1 {
		t.Errorf("Insert set Version %d, want 1", r.Version)
	}
	if r.Seq <= 0 {
		t.Errorf("Insert set Seq %d, want > 0", r.Seq)
	}
	sameRecord(t, "Get after Insert", get(t, s, "alias", "a1"), r)
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Get("build", "a1")
		wantErr(t, "same ID, other kind", err, store.ErrNotFound)
		return nil
	})
}

func testInsertExists(t *testing.T, s store.Store) {
	insert(t, s, rec("alias", "a1", ""))
	err := s.Update(ctx(), func(tx store.Tx) error { return tx.Insert(rec("alias", "a1", "other")) })
	wantErr(t, "second Insert of the same ID", err, store.ErrExists)
	if got := get(t, s, "alias", "a1"); got.Parent != "" || got.Version != 1 {
		t.Errorf("failed Insert changed the record: %+v", got)
	}
	insert(t, s, rec("build", "a1", "")) // the same ID in another kind is another record
}

func testInsertInvalid(t *testing.T, s store.Store) {
	for _, r := range []*store.Record{{Kind: "alias"}, {ID: "x"}} {
		err := s.Update(ctx(), func(tx store.Tx) error { return tx.Insert(r) })
		if err == nil {
			t.Errorf("Insert of %+v succeeded, want an error", r)
		}
	}
}

func testPut(t *testing.T, s store.Store) {
	r := insert(t, s, rec("alias", "a1", "p1"))[0]
	seq := r.Seq
	r.Data, r.Parent = []byte("v2"), "p2"
	update(t, s, func(tx store.Tx) error { return tx.Put(r) })
	if r.Version != 2 || r.Seq != seq {
		t.Errorf("after Put: Version %d Seq %d, want 2 and %d", r.Version, r.Seq, seq)
	}
	sameRecord(t, "Get after Put", get(t, s, "alias", "a1"), r)
	r.Data = []byte("v3")
	update(t, s, func(tx store.Tx) error { return tx.Put(r) })
	sameRecord(t, "Get after second Put", get(t, s, "alias", "a1"), r)
	if r.Version != 3 {
		t.Errorf("Version after two Puts = %d, want 3", r.Version)
	}
}

func testPutConflict(t *testing.T, s store.Store) {
	r := insert(t, s, rec("alias", "a1", ""))[0]
	stale := *r
	update(t, s, func(tx store.Tx) error { return tx.Put(r) })
	stale.Data = []byte("stale")
	err := s.Update(ctx(), func(tx store.Tx) error { return tx.Put(&stale) })
	wantErr(t, "Put with a stale Version", err, store.ErrConflict)
	sameRecord(t, "record after conflicting Put", get(t, s, "alias", "a1"), r)
	future := *r
	future.Version = r.Version + 5
	err = s.Update(ctx(), func(tx store.Tx) error { return tx.Put(&future) })
	wantErr(t, "Put with a future Version", err, store.ErrConflict)
}

func testPutMissing(t *testing.T, s store.Store) {
	err := s.Update(ctx(), func(tx store.Tx) error {
		return tx.Put(&store.Record{Kind: "alias", ID: "nope", Version: 1})
	})
	wantErr(t, "Put of a missing record", err, store.ErrNotFound)
	r := insert(t, s, rec("alias", "gone", ""))[0]
	update(t, s, func(tx store.Tx) error { return tx.Delete("alias", "gone") })
	err = s.Update(ctx(), func(tx store.Tx) error { return tx.Put(r) })
	wantErr(t, "Put of a deleted record", err, store.ErrNotFound)
}

func testDelete(t *testing.T, s store.Store) {
	old := insert(t, s, rec("alias", "a1", ""), rec("alias", "a2", ""))[0]
	update(t, s, func(tx store.Tx) error { return tx.Delete("alias", "a1") })
	view(t, s, func(tx store.Tx) error {
		_, err := tx.Get("alias", "a1")
		wantErr(t, "Get after Delete", err, store.ErrNotFound)
		return nil
	})
	wantIDs(t, "List after Delete", list(t, s, "alias", store.ListOptions{}), "a2")
	err := s.Update(ctx(), func(tx store.Tx) error { return tx.Delete("alias", "a1") })
	wantErr(t, "second Delete", err, store.ErrNotFound)
	again := insert(t, s, rec("alias", "a1", ""))[0]
	if again.Version != 1 || again.Seq <= old.Seq {
		t.Errorf("re-Insert after Delete: Version %d Seq %d, want 1 and > %d", again.Version, again.Seq, old.Seq)
	}
}

func testSeqIncreases(t *testing.T, s store.Store) {
	var last int64
	check := func(r *store.Record) {
		t.Helper()
		if r.Seq <= last {
			t.Errorf("%s/%s got Seq %d after Seq %d", r.Kind, r.ID, r.Seq, last)
		}
		last = r.Seq
	}
	for _, r := range insert(t, s, rec("a", "1", ""), rec("b", "1", ""), rec("a", "2", "")) {
		check(r)
	}
	many := []*store.Record{rec("a", "3", ""), rec("b", "2", ""), rec("a", "4", "")}
	update(t, s, func(tx store.Tx) error { return insertAll(tx, many) })
	for _, r := range many {
		check(r)
	}
	update(t, s, func(tx store.Tx) error { return tx.Delete("a", "4") })
	check(insert(t, s, rec("a", "5", ""))[0]) // a deleted record's Seq is not handed out again
}

func testData(t *testing.T, s store.Store) {
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	empty := &store.Record{Kind: "k", ID: "empty"}
	bin := &store.Record{Kind: "k", ID: "bin", Data: binary}
	insert(t, s, empty, bin)
	if got := get(t, s, "k", "empty"); len(got.Data) != 0 {
		t.Errorf("nil Data came back as %q", got.Data)
	}
	sameRecord(t, "binary Data", get(t, s, "k", "bin"), bin)
}

// insertAll inserts rs in tx, stopping at the first error.
func insertAll(tx store.Tx, rs []*store.Record) error {
	for _, r := range rs {
		if err := tx.Insert(r); err != nil {
			return err
		}
	}
	return nil
}

// errBoom is the error the suite's functions fail with on purpose.
var errBoom = errors.New("storetest: boom")

// testStoreGet checks Store.Get, the read outside a transaction: it sees committed writes,
// answers ErrNotFound, and returns a copy.
func testStoreGet(t *testing.T, s store.Store) {
	_, err := s.Get(ctx(), "alias", "a1")
	wantErr(t, "Store.Get of a missing record", err, store.ErrNotFound)
	r := &store.Record{Kind: "alias", ID: "a1", Parent: "p", Data: []byte(`{"Name":"x"}`)}
	update(t, s, func(tx store.Tx) error { return tx.Insert(r) })
	got, err := s.Get(ctx(), "alias", "a1")
	if err != nil {
		t.Fatalf("Store.Get: %v", err)
	}
	sameRecord(t, "Store.Get after Insert", got, r)
	got.Data[0] = 'X'
	if again, _ := s.Get(ctx(), "alias", "a1"); again.Data[0] != '{' {
		t.Error("changing a record Store.Get returned changed the store")
	}
	update(t, s, func(tx store.Tx) error { return tx.Delete("alias", "a1") })
	_, err = s.Get(ctx(), "alias", "a1")
	wantErr(t, "Store.Get after Delete", err, store.ErrNotFound)
	cancelled, cancel := context.WithCancel(ctx())
	cancel()
	if _, err := s.Get(cancelled, "alias", "a1"); err == nil {
		t.Error("Store.Get with a cancelled context succeeded")
	}
}
