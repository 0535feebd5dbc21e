// Package sqlite is Hoist's embedded store: every record is held in memory for reads, and
// every commit is appended to a log on disk, which snapshots in SQLite databases (the pure-Go
// modernc.org/sqlite) keep short.
//
// Reads (View) take a read lock and copy records out of memory, so a Get costs about as much
// as a map lookup and a copy. Writes (Update) are group-committed: concurrent Updates queue,
// and one committer at a time takes the whole queue (up to maxBatch), runs the functions one
// after another, each buffering its writes in an overlay layered on the writes of those before
// it (so they run exactly as if serially, and a failing function loses only its own writes),
// appends the batch's writes to the log as one entry, and only then applies them to memory and
// returns to the batch's callers. A write that Update acknowledged is therefore in the log
// before any reader can see it. No timer holds a commit back: a lone writer commits at once,
// and writers that arrive while a commit runs form the next batch.
//
// On disk (dir): log-<K>.seg, the log segments (segments.go, journal.go); snap-<N>.db, the
// newest snapshot of every record (snapshot.go); hoist.lock. Open loads the newest snapshot and
// replays the segments after it.
//
// Durability: a commit is one write system call; when Update returns, the entry is in the
// operating system's page cache, so it survives a crash of the process (kill -9). It may be
// lost if the machine itself loses power before the OS writes the page cache out (snapshots
// are synced before they are relied on, so a power loss costs recent commits, not older
// data). Open one directory from one process at a time: Open takes an exclusive lock on it.
//
// Only store/sqlite's users wire it: the domain sees the store.Store interface.
package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/hoist-gg/hoist/store"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// errClosed is returned by transactions started after Close.
var errClosed = errors.New("store: closed")

// Store is the embedded store. It implements store.Store.
type Store struct {
	unlock func() error // releases the directory lock

	qmu          sync.Mutex   // guards queue, leading and shut
	queue        []*request   // Updates waiting for a committer, in arrival order
	leading      bool         // a committer is running a batch (or about to)
	shut         bool         // Close has begun: no new Updates are queued
	idle         sync.Cond    // signalled, with qmu, when leading becomes false
	commits      atomic.Int64 // log entries appended, for tests
	beforeCommit func() error // tests only: runs just before each append; an error fails it

	mu     sync.RWMutex // guards mem, seq and closed against the committer's apply
	mem    memory
	seq    int64 // the last Seq handed out
	closed bool

	log  *segmentLog // committer only: the segment commits append to
	snap snapshots   // the snapshots (snapshot.go)

	watch watchers // Watch's functions (watch.go)
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store kept in dir and loads it into memory.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s := &Store{mem: memory{}, unlock: unlock}
	s.idle.L = &s.qmu
	s.snap.dir, s.snap.minLog = dir, snapshotMinLog
	s.snap.stopCtx, s.snap.stop = context.WithCancel(context.Background())
	if err := s.load(context.Background()); err != nil {
		if s.log != nil {
			s.log.close(false)
		}
		unlock()
		return nil, fmt.Errorf("sqlite store %s: %w", dir, err)
	}
	return s, nil
}

// load reads the newest snapshot (or a schema version 1 database, which becomes snapshot 1)
// and replays the log after it, then opens the last segment for appending and removes files
// that are no longer needed.
func (s *Store) load(ctx context.Context) error {
	num, firstLog, err := s.loadSnapshot(ctx)
	if err != nil {
		return err
	}
	if num == 0 {
		if num, err = s.migrateLegacy(ctx); err != nil {
			return err
		}
	}
	last, size, err := replaySegments(s.snap.dir, firstLog, func(entry []byte) error {
		seq, err := replayEntry(s.mem, entry)
		s.seq = max(s.seq, seq)
		s.snap.logBytes += int64(len(entry))
		return err
	})
	if err != nil {
		return err
	}
	if s.log, err = openSegment(s.snap.dir, last, size); err != nil {
		return err
	}
	s.snap.num = num
	for _, t := range s.mem {
		t.all.each(0, 0, func(r *store.Record) { s.snap.live += recordSize(r) })
	}
	if num > 0 {
		if err := removeLegacy(s.snap.dir); err != nil {
			return err
		}
	}
	return removeOlder(s.snap.dir, num, firstLog)
}

// migrateLegacy puts a schema version 1 database in force as snapshot 1, if there is one, and
// returns the snapshot in force.
func (s *Store) migrateLegacy(ctx context.Context) (int64, error) {
	found, err := s.loadLegacy(ctx)
	if err != nil || !found {
		return 0, err
	}
	job := &snapJob{num: 1, firstLog: 1, seq: s.seq, recs: s.capture()}
	if err := s.snap.put(ctx, job); err != nil {
		return 0, fmt.Errorf("snapshot of %s: %w", legacyName, err)
	}
	return 1, nil
}

// Close releases the database and the directory lock. Updates queued before it are committed
// first; later ones fail.
func (s *Store) Close() error {
	s.qmu.Lock()
	if s.shut {
		s.qmu.Unlock()
		return nil
	}
	s.shut = true
	for s.leading {
		s.idle.Wait()
	}
	s.qmu.Unlock()
	s.snap.stop()
	s.snap.wg.Wait()
	s.mu.Lock()
	s.closed = true
	s.mem = nil
	s.mu.Unlock()
	err := s.log.close(true)
	if uerr := s.unlock(); err == nil {
		err = uerr
	}
	return err
}

// Get reads one committed record from memory.
func (s *Store) Get(ctx context.Context, kind, id string) (out *store.Record, err error) {
	err = s.readMemory(ctx, func(m memory) error {
		r := m.get(kind, id)
		if r == nil {
			return notFound(kind, id)
		}
		out = clone(r)
		return nil
	})
	return out, err
}

// View runs fn with a read-only transaction over the in-memory state. fn must not start
// another transaction on the same store: writers wait for it, and it may wait for them.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	return s.readMemory(ctx, func(m memory) error {
		tx := &viewTx{mem: m}
		err := fn(tx)
		tx.done = true
		return err
	})
}

// readMemory runs fn over the committed records under the read lock, unless ctx has ended or
// the store is closed.
func (s *Store) readMemory(ctx context.Context, fn func(memory) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	return fn(s.mem)
}
