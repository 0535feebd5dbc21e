package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hoist-gg/hoist/store"
)

// Schema version 1 kept every record in one SQLite database, dir/hoist.db, written row by
// row. Open reads such a database once, puts its records in force as snapshot 1 and removes
// it; from then on the store is snapshots and log segments.

// legacyName is the database of schema version 1.
const legacyName = "hoist.db"

// legacySchema is schema version 1 (PRAGMA user_version = 1).
const legacySchema = `CREATE TABLE records (
		kind    TEXT    NOT NULL,
		id      TEXT    NOT NULL,
		parent  TEXT    NOT NULL,
		version INTEGER NOT NULL,
		seq     INTEGER NOT NULL,
		data    BLOB    NOT NULL,
		PRIMARY KEY (kind, id)
	) WITHOUT ROWID;
	CREATE TABLE meta (
		name  TEXT PRIMARY KEY,
		value INTEGER NOT NULL
	) WITHOUT ROWID;`

// loadLegacy reads a schema version 1 database into memory, if dir has one, and reports
// whether it did.
func (s *Store) loadLegacy(ctx context.Context) (bool, error) {
	path := filepath.Join(s.snap.dir, legacyName)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		return false, err
	}
	defer db.Close()
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return false, err
	}
	if version != 1 {
		return false, fmt.Errorf("%s has schema version %d; this Hoist reads version 1", legacyName, version)
	}
	if err := s.loadRows(ctx, db); err != nil {
		return false, fmt.Errorf("%s: %w", legacyName, err)
	}
	return true, nil
}

// loadRows reads the records and the Seq reservation of a schema version 1 database.
func (s *Store) loadRows(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, `SELECT kind, id, parent, version, seq, data FROM records ORDER BY seq`)
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
	// The meta row held a reservation of Seqs that may have been handed out before a crash.
	var seq int64
	err = db.QueryRowContext(ctx, `SELECT value FROM meta WHERE name = 'seq'`).Scan(&seq)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	s.seq = max(s.seq, seq)
	return nil
}

// removeLegacy removes a schema version 1 database once a snapshot is in force.
func removeLegacy(dir string) error {
	var errs []error
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(filepath.Join(dir, legacyName+suffix)); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
