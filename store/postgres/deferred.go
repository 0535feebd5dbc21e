package postgres

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/hoist-gg/hoist/store"
)

// Updates marked store.CompareAndSetOnly run as a deferredTx: no transaction surrounds their
// reads, each of which is one statement on the pool (or the read cache, readcache.go); their
// writes are queued and applied when the function returns, in one call of hoist_apply
// (schema.go, applyqueue.go) that runs them in order, all or none, with the writes of the
// Updates queued beside them. A
// write that misses (a stale version, a record gone, an ID taken) raises an error there,
// which rolls everything back. A claim therefore costs its uncached reads plus one round trip
// and one statement for all its writes, instead of BEGIN, reads, one round trip per write and
// COMMIT.

// noDataFound is the SQLSTATE hoist_apply raises for a record that is not there.
const noDataFound = "P0002"

// A queued write's kind.
const (
	opInsert = iota
	opPut
	opDelete
)

// write is one queued write: the record as the function wrote it, the version a Put expects
// to find, and the caller's record, whose Seq is set when the batch commits.
type write struct {
	op     int
	rec    store.Record // a copy taken when the function wrote it
	prev   int64
	target *store.Record
}

// deferredTx is the store.Tx of a CompareAndSetOnly Update.
type deferredTx struct {
	ctx    context.Context
	s      *Store
	writes []write
	reads  []store.Record // what Get returned of committed records (no Data): checked at commit
	fresh  bool           // Get reads the database, not the cache (readcache.go)
	cached bool           // some Get was answered from the cache
	done   bool
}

// updateDeferred runs one attempt of a CompareAndSetOnly Update.
func (s *Store) updateDeferred(ctx context.Context, fn func(store.Tx) error) error {
	t := &deferredTx{ctx: ctx, s: s}
	err := t.run(fn)
	if err != nil && t.cached {
		t = &deferredTx{ctx: ctx, s: s, fresh: true} // no refusal on a stale copy
		err = t.run(fn)
	}
	if err != nil || len(t.writes) == 0 && !t.cached {
		return err
	}
	return t.commit()
}

// run runs fn on t.
func (t *deferredTx) run(fn func(store.Tx) error) error {
	err := fn(t)
	t.done = true
	return err
}

// commit checks the reads and applies every queued write in one call of hoist_apply. The
// cache learns the records written, and forgets every record of an Update that failed.
func (t *deferredTx) commit() error {
	var a applyArgs
	for _, r := range t.checks() {
		a.add('c', &r, r.Version, -1)
	}
	for i := range t.writes {
		t.addWrite(&a, i)
	}
	seqs, err := t.s.apply(t.ctx, a)
	if err != nil {
		t.s.cache.drop(t.keys())
		return fmt.Errorf("postgres store: commit: %w", classify(err))
	}
	t.learn(a.writeSeqs(seqs, len(t.writes)))
	return nil
}

// addWrite adds the queued write i to a, and its announcement. A Delete that the next write
// of the same record re-inserts becomes one replacement (op 'r': the record's row rewritten
// with a new Seq and version 1, as delete and insert would leave it) at the Insert's place.
func (t *deferredTx) addWrite(a *applyArgs, i int) {
	w := &t.writes[i]
	switch {
	case w.op == opDelete && t.reinserted(i):
		return
	case w.op == opInsert && i > 0 && t.replaces(i):
		a.add('r', &w.rec, 0, i)
	default:
		a.add("ipd"[w.op], &w.rec, w.prev, i)
	}
	if w.op != opDelete && store.Announced(w.rec.Kind) {
		a.add('n', &store.Record{Parent: payloadOf(&w.rec)}, 0, -1)
	}
}

// reinserted reports whether the next write of the record that write i deletes inserts it.
func (t *deferredTx) reinserted(i int) bool {
	r := &t.writes[i].rec
	for j := i + 1; j < len(t.writes); j++ {
		if w := &t.writes[j]; w.rec.Kind == r.Kind && w.rec.ID == r.ID {
			return w.op == opInsert
		}
	}
	return false
}

// replaces reports whether the Insert i follows a Delete of its record (reinserted).
func (t *deferredTx) replaces(i int) bool {
	r := &t.writes[i].rec
	for j := i - 1; j >= 0; j-- {
		if w := &t.writes[j]; w.rec.Kind == r.Kind && w.rec.ID == r.ID {
			return w.op == opDelete
		}
	}
	return false
}

// applyArgs are hoist_apply's arguments: one operation per position.
type applyArgs struct {
	ops        []byte
	kinds, ids []string
	parents    []string
	versions   []int64
	datas      [][]byte
	write      []int // the queued write each operation applies, or -1
}

// add appends an operation on r (a check or write at version, or an announcement of
// r.Parent) for queued write w (-1 for none).
func (a *applyArgs) add(op byte, r *store.Record, version int64, w int) {
	a.ops = append(a.ops, op)
	a.kinds, a.ids, a.parents = append(a.kinds, r.Kind), append(a.ids, r.ID), append(a.parents, r.Parent)
	a.versions, a.datas = append(a.versions, version), append(a.datas, nonNil(r.Data))
	a.write = append(a.write, w)
}

// append adds b's operations after a's.
func (a *applyArgs) append(b *applyArgs) {
	a.ops = append(a.ops, b.ops...)
	a.kinds, a.ids, a.parents = append(a.kinds, b.kinds...), append(a.ids, b.ids...), append(a.parents, b.parents...)
	a.versions, a.datas = append(a.versions, b.versions...), append(a.datas, b.datas...)
}

// writeSeqs gives each of n queued writes the Seq hoist_apply answered for it (0 for a Delete
// folded into a replacement).
func (a *applyArgs) writeSeqs(seqs []int64, n int) []int64 {
	out := make([]int64, n)
	for i, w := range a.write {
		if w >= 0 && i < len(seqs) {
			out[w] = seqs[i]
		}
	}
	return out
}

// checks are the reads whose records the function does not Put (a Put checks the version
// itself).
func (t *deferredTx) checks() []store.Record {
	var out []store.Record
	for _, r := range t.reads {
		put := slices.ContainsFunc(t.writes, func(w write) bool {
			return w.op == opPut && w.rec.Kind == r.Kind && w.rec.ID == r.ID
		})
		if !put {
			out = append(out, r)
		}
	}
	return out
}

// keys names every record the function read or wrote.
func (t *deferredTx) keys() []recordKey {
	keys := make([]recordKey, 0, len(t.reads)+len(t.writes))
	for _, r := range t.reads {
		keys = append(keys, recordKey{r.Kind, r.ID})
	}
	for _, w := range t.writes {
		keys = append(keys, recordKey{w.rec.Kind, w.rec.ID})
	}
	return keys
}

// learn sets the Seq of the records written and puts them in the cache (a deleted one leaves
// it).
func (t *deferredTx) learn(seqs []int64) {
	for i := range t.writes {
		w := &t.writes[i]
		if w.op == opDelete {
			t.s.cache.drop([]recordKey{{w.rec.Kind, w.rec.ID}})
			continue
		}
		w.rec.Seq = seqs[i]
		w.target.Seq = seqs[i]
		t.s.cache.put(&w.rec)
	}
}

func (t *deferredTx) check() error {
	if t.done {
		return errTxDone
	}
	return nil
}

// Get returns the function's own latest write of the record, or else the committed record.
func (t *deferredTx) Get(kind, id string) (*store.Record, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	if w := t.latest(kind, id); w != nil {
		if w.op == opDelete {
			return nil, notFound(kind, id)
		}
		return w.copy(), nil
	}
	r, ok := (*store.Record)(nil), false
	if !t.fresh {
		r, ok = t.s.cache.get(kind, id)
		t.cached = t.cached || ok
	}
	if !ok {
		var err error
		if r, err = t.s.Get(t.ctx, kind, id); err != nil {
			return nil, err
		}
		t.s.cache.put(r)
	}
	t.reads = append(t.reads, store.Record{Kind: kind, ID: id, Version: r.Version})
	return r, nil
}

// latest is the last queued write of a record, or nil.
func (t *deferredTx) latest(kind, id string) *write {
	for i := len(t.writes) - 1; i >= 0; i-- {
		if r := &t.writes[i].rec; r.Kind == kind && r.ID == id {
			return &t.writes[i]
		}
	}
	return nil
}

// copy is the record as the write leaves it.
func (w *write) copy() *store.Record {
	r := w.rec
	r.Data = slices.Clone(r.Data)
	return &r
}

// queue adds a write of r (a copy of it as it is now).
func (t *deferredTx) queue(op int, r *store.Record, prev int64) {
	w := write{op: op, rec: *r, prev: prev}
	w.rec.Data = slices.Clone(r.Data)
	if op != opDelete {
		w.target = r
	}
	t.writes = append(t.writes, w)
}

// Insert queues the insert; a taken ID fails the Update with store.ErrExists, unless the
// function deleted the record before.
func (t *deferredTx) Insert(r *store.Record) error {
	if err := t.check(); err != nil {
		return err
	}
	if r.Kind == "" || r.ID == "" {
		return errInvalid
	}
	if w := t.latest(r.Kind, r.ID); w != nil && w.op != opDelete {
		return fmt.Errorf("%w: %s %q", store.ErrExists, r.Kind, r.ID)
	}
	r.Version, r.Seq = 1, 0
	t.queue(opInsert, r, 0)
	return nil
}

// Put queues the compare-and-set; a stale version fails the Update with store.ErrConflict
// (and it runs the function again), a record gone with store.ErrNotFound.
func (t *deferredTx) Put(r *store.Record) error {
	if err := t.check(); err != nil {
		return err
	}
	if w := t.latest(r.Kind, r.ID); w != nil {
		switch {
		case w.op == opDelete:
			return notFound(r.Kind, r.ID)
		case w.rec.Version != r.Version:
			return fmt.Errorf("%w: %s %q is at version %d, not %d", store.ErrConflict, r.Kind, r.ID, w.rec.Version, r.Version)
		}
	}
	r.Version++
	t.queue(opPut, r, r.Version-1)
	return nil
}

// Delete queues the delete; a record that is not there fails the Update with
// store.ErrNotFound.
func (t *deferredTx) Delete(kind, id string) error {
	if err := t.check(); err != nil {
		return err
	}
	if w := t.latest(kind, id); w != nil && w.op == opDelete {
		return notFound(kind, id)
	}
	t.queue(opDelete, &store.Record{Kind: kind, ID: id}, 0)
	return nil
}

// List returns the committed records with the function's own writes applied: its deletes
// removed, its puts replaced (or moved out of opt.Parent), its inserts added at the end.
func (t *deferredTx) List(kind string, opt store.ListOptions) ([]*store.Record, error) {
	if err := t.check(); err != nil {
		return nil, err
	}
	own := t.writesOf(kind)
	wide := opt
	if opt.Limit > 0 {
		wide.Limit = opt.Limit + len(own) // room for the records own writes remove
	}
	recs, err := t.s.list(t.ctx, kind, wide)
	if err != nil {
		return nil, err
	}
	recs = overlay(recs, own, opt)
	if opt.Limit > 0 && len(recs) > opt.Limit {
		recs = recs[:opt.Limit]
	}
	return recs, nil
}

// writesOf returns the latest queued write of each record of kind, in the order of first
// writing.
func (t *deferredTx) writesOf(kind string) []*write {
	var own []*write
	for i := range t.writes {
		if t.writes[i].rec.Kind == kind && t.latest(kind, t.writes[i].rec.ID) == &t.writes[i] {
			own = append(own, &t.writes[i])
		}
	}
	return own
}

// overlay applies own writes (the latest of each record) to the committed records of a List
// with opt: deletes and puts replace the committed rows, and the records puts and inserts
// leave under opt's filter take their place in Seq order, inserts (no Seq yet) last.
func overlay(recs []*store.Record, own []*write, opt store.ListOptions) []*store.Record {
	mine := make(map[string]bool, len(own))
	for _, w := range own {
		mine[w.rec.ID] = true
	}
	out := make([]*store.Record, 0, len(recs)+len(own))
	for _, r := range recs {
		if !mine[r.ID] {
			out = append(out, r)
		}
	}
	for _, w := range own {
		r := &w.rec
		if w.op != opDelete && (opt.Parent == "" || r.Parent == opt.Parent) && (r.Seq == 0 || r.Seq > opt.AfterSeq) {
			out = append(out, w.copy())
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Record) int { return cmp.Compare(seqOrder(a), seqOrder(b)) })
	return out
}

// seqOrder is a record's place in List order: its Seq, or after every other for one whose
// insert is not committed yet.
func seqOrder(r *store.Record) int64 {
	if r.Seq == 0 {
		return math.MaxInt64
	}
	return r.Seq
}

// list reads records as Tx.List does, in one statement outside any transaction.
func (s *Store) list(ctx context.Context, kind string, opt store.ListOptions) ([]*store.Record, error) {
	query, args := listQuery(sqlList, sqlListParent, kind, opt)
	var out []*store.Record
	err := retryUnavailable(ctx, func() error {
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return classify(err)
		}
		out, err = collectRecords(rows, kind)
		return classify(err)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return out, nil
}
