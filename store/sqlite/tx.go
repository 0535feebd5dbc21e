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

// updateTx is the single writer's transaction: its writes go to an overlay on top of the
// committed in-memory state, and its reads look at the overlay first. The writer lock keeps
// the committed state still while it runs, so it reads mem without the read lock.
type updateTx struct {
	mem    memory
	seq    int64                 // the last Seq handed out, including by this transaction
	writes map[key]*store.Record // the final state of each key written; nil means deleted
	done   bool
}

// get returns the record as this transaction sees it (not a copy), or nil.
func (t *updateTx) get(kind, id string) *store.Record {
	if r, ok := t.writes[key{kind, id}]; ok {
		return r
	}
	return t.mem.get(kind, id)
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
	t.writes[key{r.Kind, r.ID}] = clone(r)
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
	t.writes[key{r.Kind, r.ID}] = clone(r)
	return nil
}

func (t *updateTx) Delete(kind, id string) error {
	if t.done {
		return errTxDone
	}
	if t.get(kind, id) == nil {
		return notFound(kind, id)
	}
	t.writes[key{kind, id}] = nil
	return nil
}

// List merges the committed records with this transaction's writes of the kind.
func (t *updateTx) List(kind string, opt store.ListOptions) ([]*store.Record, error) {
	if t.done {
		return nil, errTxDone
	}
	var mine []*store.Record // this transaction's live records of the kind that match opt
	touched := 0
	for k, r := range t.writes {
		if k.kind != kind {
			continue
		}
		touched++
		if r != nil && matches(r, opt) {
			mine = append(mine, r)
		}
	}
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
		if _, written := t.writes[key{kind, r.ID}]; !written {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, bySeq)
	if opt.Limit > 0 && len(out) > opt.Limit {
		out = out[:opt.Limit]
	}
	return cloneAll(out), nil
}

// matches reports whether r passes opt's filters.
func matches(r *store.Record, opt store.ListOptions) bool {
	return (opt.Parent == "" || r.Parent == opt.Parent) && r.Seq > opt.AfterSeq
}

// upserts returns the records this transaction inserted or replaced, in Seq order, so that
// memory.set mostly appends.
func (t *updateTx) upserts() []*store.Record {
	out := make([]*store.Record, 0, len(t.writes))
	for _, r := range t.writes {
		if r != nil {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, bySeq)
	return out
}

// bySeq orders records by Seq.
func bySeq(a, b *store.Record) int { return cmp.Compare(a.Seq, b.Seq) }
