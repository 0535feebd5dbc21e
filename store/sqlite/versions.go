package sqlite

import (
	"context"

	"github.com/hoist-gg/hoist/store"
)

// EachVersion calls fn with the ID, Seq and Version of every committed record of kind that opt
// selects, in Seq order, without copying the records: a way for a caller that keeps decoded
// copies of many records to find the few that changed since it last looked. It is not part
// of store.Store (the domain uses it when the store has it). fn runs under the store's read
// lock, so it must be quick and must not use the store.
func (s *Store) EachVersion(ctx context.Context, kind string, opt store.ListOptions, fn func(id string, seq, version int64)) error {
	return s.readMemory(ctx, func(m memory) error {
		t := m[kind]
		if t == nil {
			return nil
		}
		l := &t.all
		if opt.Parent != "" {
			l = t.byParent[opt.Parent]
		}
		l.each(opt.AfterSeq, opt.Limit, func(r *store.Record) { fn(r.ID, r.Seq, r.Version) })
		return nil
	})
}

// VersionOf reports the Seq and Version of one committed record without copying it, or
// ErrNotFound: the cheapest way for a caller that keeps a decoded copy of a record to learn
// whether it changed. It is not part of store.Store.
func (s *Store) VersionOf(ctx context.Context, kind, id string) (seq, version int64, err error) {
	err = s.readMemory(ctx, func(m memory) error {
		r := m.get(kind, id)
		if r == nil {
			return notFound(kind, id)
		}
		seq, version = r.Seq, r.Version
		return nil
	})
	return seq, version, err
}

// each calls fn with up to limit (0: all) records with Seq > afterSeq, in Seq order.
func (l *seqList) each(afterSeq int64, limit int, fn func(*store.Record)) {
	if l == nil {
		return
	}
	n := 0
	ci, i := l.locate(afterSeq + 1)
	for ; ci < len(l.chunks); ci, i = ci+1, 0 {
		for _, r := range l.chunks[ci][i:] {
			if limit > 0 && n == limit {
				return
			}
			fn(r)
			n++
		}
	}
}
