package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations[i] moves the schema from version i to version i+1. The schema version is kept in
// PRAGMA user_version. Append new steps; never change a released one.
var migrations = []string{
	`CREATE TABLE records (
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
	) WITHOUT ROWID;`,
}

// migrate brings the schema up to date, each step in its own transaction.
func migrate(ctx context.Context, db *sql.DB) error {
	var version int
	if err := db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&version); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this Hoist knows (%d)", version, len(migrations))
	}
	for ; version < len(migrations); version++ {
		if err := migrateStep(ctx, db, version); err != nil {
			return fmt.Errorf("migrate to schema version %d: %w", version+1, err)
		}
	}
	return nil
}

func migrateStep(ctx context.Context, db *sql.DB, from int) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, migrations[from]); err != nil {
		return err
	}
	// PRAGMA takes no bind parameters; from+1 is an int this package computed.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, from+1)); err != nil {
		return err
	}
	return tx.Commit()
}
