package sqlite

import (
	"context"
	"sync"

	"github.com/hoist-gg/hoist/store"
)

// watchers holds the functions Watch registered; the committer calls them after each commit.
type watchers struct {
	mu   sync.Mutex
	next int
	fns  map[int]func(store.Announcement)
}

var _ store.Watcher = (*Store)(nil)

// Watch calls fn, on the committer's goroutine, for every record of an announced kind that a
// commit inserted or replaced, until ctx is done. An embedded store is one process, so nothing is missed.
func (s *Store) Watch(ctx context.Context, fn func(store.Announcement)) {
	w := &s.watch
	w.mu.Lock()
	if w.fns == nil {
		w.fns = map[int]func(store.Announcement){}
	}
	id := w.next
	w.next++
	w.fns[id] = fn
	w.mu.Unlock()
	context.AfterFunc(ctx, func() {
		w.mu.Lock()
		delete(w.fns, id)
		w.mu.Unlock()
	})
}

// announce tells the watchers about the announced records among a committed batch's upserts.
func (s *Store) announce(ups []*store.Record) {
	w := &s.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.fns) == 0 {
		return
	}
	for _, r := range ups {
		if !store.Announced(r.Kind) {
			continue
		}
		for _, fn := range w.fns {
			fn(store.Announcement{Kind: r.Kind, Parent: r.Parent})
		}
	}
}
