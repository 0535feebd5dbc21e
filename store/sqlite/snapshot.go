package sqlite

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/hoist-gg/hoist/store"
)

// Snapshots.
//
// The log (segments.go) grows with every commit, so from time to time the committer starts a
// new segment and captures every record in memory, which then holds exactly the log before
// that segment. A background goroutine writes them to a new SQLite database,
// snap-<N>.db.tmp: a chunks table, snapshotChunk records per row encoded like a log entry
// (journal.go), each kind in Seq order, and a meta table with the Seq counter and the first
// segment to replay after the snapshot. Once the file is synced it is renamed to snap-<N>.db
// and the directory synced: from then on it is the snapshot in force (the newest snap-<N>.db),
// and the older snapshots and the segments it covers are removed. A crash at any point leaves
// either the old snapshot with its segments or the new one; Open removes leftovers.
//
// A snapshot starts when the log written since the last one reaches both snapshotMinLog and
// the size of the live records, so snapshots write at most about as many bytes as the log,
// and Open replays at most about as much log as it loads snapshot.

const (
	// snapshotMinLog is the least log volume, in bytes, that starts a snapshot.
	snapshotMinLog = 16 << 20
	// snapshotChunk is how many records one row of a snapshot holds.
	snapshotChunk = 256
)

// snapshots is the bookkeeping of the snapshots.
type snapshots struct {
	dir      string
	minLog   int64 // committer only: snapshotMinLog; tests make it smaller
	logBytes int64 // committer only: bytes appended to the log since the last capture

	running     atomic.Bool  // a snapshot is being written
	failAt      atomic.Int64 // after a failed snapshot: the logBytes the next attempt waits for
	failedBytes atomic.Int64 // log bytes of a failed snapshot, for the committer to count again

	mu   sync.Mutex // guards num and live
	num  int64      // the snapshot in force; 0 when there is none
	live int64      // bytes of the records in it (recordSize)

	stopCtx context.Context // ends when the store closes
	stop    context.CancelFunc
	wg      sync.WaitGroup // the snapshot writer
}

// snapJob is one snapshot to write.
type snapJob struct {
	num      int64
	firstLog int64 // the first segment after it
	seq      int64 // the last Seq handed out when it was captured
	recs     []*store.Record
	logBytes int64 // the log it makes redundant
}

func snapshotPath(dir string, num int64) string {
	return filepath.Join(dir, "snap-"+strconv.FormatInt(num, 10)+".db")
}

// recordSize is what a record counts for in the snapshot threshold.
func recordSize(r *store.Record) int64 {
	return int64(len(r.Kind) + len(r.ID) + len(r.Parent) + len(r.Data) + 24)
}

// inForce returns the snapshot in force and its size.
func (sn *snapshots) inForce() (num, live int64) {
	sn.mu.Lock()
	defer sn.mu.Unlock()
	return sn.num, sn.live
}

// maybeSnapshot starts a snapshot when the log has grown enough and none is running. The
// committer calls it after applying a batch, so memory holds exactly the log written so far.
func (s *Store) maybeSnapshot() {
	sn := &s.snap
	sn.logBytes += sn.failedBytes.Swap(0)
	num, live := sn.inForce()
	if sn.running.Load() || sn.logBytes < max(sn.minLog, live, sn.failAt.Load()) {
		return
	}
	closed, err := s.log.rotate()
	if err != nil {
		slog.Warn("sqlite store: cannot start a log segment; no snapshot until the log doubles", "err", err)
		sn.failAt.Store(2 * sn.logBytes)
		return
	}
	sn.running.Store(true)
	job := &snapJob{num: num + 1, firstLog: closed + 1, seq: s.seq, recs: s.capture(), logBytes: sn.logBytes}
	sn.logBytes = 0
	sn.wg.Add(1)
	go s.writeSnapshot(job)
}

// capture returns every record in memory, each kind in Seq order. Records in memory are never
// mutated, so the writer may read them without the lock.
func (s *Store) capture() []*store.Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := 0
	for _, t := range s.mem {
		n += len(t.byID)
	}
	out := make([]*store.Record, 0, n)
	for _, t := range s.mem {
		t.all.each(0, 0, func(r *store.Record) { out = append(out, r) })
	}
	return out
}

// writeSnapshot writes job's snapshot and puts it in force. On failure the log it would have
// made redundant counts again, and the next attempt waits until the log has doubled.
func (s *Store) writeSnapshot(job *snapJob) {
	sn := &s.snap
	defer sn.wg.Done()
	defer sn.running.Store(false)
	// The closed segment is no longer the last: Open treats a bad frame in it as corruption,
	// so it must be on disk before later segments are relied on.
	err := syncFile(segmentPath(sn.dir, job.firstLog-1))
	if err == nil {
		err = sn.put(sn.stopCtx, job)
	}
	if err != nil {
		sn.failedBytes.Add(job.logBytes)
		if sn.stopCtx.Err() == nil {
			slog.Warn("sqlite store: snapshot failed; the log keeps growing until the next attempt",
				"snapshot", job.num, "err", err)
			sn.failAt.Store(2 * job.logBytes)
		}
		return
	}
	sn.failAt.Store(0)
	if err := removeOlder(sn.dir, job.num, job.firstLog); err != nil {
		slog.Warn("sqlite store: cannot remove files a snapshot made redundant", "err", err)
	}
}

// put writes job's snapshot file and puts it in force.
func (sn *snapshots) put(ctx context.Context, job *snapJob) error {
	path := snapshotPath(sn.dir, job.num)
	live, err := writeSnapshotFile(ctx, path+".tmp", job)
	if err == nil {
		err = os.Rename(path+".tmp", path)
	}
	if err == nil {
		err = syncFile(sn.dir)
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return err
	}
	sn.mu.Lock()
	sn.num, sn.live = job.num, live
	sn.mu.Unlock()
	return nil
}

// writeSnapshotFile writes job's records to a new SQLite file at path, synced, and returns
// their size.
func writeSnapshotFile(ctx context.Context, path string, job *snapJob) (live int64, err error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, err
	}
	q := url.Values{}
	q.Add("_pragma", "locking_mode(EXCLUSIVE)")
	q.Add("_pragma", "journal_mode(OFF)") // an incomplete file is never used
	q.Add("_pragma", "synchronous(FULL)") // the commit syncs the file
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return 0, err
	}
	db.SetMaxOpenConns(1)
	defer func() {
		if cerr := db.Close(); err == nil {
			err = cerr
		}
	}()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, snapshotSchema); err != nil {
		return 0, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO meta (name, value) VALUES ('seq', ?), ('first_log', ?)`,
		job.seq, job.firstLog); err != nil {
		return 0, err
	}
	if live, err = writeChunks(ctx, tx, job.recs); err != nil {
		return 0, err
	}
	return live, tx.Commit()
}

// snapshotSchema is a snapshot file's tables.
const snapshotSchema = `CREATE TABLE meta (
	name  TEXT PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE chunks (
	n    INTEGER PRIMARY KEY,
	data BLOB    NOT NULL
);`

// writeChunks inserts recs, snapshotChunk per row, and returns their size.
func writeChunks(ctx context.Context, tx *sql.Tx, recs []*store.Record) (live int64, err error) {
	ins, err := tx.PrepareContext(ctx, `INSERT INTO chunks (data) VALUES (?)`)
	if err != nil {
		return 0, err
	}
	defer ins.Close()
	var buf []byte
	for lo := 0; lo < len(recs); lo += snapshotChunk {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		chunk := recs[lo:min(lo+snapshotChunk, len(recs))]
		buf = binary.AppendUvarint(binary.AppendVarint(buf[:0], 0), 0) // Seq 0, no deletes
		buf = appendUpserts(buf, chunk)
		if _, err := ins.ExecContext(ctx, buf); err != nil {
			return 0, err
		}
		for _, r := range chunk {
			live += recordSize(r)
		}
	}
	return live, nil
}

// loadSnapshot reads the newest snapshot into memory and returns its number (0 if there is
// none) and the first segment to replay after it.
func (s *Store) loadSnapshot(ctx context.Context) (num, firstLog int64, err error) {
	nums, err := numbered(s.snap.dir, "snap-", ".db")
	if err != nil || len(nums) == 0 {
		return 0, 1, err
	}
	num = nums[len(nums)-1]
	db, err := sql.Open("sqlite", "file:"+snapshotPath(s.snap.dir, num)+"?mode=ro")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	var seq int64
	err = db.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE name = 'seq'),
		(SELECT value FROM meta WHERE name = 'first_log')`).Scan(&seq, &firstLog)
	if err != nil {
		return 0, 0, fmt.Errorf("snapshot %d: %w", num, err)
	}
	s.seq = max(s.seq, seq)
	if err := s.loadChunks(ctx, db); err != nil {
		return 0, 0, fmt.Errorf("snapshot %d: %w", num, err)
	}
	return num, firstLog, nil
}

// loadChunks applies a snapshot's chunks to memory.
func (s *Store) loadChunks(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT n, data FROM chunks ORDER BY n`)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var n int64
		var chunk []byte
		if err := rows.Scan(&n, &chunk); err != nil {
			return err
		}
		seq, err := replayEntry(s.mem, chunk)
		if err != nil {
			return fmt.Errorf("row %d: %w", n, err)
		}
		s.seq = max(s.seq, seq)
	}
	return rows.Err()
}

// removeOlder removes snapshots before num, unfinished snapshots, and segments before
// firstLog.
func removeOlder(dir string, num, firstLog int64) error {
	snaps, err := numbered(dir, "snap-", ".db")
	if err != nil {
		return err
	}
	tmps, err := numbered(dir, "snap-", ".db.tmp")
	if err != nil {
		return err
	}
	segs, err := numbered(dir, "log-", ".seg")
	if err != nil {
		return err
	}
	var errs []error
	for _, n := range snaps {
		if n < num {
			errs = append(errs, os.Remove(snapshotPath(dir, n)))
		}
	}
	for _, n := range tmps { // only the writer makes them, and it has renamed or removed its own
		errs = append(errs, os.Remove(snapshotPath(dir, n)+".tmp"))
	}
	for _, n := range segs {
		if n < firstLog {
			errs = append(errs, os.Remove(segmentPath(dir, n)))
		}
	}
	return errors.Join(errs...)
}
