package sqlite

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// TestSeqListModel drives a seqList and a plain sorted slice with the same random inserts,
// removals and replacements, in the patterns the store sees (appends of new Seqs, removals
// at random and from the front, reinsertion of old Seqs), and compares every query.
func TestSeqListModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var l seqList
	var model []*store.Record
	next := int64(0)
	for step := range 20000 {
		switch op := rng.IntN(10); {
		case op < 5 || len(model) == 0: // append a new Seq
			next += 1 + rng.Int64N(3)
			r := &store.Record{Seq: next}
			l.insert(r)
			model = append(model, r)
		case op < 7: // remove at random
			i := rng.IntN(len(model))
			l.remove(model[i].Seq)
			model = slices.Delete(model, i, i+1)
		case op < 8: // remove the oldest
			l.remove(model[0].Seq)
			model = model[1:]
		case op < 9: // insert an old Seq that is free, if any
			seq := rng.Int64N(next + 1)
			if i, found := slices.BinarySearchFunc(model, seq, cmpSeq); !found && seq > 0 {
				r := &store.Record{Seq: seq}
				l.insert(r)
				model = slices.Insert(model, i, r)
			}
		default: // replace
			i := rng.IntN(len(model))
			r := &store.Record{Seq: model[i].Seq, ID: "replaced"}
			l.replace(r)
			model[i] = r
		}
		l.remove(next + 100) // absent: no effect
		if step%97 == 0 || step > 19900 {
			checkSeqList(t, &l, model, rng.Int64N(next+2), rng.IntN(40))
		}
	}
	// Empty it from the middle out.
	for len(model) > 0 {
		i := len(model) / 2
		l.remove(model[i].Seq)
		model = slices.Delete(model, i, i+1)
	}
	checkSeqList(t, &l, model, 0, 0)
	if len(l.chunks) != 0 {
		t.Errorf("empty list keeps %d chunks", len(l.chunks))
	}
}

func cmpSeq(r *store.Record, seq int64) int {
	switch {
	case r.Seq < seq:
		return -1
	case r.Seq > seq:
		return 1
	}
	return 0
}

// checkSeqList compares l with model: its size, chunk invariants, and after(afterSeq, limit).
func checkSeqList(t *testing.T, l *seqList, model []*store.Record, afterSeq int64, limit int) {
	t.Helper()
	if l.len() != len(model) {
		t.Fatalf("len %d, model %d", l.len(), len(model))
	}
	var flat []*store.Record
	for _, ch := range l.chunks {
		if len(ch) == 0 || len(ch) > chunkMax {
			t.Fatalf("chunk of %d records", len(ch))
		}
		flat = append(flat, ch...)
	}
	if !slices.Equal(flat, model) {
		t.Fatalf("contents differ from the model (%d vs %d records)", len(flat), len(model))
	}
	i, _ := slices.BinarySearchFunc(model, afterSeq+1, cmpSeq)
	want := model[i:]
	if limit > 0 {
		want = want[:min(len(want), limit)]
	}
	if got := l.after(afterSeq, limit); !slices.Equal(got, want) {
		t.Fatalf("after(%d, %d): %d records, want %d", afterSeq, limit, len(got), len(want))
	}
}

// BenchmarkSeqListChurn measures the claim pattern on one large kind: remove a record from
// near the front and insert a new one at the end, with 100,000 records held. flat is the one
// sorted slice the store used before seqList, as the baseline.
func BenchmarkSeqListChurn(b *testing.B) {
	const n = 100000
	b.Run("seqList", func(b *testing.B) {
		var l seqList
		for i := range n {
			l.insert(&store.Record{Seq: int64(i + 1)})
		}
		churn(b, n, l.remove, l.insert)
	})
	b.Run("flat", func(b *testing.B) {
		var s []*store.Record
		for i := range n {
			s = append(s, &store.Record{Seq: int64(i + 1)})
		}
		churn(b, n, func(seq int64) {
			i := searchSeq(s, seq)
			s = slices.Delete(s, i, i+1)
		}, func(r *store.Record) {
			i := searchSeq(s, r.Seq)
			s = slices.Insert(s, i, r)
		})
	})
}

// churn moves a record near the front to the end, b.N times.
func churn(b *testing.B, n int64, remove func(int64), insert func(*store.Record)) {
	next, oldest := n, int64(1)
	for b.Loop() {
		remove(oldest)
		oldest++
		next++
		insert(&store.Record{Seq: next})
	}
}
