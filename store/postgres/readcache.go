package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/hoist-gg/hoist/store"
)

// The read cache of CompareAndSetOnly Updates. A deferredTx's Get takes a record from this
// process's cache of records it read or wrote before, and commit checks, in the same
// hoist_apply call as the writes, that every record the function read still has the version
// it was read at; a record another process changed meanwhile fails the Update with a
// conflict, its entry is dropped, and the function runs again on what the database holds. A function that fails on
// its own after reading from the cache runs again on fresh reads before its error is
// returned, so that no refusal rests on a stale copy. A hot path that reads the same few
// records over and over (a claim reads its game server, its instance and its group) then costs
// one round trip: the call.

// readCacheSize bounds the cache; it starts over when full.
const readCacheSize = 1 << 15

// recordKey names a record.
type recordKey struct{ kind, id string }

// readCache holds copies of committed records; the Store's deferred updates share it.
type readCache struct {
	mu   sync.Mutex
	recs map[recordKey]store.Record
}

// get returns a copy of the cached record, if there is one.
func (c *readCache) get(kind, id string) (*store.Record, bool) {
	c.mu.Lock()
	r, ok := c.recs[recordKey{kind, id}]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	r.Data = slices.Clone(r.Data)
	return &r, true
}

// put remembers a copy of a committed record.
func (c *readCache) put(r *store.Record) {
	cp := *r
	cp.Data = slices.Clone(r.Data)
	c.mu.Lock()
	if c.recs == nil || len(c.recs) >= readCacheSize {
		c.recs = make(map[recordKey]store.Record)
	}
	c.recs[recordKey{r.Kind, r.ID}] = cp
	c.mu.Unlock()
}

// drop forgets records.
func (c *readCache) drop(keys []recordKey) {
	c.mu.Lock()
	for _, k := range keys {
		delete(c.recs, k)
	}
	c.mu.Unlock()
}

// sqlPrefetch reads the records of one kind with the given IDs.
const sqlPrefetch = `SELECT id, parent, version, seq, data FROM hoist_records WHERE kind = $1 AND id = ANY($2)`

// Prefetch reads the records of kind with these IDs (those that exist, in no particular
// order) into the read cache of CompareAndSetOnly Updates, in one statement, and returns
// them (the caller's own copies): a caller about to read them one Update at a time saves a
// round trip each. The cache is a hint; correctness never depends on it.
func (s *Store) Prefetch(ctx context.Context, kind string, ids []string) ([]*store.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, sqlPrefetch, kind, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", classify(err))
	}
	recs, err := collectRecords(rows, kind)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", classify(err))
	}
	for _, r := range recs {
		s.cache.put(r)
	}
	return recs, nil
}
