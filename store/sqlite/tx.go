package sqlite

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/hoist-gg/hoist/store"
)

// errTxDone is returned when a Tx is used after its function returned.
var errTxDone = errors.New("store: transaction used after its function returned")

// errInvalid is returned for records without a kind or ID.
var errInvalid = errors.New("store: record needs a kind and an ID")

// errReadOnly is returned by writes inside View.
var errReadOnly = errors.New("store: write in a read-only transaction")

func notFound(kind, id string) error { return fmt.Errorf("%w: %s %q", store.ErrNotFound, kind, id) }

// viewTx reads the in-memory state under the store's read lock.
type viewTx struct {
	mem  memory
	done bool
}

func (t *viewTx) Get(kind, id string) (*store.Record, error) {
	if t.done {
		return nil, errTxDone
	}
	r := t.mem.get(kind, id)
	if r == nil {
		return nil, notFound(kind, id)
	}
	return clone(r), nil
}

func (t *viewTx) List(kind string, opt store.ListOptions) ([]*store.Record, error) {
	if t.done {
		return nil, errTxDone
	}
	return cloneAll(t.mem.list(kind, opt)), nil
}

func (t *viewTx) Insert(*store.Record) error   { return errReadOnly }
func (t *viewTx) Put(*store.Record) error      { return errReadOnly }
func (t *viewTx) Delete(kind, id string) error { return errReadOnly }

// layer is a set of uncommitted writes by kind and ID: the final state of each key written,
// nil for a delete.
type layer map[string]map[string]*store.Record

// lookup returns the write of a key and whether there is one.
func (l layer) lookup(kind, id string) (*store.Record, bool) {
	r, ok := l[kind][id]
	return r, ok
}

// set records the write of a key; r nil is a delete.
func (l layer) set(kind, id string, r *store.Record) {
	m := l[kind]
	if m == nil {
		m = map[string]*store.Record{}
		l[kind] = m
	}
	m[id] = r
}

// merge adds every write of src to l, replacing l's writes of the same keys.
func (l layer) merge(src *writeList) {
	for _, w := range src.list {
		l.set(w.kind, w.id, w.rec)
	}
}

// writeList is one transaction's writes in the order of their keys' first write: the final
// state of each key written, nil for a delete. A transaction usually writes a few records, so
// the list is searched directly, sparing every transaction the maps of a layer; past
// writeListScan entries it keeps a map from key to position.
type writeList struct {
	list  []keyedWrite
	index map[key]int
}

// writeListScan is the longest writeList searched without its map.
const writeListScan = 16

// keyedWrite is one entry of a writeList.
type keyedWrite struct {
	kind, id string
	rec      *store.Record
}

// find returns the position of a key's write, or -1.
func (l *writeList) find(kind, id string) int {
	if l.index != nil {
		if i, ok := l.index[key{kind, id}]; ok {
			return i
		}
		return -1
	}
	for i := range l.list {
		if w := &l.list[i]; w.id == id && w.kind == kind {
			return i
		}
	}
	return -1
}

// lookup returns the write of a key and whether there is one.
func (l *writeList) lookup(kind, id string) (*store.Record, bool) {
	if i := l.find(kind, id); i >= 0 {
		return l.list[i].rec, true
	}
	return nil, false
}

// set records the write of a key; r nil is a delete.
func (l *writeList) set(kind, id string, r *store.Record) {
	if i := l.find(kind, id); i >= 0 {
		l.list[i].rec = r
		return
	}
	l.list = append(l.list, keyedWrite{kind: kind, id: id, rec: r})
	switch {
	case l.index != nil:
		l.index[key{kind, id}] = len(l.list) - 1
	case len(l.list) > writeListScan:
		l.index = make(map[key]int, 2*len(l.list))
		for i, w := range l.list {
			l.index[key{w.kind, w.id}] = i
		}
	}
}

// upserts returns the records of l that are inserted or replaced, in Seq order, so that
// memory.set mostly appends.
func (l layer) upserts() []*store.Record {
	var out []*store.Record
	for _, m := range l {
		for _, r := range m {
			if r != nil {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, bySeq)
	return out
}

// updateTx is the transaction of one Update function in a group commit. Its writes go to its
// own layer; its reads look at that layer, then at the writes of the functions before it in
// the batch, then at the committed in-memory state. Only the committer touches memory, so it
// reads mem without the read lock.
type updateTx struct {
	mem    memory
	batch  layer     // the writes of the batch's earlier functions that succeeded
	seq    int64     // the last Seq handed out, including by this transaction
	writes writeList // this function's writes
	done   bool
}

// get returns the record as this transaction sees it (not a copy), or nil.
func (t *updateTx) get(kind, id string) *store.Record {
	if r, ok := t.writes.lookup(kind, id); ok {
		return r
	}
	if r, ok := t.batch.lookup(kind, id); ok {
		return r
	}
	return t.mem.get(kind, id)
}

// written reports whether the batch or this transaction wrote the key.
func (t *updateTx) written(kind, id string) bool {
	if _, ok := t.writes.lookup(kind, id); ok {
		return true
	}
	_, ok := t.batch.lookup(kind, id)
	return ok
}

func (t *updateTx) Get(kind, id string) (*store.Record, error) {
	if t.done {
		return nil, errTxDone
	}
	r := t.get(kind, id)
	if r == nil {
		return nil, notFound(kind, id)
	}
	return clone(r), nil
}

func (t *updateTx) Insert(r *store.Record) error {
	if t.done {
		return errTxDone
	}
	if r.Kind == "" || r.ID == "" {
		return errInvalid
	}
	if t.get(r.Kind, r.ID) != nil {
		return fmt.Errorf("%w: %s %q", store.ErrExists, r.Kind, r.ID)
	}
	t.seq++
	r.Version, r.Seq = 1, t.seq
	t.writes.set(r.Kind, r.ID, clone(r))
	return nil
}

func (t *updateTx) Put(r *store.Record) error {
	if t.done {
		return errTxDone
	}
	cur := t.get(r.Kind, r.ID)
	if cur == nil {
		return notFound(r.Kind, r.ID)
	}
	if cur.Version != r.Version {
		return fmt.Errorf("%w: %s %q is at version %d, not %d",
			store.ErrConflict, r.Kind, r.ID, cur.Version, r.Version)
	}
	r.Version, r.Seq = cur.Version+1, cur.Seq
	t.writes.set(r.Kind, r.ID, clone(r))
	return nil
}

func (t *updateTx) Delete(kind, id string) error {
	if t.done {
		return errTxDone
	}
	if t.get(kind, id) == nil {
		return notFound(kind, id)
	}
	t.writes.set(kind, id, nil)
	return nil
}

// List merges the committed records with the batch's and this transaction's writes of the
// kind.
func (t *updateTx) List(kind string, opt store.ListOptions) ([]*store.Record, error) {
	if t.done {
		return nil, errTxDone
	}
	mine, touched := t.uncommitted(kind, opt)
	if touched == 0 {
		return cloneAll(t.mem.list(kind, opt)), nil
	}
	// Each written key can hide at most one committed record, so touched extra committed
	// records are enough to fill the limit after the merge.
	baseOpt := opt
	if opt.Limit > 0 {
		baseOpt.Limit = opt.Limit + touched
	}
	out := mine
	for _, r := range t.mem.list(kind, baseOpt) {
		if !t.written(kind, r.ID) {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, bySeq)
	if opt.Limit > 0 && len(out) > opt.Limit {
		out = out[:opt.Limit]
	}
	return cloneAll(out), nil
}

// uncommitted returns the live records of the kind that the batch or this transaction wrote
// and that match opt, and how many keys of the kind they wrote (deletes included).
func (t *updateTx) uncommitted(kind string, opt store.ListOptions) (mine []*store.Record, touched int) {
	for _, w := range t.writes.list {
		if w.kind != kind {
			continue
		}
		touched++
		if w.rec != nil && matches(w.rec, opt) {
			mine = append(mine, w.rec)
		}
	}
	for id, r := range t.batch[kind] {
		if _, own := t.writes.lookup(kind, id); own {
			continue
		}
		touched++
		if r != nil && matches(r, opt) {
			mine = append(mine, r)
		}
	}
	return mine, touched
}

// matches reports whether r passes opt's filters.
func matches(r *store.Record, opt store.ListOptions) bool {
	return (opt.Parent == "" || r.Parent == opt.Parent) && r.Seq > opt.AfterSeq
}

// bySeq orders records by Seq.
func bySeq(a, b *store.Record) int { return cmp.Compare(a.Seq, b.Seq) }
