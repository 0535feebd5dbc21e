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
	all      seqList             // every record of the kind, in Seq order
	byParent map[string]*seqList // records with a non-empty Parent, in Seq order
}

func newTable() *table {
	return &table{byID: map[string]*store.Record{}, byParent: map[string]*seqList{}}
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

// list returns the stored records (not copies) selected by opt, in Seq order, in a new slice
// whose elements must not be modified.
func (m memory) list(kind string, opt store.ListOptions) []*store.Record {
	t := m[kind]
	if t == nil {
		return nil
	}
	src := &t.all
	if opt.Parent != "" {
		src = t.byParent[opt.Parent]
	}
	return src.after(opt.AfterSeq, opt.Limit)
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
			t.all.replace(r)
			if r.Parent != "" {
				t.byParent[r.Parent].replace(r)
			}
			return
		}
		m.delete(r.Kind, r.ID)
	}
	t.byID[r.ID] = r
	t.all.insert(r)
	if r.Parent != "" {
		p := t.byParent[r.Parent]
		if p == nil {
			p = &seqList{}
			t.byParent[r.Parent] = p
		}
		p.insert(r)
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
	t.all.remove(old.Seq)
	if old.Parent != "" {
		p := t.byParent[old.Parent]
		p.remove(old.Seq)
		if p.len() == 0 {
			delete(t.byParent, old.Parent)
		}
	}
}

// searchSeq returns the index of the first record in s with Seq >= seq.
func searchSeq(s []*store.Record, seq int64) int {
	return sort.Search(len(s), func(i int) bool { return s[i].Seq >= seq })
}

// clone returns a copy of r that shares no memory with it.
func clone(r *store.Record) *store.Record {
	c := *r
	c.Data = bytes.Clone(r.Data)
	return &c
}

// cloneAll replaces the records of rs, a slice the caller owns, by copies, and returns rs.
// The copies share two allocations, one for the records and one for their documents (each
// capped to its own length, so an append to one cannot reach another); a List that returns
// many records costs two allocations instead of two per record.
func cloneAll(rs []*store.Record) []*store.Record {
	if rs == nil {
		return []*store.Record{}
	}
	n := 0
	for _, r := range rs {
		n += len(r.Data)
	}
	recs := make([]store.Record, len(rs))
	data := make([]byte, 0, n)
	for i, r := range rs {
		recs[i] = *r
		if r.Data != nil {
			start := len(data)
			data = append(data, r.Data...)
			recs[i].Data = data[start:len(data):len(data)]
		}
		rs[i] = &recs[i]
	}
	return rs
}
