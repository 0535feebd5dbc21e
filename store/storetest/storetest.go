// Package storetest is the one conformance suite every store.Store implementation passes, plus
// a crash test and benchmarks shared by them. Store packages call it from their tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) storetest.Opener {
//			dir := t.TempDir()
//			return func() (store.Store, error) { return sqlite.Open(dir) }
//		})
//	}
//
// Only tests import this package.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// Opener opens a store on one set of backing data (a directory, a database). Calling it again
// after the previous store was closed reopens the same data.
type Opener func() (store.Store, error)

// Run runs the conformance suite. fresh is called once per subtest and returns an Opener over
// new, empty backing data that no other subtest sees.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetMissing", testGetMissing},
		{"InsertGet", testInsertGet},
		{"StoreGet", testStoreGet},
		{"InsertExists", testInsertExists},
		{"InsertInvalid", testInsertInvalid},
		{"Put", testPut},
		{"PutConflict", testPutConflict},
		{"PutMissing", testPutMissing},
		{"Delete", testDelete},
		{"SeqIncreases", testSeqIncreases},
		{"EmptyAndBinaryData", testData},
		{"ListOrderAndKinds", testListOrder},
		{"ListFilters", testListFilters},
		{"ListPagination", testListPagination},
		{"ListParentChange", testListParentChange},
		{"UpdateSeesOwnWrites", testOwnWrites},
		{"UpdateListSeesOwnWrites", testOwnWritesList},
		{"UpdateListLimitWithOwnDeletes", testOwnDeletesLimit},
		{"UpdateContinuesAfterErrExists", testContinueAfterExists},
		{"FailedUpdateLeavesNothing", testFailedUpdate},
		{"UpdateRetriesConflict", testRetryConflict},
		{"UpdateGivesUpOnConflict", testGiveUpConflict},
		{"StalePutConflicts", testStalePut},
		{"ViewIsReadOnly", testViewReadOnly},
		{"CancelledContext", testCancelled},
		{"ReturnedRecordsAreCopies", testCopies},
		{"ViewConsistency", testViewConsistency},
		{"ConcurrentCounter", testCounter},
		{"ConcurrentCounterCompareAndSetOnly", testCounterCompareAndSetOnly},
		{"CompareAndSetOnly/UpdateSeesOwnWrites", casOnly(testOwnWrites)},
		{"CompareAndSetOnly/UpdateListSeesOwnWrites", casOnly(testOwnWritesList)},
		{"CompareAndSetOnly/UpdateListLimitWithOwnDeletes", casOnly(testOwnDeletesLimit)},
		{"CompareAndSetOnly/FailedUpdateLeavesNothing", casOnly(testFailedUpdate)},
		{"CompareAndSetOnly/UpdateRetriesConflict", casOnly(testRetryConflict)},
		{"CompareAndSetOnly/StalePutConflicts", casOnly(testStalePut)},
		{"CompareAndSetOnly/ReturnedRecordsAreCopies", casOnly(testCopies)},
		{"CompareAndSetOnly/WritesAllOrNone", testCASAllOrNone},
		{"ConcurrentInsertSameID", testInsertRace},
		{"VersionReads", testVersions},
		{"Watch", testWatch},
		{"Blobs", testBlobs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, mustOpen(t, fresh(t)))
		})
	}
	t.Run("Reopen", func(t *testing.T) { testReopen(t, fresh(t)) })
}

// mustOpen opens a store and closes it when the test ends.
func mustOpen(t testing.TB, open Opener) store.Store {
	t.Helper()
	s, err := open()
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	return s
}

// update runs fn in an Update and fails the test on an error.
func update(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.Update(context.Background(), fn); err != nil {
		t.Fatalf("Update: %v", err)
	}
}

// view runs fn in a View and fails the test on an error.
func view(t testing.TB, s store.Store, fn func(store.Tx) error) {
	t.Helper()
	if err := s.View(context.Background(), fn); err != nil {
		t.Fatalf("View: %v", err)
	}
}

// insert inserts the records, each in its own Update, and returns them as stored.
func insert(t testing.TB, s store.Store, recs ...*store.Record) []*store.Record {
	t.Helper()
	for _, r := range recs {
		update(t, s, func(tx store.Tx) error { return tx.Insert(r) })
	}
	return recs
}

// get reads one record in a View; it fails the test if the record is missing.
func get(t testing.TB, s store.Store, kind, id string) *store.Record {
	t.Helper()
	var r *store.Record
	view(t, s, func(tx store.Tx) (err error) {
		r, err = tx.Get(kind, id)
		return err
	})
	return r
}

// list runs List in a View.
func list(t testing.TB, s store.Store, kind string, opt store.ListOptions) []*store.Record {
	t.Helper()
	var rs []*store.Record
	view(t, s, func(tx store.Tx) (err error) {
		rs, err = tx.List(kind, opt)
		return err
	})
	return rs
}

// rec builds a record with Data equal to its ID.
func rec(kind, id, parent string) *store.Record {
	return &store.Record{Kind: kind, ID: id, Parent: parent, Data: []byte("data-" + id)}
}

// ids returns the IDs of rs.
func ids(rs []*store.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// wantIDs fails the test unless rs holds exactly the IDs want, in that order.
func wantIDs(t testing.TB, what string, rs []*store.Record, want ...string) {
	t.Helper()
	if got := ids(rs); !slices.Equal(got, want) {
		t.Errorf("%s: got IDs %q, want %q", what, got, want)
	}
}

// wantErr fails the test unless errors.Is(err, want).
func wantErr(t testing.TB, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v, want %v", what, err, want)
	}
}

// sameRecord fails the test unless got equals want in every field.
func sameRecord(t testing.TB, what string, got, want *store.Record) {
	t.Helper()
	if err := diff(got, want); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func diff(got, want *store.Record) error {
	switch {
	case got == nil:
		return errors.New("got no record")
	case got.Kind != want.Kind || got.ID != want.ID:
		return fmt.Errorf("got %s/%s, want %s/%s", got.Kind, got.ID, want.Kind, want.ID)
	case got.Parent != want.Parent:
		return fmt.Errorf("Parent = %q, want %q", got.Parent, want.Parent)
	case got.Version != want.Version:
		return fmt.Errorf("Version = %d, want %d", got.Version, want.Version)
	case got.Seq != want.Seq:
		return fmt.Errorf("Seq = %d, want %d", got.Seq, want.Seq)
	case string(got.Data) != string(want.Data):
		return fmt.Errorf("Data = %q, want %q", got.Data, want.Data)
	}
	return nil
}
