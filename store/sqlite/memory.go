package sqlite

import (
	"bytes"
	"sort"

	"github.com/hoist-gg/hoist/store"
)

// key addresses one record.
type key struct{ kind, id string }

// table is the in-memory copy of one kind. Records in it are never mutated after they are
// placed there (a write replaces the pointer), so readers may hand out copies of them without
// further locking beyond the store's read lock.
type table struct {
	byID     map[string]*store.Record
	all      []*store.Record            // every record of the kind, in Seq order
	byParent map[string][]*store.Record // records with a non-empty Parent, in Seq order
}

func newTable() *table {
	return &table{byID: map[string]*store.Record{}, byParent: map[string][]*store.Record{}}
}

// memory is every record, by kind.
type memory map[string]*table

// get returns the stored record (not a copy) or nil.
func (m memory) get(kind, id string) *store.Record {
	t := m[kind]
	if t == nil {
		return nil
	}
	return t.byID[id]
}

// list returns the stored records (not copies) selected by opt, in Seq order. The slice
// aliases the index and must not be modified.
func (m memory) list(kind string, opt store.ListOptions) []*store.Record {
	t := m[kind]
	if t == nil {
		return nil
	}
	src := t.all
	if opt.Parent != "" {
		src = t.byParent[opt.Parent]
	}
	if opt.AfterSeq > 0 {
		src = src[searchSeq(src, opt.AfterSeq+1):]
	}
	if opt.Limit > 0 && len(src) > opt.Limit {
		src = src[:opt.Limit]
	}
	return src
}

// set stores r (which the memory now owns), replacing any record with the same kind and ID.
func (m memory) set(r *store.Record) {
	t := m[r.Kind]
	if t == nil {
		t = newTable()
		m[r.Kind] = t
	}
	if old := t.byID[r.ID]; old != nil {
		if old.Seq == r.Seq && old.Parent == r.Parent {
			t.byID[r.ID] = r
			t.all[searchSeq(t.all, r.Seq)] = r
			if r.Parent != "" {
				p := t.byParent[r.Parent]
				p[searchSeq(p, r.Seq)] = r
			}
			return
		}
		m.delete(r.Kind, r.ID)
	}
	t.byID[r.ID] = r
	t.all = insertSorted(t.all, r)
	if r.Parent != "" {
		t.byParent[r.Parent] = insertSorted(t.byParent[r.Parent], r)
	}
}

// delete removes a record if it is there.
func (m memory) delete(kind, id string) {
	t := m[kind]
	if t == nil {
		return
	}
	old := t.byID[id]
	if old == nil {
		return
	}
	delete(t.byID, id)
	t.all = removeSorted(t.all, old.Seq)
	if old.Parent != "" {
		p := removeSorted(t.byParent[old.Parent], old.Seq)
		if len(p) == 0 {
			delete(t.byParent, old.Parent)
		} else {
			t.byParent[old.Parent] = p
		}
	}
}

// searchSeq returns the index of the first record in s with Seq >= seq.
func searchSeq(s []*store.Record, seq int64) int {
	return sort.Search(len(s), func(i int) bool { return s[i].Seq >= seq })
}

// insertSorted inserts r into s at its Seq position; new records usually go at the end.
func insertSorted(s []*store.Record, r *store.Record) []*store.Record {
	if n := len(s); n == 0 || s[n-1].Seq < r.Seq {
		return append(s, r)
	}
	i := searchSeq(s, r.Seq)
	s = append(s, nil)
	copy(s[i+1:], s[i:])
	s[i] = r
	return s
}

// removeSorted removes the record with the given Seq from s.
func removeSorted(s []*store.Record, seq int64) []*store.Record {
	i := searchSeq(s, seq)
	if i == len(s) || s[i].Seq != seq {
		return s
	}
	copy(s[i:], s[i+1:])
	s[len(s)-1] = nil
	return s[:len(s)-1]
}

// clone returns a copy of r that shares no memory with it.
func clone(r *store.Record) *store.Record {
	c := *r
	c.Data = bytes.Clone(r.Data)
	return &c
}

// cloneAll returns copies of rs in a new slice.
func cloneAll(rs []*store.Record) []*store.Record {
	out := make([]*store.Record, len(rs))
	for i, r := range rs {
		out[i] = clone(r)
	}
	return out
}
