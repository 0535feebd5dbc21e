// Package sqlite is Hoist's embedded store: every record is held in memory for reads and
// persisted to a pure-Go SQLite database (modernc.org/sqlite) in WAL mode for durability.
//
// Reads (View) take a read lock and copy records out of memory, so a Get costs about as much
// as a map lookup and a copy. Writes (Update) are group-committed: concurrent Updates queue,
// and one committer at a time takes the whole queue (up to maxBatch), runs the functions one
// after another, each buffering its writes in an overlay layered on the writes of those before
// it (so they run exactly as if serially, and a failing function loses only its own writes),
// writes the batch to SQLite in one SQL transaction, commits, and only then applies it to
// memory and returns to the batch's callers. A write that Update acknowledged is therefore on
// disk in the WAL before any reader can see it. No timer holds a commit back: a lone writer
// commits at once, and writers that arrive while a commit runs form the next batch.
//
// Durability: the database runs with journal_mode=WAL and synchronous=NORMAL. A committed
// transaction is in the WAL file (the operating system's page cache) when Update returns, so
// it survives a crash of the process (kill -9); it may be lost if the machine itself loses
// power before the OS writes the page cache out. Open one directory from one process at a
// time: Open takes an exclusive lock on it, and SQLite runs with locking_mode=EXCLUSIVE, so
// other programs (the sqlite3 shell) cannot read the database while the store is open.
//
// Only store/sqlite's users wire it: the domain sees the store.Store interface.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/hoist-gg/hoist/store"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// errClosed is returned by transactions started after Close.
var errClosed = errors.New("store: closed")

// Store is the embedded store. It implements store.Store.
type Store struct {
	db     *sql.DB
	stmts  statements
	unlock func() error // releases the directory lock

	qmu          sync.Mutex   // guards queue, leading and shut
	queue        []*request   // Updates waiting for a committer, in arrival order
	leading      bool         // a committer is running a batch (or about to)
	shut         bool         // Close has begun: no new Updates are queued
	idle         sync.Cond    // signalled, with qmu, when leading becomes false
	commits      atomic.Int64 // SQLite transactions committed, for tests
	beforeCommit func() error // tests only: runs just before each SQLite COMMIT; an error fails it

	mu     sync.RWMutex // guards mem, seq and closed against the committer's apply
	mem    memory
	seq    int64 // the last Seq handed out
	closed bool

	seqSaved int64 // committer only: the Seq reservation in the meta table (seqBlock)
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store kept in dir/hoist.db and loads it into memory.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	unlock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := open(filepath.Join(dir, "hoist.db"))
	if err != nil {
		unlock()
		return nil, err
	}
	s.unlock = unlock
	return s, nil
}

func open(path string) (*Store, error) {
	q := url.Values{}
	// Exclusive locking before WAL: the one connection keeps the database lock and SQLite
	// keeps the WAL index in its own memory instead of a shared-memory file, which saves the
	// lock and unlock system calls of every transaction. Open already allows one process
	// per directory (lockDir), so nothing else may share the database anyway.
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	// One connection: only the single writer (and Open) ever talks to SQLite.
	db.SetMaxOpenConns(1)
	s := &Store{db: db, mem: memory{}}
	s.idle.L = &s.qmu
	if err := s.init(); err != nil {
		db.Close()
		return nil, fmt.Errorf("sqlite store %s: %w", path, err)
	}
	return s, nil
}

// init migrates the schema and loads every record.
func (s *Store) init() error {
	ctx := context.Background()
	if err := migrate(ctx, s.db); err != nil {
		return err
	}
	if err := s.stmts.prepare(ctx, s.db); err != nil {
		return err
	}
	return s.load(ctx)
}

// load reads every record into memory, in Seq order, and the Seq counter.
func (s *Store) load(ctx context.Context) error {
	rows, err := s.db.QueryContext(ctx,
		`SELECT kind, id, parent, version, seq, data FROM records ORDER BY seq`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		r := &store.Record{}
		if err := rows.Scan(&r.Kind, &r.ID, &r.Parent, &r.Version, &r.Seq, &r.Data); err != nil {
			return err
		}
		s.mem.set(r)
		s.seq = max(s.seq, r.Seq)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	var seq int64
	err = s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'seq'`).Scan(&seq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	// The meta row holds a reservation (see seqBlock): Seqs up to it may have been handed out
	// before a crash, so continue after it.
	s.seq = max(s.seq, seq)
	s.seqSaved = s.seq
	return nil
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
	s.mu.Lock()
	s.closed = true
	s.mem = nil
	s.mu.Unlock()
	err := s.db.Close()
	if uerr := s.unlock(); err == nil {
		err = uerr
	}
	return err
}

// Get reads one committed record from memory.
func (s *Store) Get(ctx context.Context, kind, id string) (*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed
	}
	r := s.mem.get(kind, id)
	if r == nil {
		return nil, notFound(kind, id)
	}
	return clone(r), nil
}

// View runs fn with a read-only transaction over the in-memory state. fn must not start
// another transaction on the same store: writers wait for it, and it may wait for them.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed
	}
	tx := &viewTx{mem: s.mem}
	err := fn(tx)
	tx.done = true
	return err
}

// statements are the writer's prepared statements.
type statements struct {
	upsert, delete, setSeq *sql.Stmt
}

func (st *statements) prepare(ctx context.Context, db *sql.DB) (err error) {
	prep := func(query string) *sql.Stmt {
		if err != nil {
			return nil
		}
		var stmt *sql.Stmt
		stmt, err = db.PrepareContext(ctx, query)
		return stmt
	}
	st.upsert = prep(`INSERT INTO records (kind, id, parent, version, seq, data)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (kind, id) DO UPDATE SET parent = excluded.parent, version = excluded.version,
			seq = excluded.seq, data = excluded.data`)
	st.delete = prep(`DELETE FROM records WHERE kind = ? AND id = ?`)
	st.setSeq = prep(`INSERT OR REPLACE INTO meta (name, value) VALUES ('seq', ?)`)
	return err
}

// nonNil stores a nil document as an empty blob (the column is NOT NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
