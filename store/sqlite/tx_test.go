package sqlite

import (
	"context"
	"fmt"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// One transaction writing more keys than writeListScan still sees its own writes, deletes and
// rewrites, in and past the scanned part, and commits exactly them.
func TestLongTransactionSeesItsWrites(t *testing.T) {
	s := openTest(t, t.TempDir())
	const n = 3 * writeListScan
	err := s.Update(context.Background(), func(tx store.Tx) error {
		for i := range n {
			if err := tx.Insert(&store.Record{Kind: "k", ID: fmt.Sprint("r", i), Data: []byte("v1")}); err != nil {
				return err
			}
		}
		for _, i := range []int{1, writeListScan + 3} {
			if err := tx.Delete("k", fmt.Sprint("r", i)); err != nil {
				return err
			}
			if _, err := tx.Get("k", fmt.Sprint("r", i)); err == nil {
				return fmt.Errorf("r%d visible after its delete", i)
			}
		}
		r, err := tx.Get("k", "r2")
		if err != nil {
			return err
		}
		r.Data = []byte("v2")
		if err := tx.Put(r); err != nil {
			return err
		}
		if err := tx.Insert(&store.Record{Kind: "k", ID: "r1", Data: []byte("again")}); err != nil {
			return err
		}
		if rs, err := tx.List("k", store.ListOptions{}); err != nil || len(rs) != n-1 {
			return fmt.Errorf("List in the transaction: %d records, %v; want %d", len(rs), err, n-1)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := state(t, s)
	if len(got) != n-1 || got["k/r2"] != " 2 3 v2" || got["k/r1"] != fmt.Sprintf(" 1 %d again", n+1) {
		t.Errorf("committed %d records; r1 %q, r2 %q", len(got), got["k/r1"], got["k/r2"])
	}
	if _, ok := got[fmt.Sprint("k/r", writeListScan+3)]; ok {
		t.Errorf("deleted record committed")
	}
}
