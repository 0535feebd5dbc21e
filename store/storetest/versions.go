package storetest

import (
	"context"
	"errors"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// versionLister and versionReader are the optional version reads both stores offer outside
// store.Store (EachVersion, VersionOf); a store that has them must agree with List and Get.
type versionLister interface {
	EachVersion(ctx context.Context, kind string, opt store.ListOptions, fn func(id string, seq, version int64)) error
}

type versionReader interface {
	VersionOf(ctx context.Context, kind, id string) (seq, version int64, err error)
}

// testVersions checks EachVersion against List and VersionOf against Get, for the stores that
// have them.
func testVersions(t *testing.T, s store.Store) {
	vl, okL := s.(versionLister)
	vr, okR := s.(versionReader)
	if !okL && !okR {
		t.Skip("the store has no version reads")
	}
	insert(t, s, rec("alias", "a", "p"), rec("alias", "b", "q"), rec("alias", "c", "p"), rec("build", "x", "p"))
	update(t, s, func(tx store.Tx) error {
		r := mustGet(t, tx, "alias", "c")
		return tx.Put(r)
	})
	ctx := context.Background()
	for _, opt := range []store.ListOptions{{}, {Parent: "p"}, {Parent: "p", Limit: 1}, {AfterSeq: list(t, s, "alias", store.ListOptions{})[0].Seq}} {
		want := list(t, s, "alias", opt)
		if !okL {
			break
		}
		var got []*store.Record
		must(t, "EachVersion", vl.EachVersion(ctx, "alias", opt, func(id string, seq, version int64) {
			got = append(got, &store.Record{ID: id, Seq: seq, Version: version})
		}))
		if len(got) != len(want) {
			t.Fatalf("EachVersion %+v: %d records, List %d", opt, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Seq != want[i].Seq || got[i].Version != want[i].Version {
				t.Errorf("EachVersion %+v [%d] = %s/%d/%d, List has %s/%d/%d", opt, i,
					got[i].ID, got[i].Seq, got[i].Version, want[i].ID, want[i].Seq, want[i].Version)
			}
		}
	}
	if !okR {
		return
	}
	r, err := s.Get(ctx, "alias", "c")
	must(t, "Get", err)
	if seq, version, err := vr.VersionOf(ctx, "alias", "c"); err != nil || seq != r.Seq || version != r.Version {
		t.Errorf("VersionOf = %d, %d, %v; Get has %d, %d", seq, version, err, r.Seq, r.Version)
	}
	if _, _, err := vr.VersionOf(ctx, "alias", "nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("VersionOf of a missing record: %v, want ErrNotFound", err)
	}
}
