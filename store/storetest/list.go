package storetest

import (
	"fmt"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

func testListOrder(t *testing.T, s store.Store) {
	wantIDs(t, "List of an empty kind", list(t, s, "alias", store.ListOptions{}))
	// IDs in reverse alphabetical order, so that sorting by ID would be caught.
	insert(t, s, rec("alias", "z", ""), rec("build", "y", ""), rec("alias", "x", ""), rec("alias", "w", ""))
	all := list(t, s, "alias", store.ListOptions{})
	wantIDs(t, "List", all, "z", "x", "w")
	for i := 1; i < len(all); i++ {
		if all[i].Seq <= all[i-1].Seq {
			t.Errorf("List not in Seq order: %d then %d", all[i-1].Seq, all[i].Seq)
		}
	}
	sameRecord(t, "List element", all[0], get(t, s, "alias", "z"))
	wantIDs(t, "List of another kind", list(t, s, "build", store.ListOptions{}), "y")
}

func testListFilters(t *testing.T, s store.Store) {
	rs := insert(t, s,
		rec("gs", "g1", "f1"), rec("gs", "g2", "f2"), rec("gs", "g3", "f1"),
		rec("gs", "g4", ""), rec("gs", "g5", "f1"), rec("other", "o1", "f1"))
	cases := []struct {
		opt  store.ListOptions
		want []string
	}{
		{store.ListOptions{Parent: "f1"}, []string{"g1", "g3", "g5"}},
		{store.ListOptions{Parent: "f2"}, []string{"g2"}},
		{store.ListOptions{Parent: "none"}, nil},
		{store.ListOptions{AfterSeq: rs[1].Seq}, []string{"g3", "g4", "g5"}},
		{store.ListOptions{AfterSeq: rs[4].Seq}, nil},
		{store.ListOptions{Limit: 2}, []string{"g1", "g2"}},
		{store.ListOptions{Limit: 10}, []string{"g1", "g2", "g3", "g4", "g5"}},
		{store.ListOptions{Parent: "f1", AfterSeq: rs[0].Seq}, []string{"g3", "g5"}},
		{store.ListOptions{Parent: "f1", AfterSeq: rs[0].Seq, Limit: 1}, []string{"g3"}},
		{store.ListOptions{AfterSeq: rs[0].Seq, Limit: 2}, []string{"g2", "g3"}},
	}
	for _, c := range cases {
		wantIDs(t, fmt.Sprintf("List(%+v)", c.opt), list(t, s, "gs", c.opt), c.want...)
	}
}

func testListPagination(t *testing.T, s store.Store) {
	var want []string
	for i := range 23 {
		id := fmt.Sprintf("r%02d", i)
		want = append(want, id)
		insert(t, s, rec("page", id, "p"))
	}
	var got []string
	opt := store.ListOptions{Parent: "p", Limit: 5}
	for pages := 0; ; pages++ {
		page := list(t, s, "page", opt)
		if len(page) == 0 {
			break
		}
		if pages > 10 || len(page) > opt.Limit {
			t.Fatalf("pagination runs away: page %d has %d records", pages, len(page))
		}
		got = append(got, ids(page)...)
		opt.AfterSeq = page[len(page)-1].Seq
	}
	wantIDs(t, "paged List", recordsWithIDs(got), want...)
}

func testListParentChange(t *testing.T, s store.Store) {
	rs := insert(t, s, rec("gs", "a", "f1"), rec("gs", "b", "f1"), rec("gs", "c", "f2"))
	a := rs[0]
	a.Parent = "f2"
	update(t, s, func(tx store.Tx) error { return tx.Put(a) })
	wantIDs(t, "old parent", list(t, s, "gs", store.ListOptions{Parent: "f1"}), "b")
	wantIDs(t, "new parent", list(t, s, "gs", store.ListOptions{Parent: "f2"}), "a", "c")
	a.Parent = ""
	update(t, s, func(tx store.Tx) error { return tx.Put(a) })
	wantIDs(t, "no parent", list(t, s, "gs", store.ListOptions{Parent: "f2"}), "c")
	wantIDs(t, "all", list(t, s, "gs", store.ListOptions{}), "a", "b", "c")
}

// recordsWithIDs wraps IDs in records, for wantIDs.
func recordsWithIDs(ids []string) []*store.Record {
	out := make([]*store.Record, len(ids))
	for i, id := range ids {
		out[i] = &store.Record{ID: id}
	}
	return out
}
