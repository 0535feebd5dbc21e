package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
)

// TestEachVersion checks that EachVersion reports exactly what List returns (IDs, Seqs and
// Versions, in order) for every filter, after inserts, puts and deletes.
func TestEachVersion(t *testing.T) {
	s, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	err = s.Update(ctx, func(tx store.Tx) error {
		for i := range 700 {
			if err := tx.Insert(&store.Record{Kind: "k", ID: fmt.Sprint(i), Parent: fmt.Sprint("p", i%3), Data: []byte("x")}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(ctx, func(tx store.Tx) error {
		for i := 0; i < 700; i += 7 {
			r, err := tx.Get("k", fmt.Sprint(i))
			if err != nil {
				return err
			}
			if err := tx.Put(r); err != nil {
				return err
			}
			if err := tx.Delete("k", fmt.Sprint(i+1)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []store.ListOptions{{}, {Parent: "p1"}, {Parent: "p2", AfterSeq: 300, Limit: 50}, {Limit: 3}, {Parent: "none"}} {
		var want []*store.Record
		s.View(ctx, func(tx store.Tx) error { want, err = tx.List("k", opt); return err })
		var got []store.Record
		if err := s.EachVersion(ctx, "k", opt, func(id string, seq, version int64) {
			got = append(got, store.Record{ID: id, Seq: seq, Version: version})
		}); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%+v: %d versions, List has %d records", opt, len(got), len(want))
		}
		for i, w := range want {
			if g := got[i]; g.ID != w.ID || g.Seq != w.Seq || g.Version != w.Version {
				t.Fatalf("%+v: #%d is %s seq %d v%d, List has %s seq %d v%d", opt, i, g.ID, g.Seq, g.Version, w.ID, w.Seq, w.Version)
			}
		}
	}
	if err := s.EachVersion(ctx, "nothing", store.ListOptions{}, func(string, int64, int64) { t.Error("called for an empty kind") }); err != nil {
		t.Fatal(err)
	}
}
