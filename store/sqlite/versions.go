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
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	t := s.mem[kind]
	if t == nil {
		return nil
	}
	l := &t.all
	if opt.Parent != "" {
		l = t.byParent[opt.Parent]
	}
	l.each(opt.AfterSeq, opt.Limit, func(r *store.Record) { fn(r.ID, r.Seq, r.Version) })
	return nil
}

// VersionOf reports the Seq and Version of one committed record without copying it, or
// ErrNotFound: the cheapest way for a caller that keeps a decoded copy of a record to learn
// whether it changed. It is not part of store.Store.
func (s *Store) VersionOf(ctx context.Context, kind, id string) (seq, version int64, err error) {
	if err := ctx.Err(); err != nil {
		return 0, 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, 0, errClosed
	}
	r := s.mem.get(kind, id)
	if r == nil {
		return 0, 0, notFound(kind, id)
	}
	return r.Seq, r.Version, nil
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
