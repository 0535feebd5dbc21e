package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaLock is the advisory lock key held while the schema is created or migrated, so that
// several Hoist processes starting at once do not race ("hoist" in ASCII).
const schemaLock = 0x686f697374

// migrations[i] moves the schema from version i to version i+1. The version is kept in
// hoist_meta. Append new steps; never change a released one.
var migrations = []string{
	`CREATE TABLE hoist_records (
		kind    text      NOT NULL,
		id      text      NOT NULL,
		parent  text      NOT NULL DEFAULT '',
		version bigint    NOT NULL,
		seq     bigserial NOT NULL,
		data    bytea     NOT NULL,
		PRIMARY KEY (kind, id)
	);
	CREATE INDEX hoist_records_kind_parent_seq ON hoist_records (kind, parent, seq);
	CREATE INDEX hoist_records_kind_seq ON hoist_records (kind, seq);`,
	`CREATE TABLE hoist_blobs (
		key  text    NOT NULL,
		gen  text    NOT NULL,
		part integer NOT NULL,
		data bytea   NOT NULL,
		PRIMARY KEY (key, gen, part)
	);`,
	// hoist_write_missed explains a deferred Put or Delete (deferred.go) that matched no row:
	// the record is there at another version (serialization_failure, so the Update runs its
	// function again) or it is gone (no_data_found). hoist_read_stale fails a deferred Update
	// one of whose reads is out of date (serialization_failure). Raising rolls back the batch
	// it is in.
	`CREATE FUNCTION hoist_write_missed(k text, i text, expected bigint) RETURNS bigint
	LANGUAGE plpgsql VOLATILE AS $$
	DECLARE found_version bigint;
	BEGIN
		SELECT version INTO found_version FROM hoist_records WHERE kind = k AND id = i;
		IF found_version IS NULL THEN
			RAISE EXCEPTION 'store: record not found: % "%"', k, i USING ERRCODE = 'P0002';
		END IF;
		RAISE EXCEPTION 'store: version conflict: % "%" is at version %, not %', k, i, found_version, expected
			USING ERRCODE = '40001';
	END $$;
	CREATE FUNCTION hoist_read_stale(k text, i text, expected bigint) RETURNS bigint
	LANGUAGE plpgsql VOLATILE AS $$
	BEGIN
		RAISE EXCEPTION 'store: version conflict: % "%" changed since it was read at version %', k, i, expected
			USING ERRCODE = '40001';
	END $$;`,
}

// migrate brings the schema up to date in one transaction under the advisory lock.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(schemaLock)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS hoist_meta (
			name  text PRIMARY KEY,
			value bigint NOT NULL)`)
		if err != nil {
			return err
		}
		var version int
		err = tx.QueryRow(ctx, `SELECT value FROM hoist_meta WHERE name = 'schema_version'`).Scan(&version)
		if err != nil && err != pgx.ErrNoRows {
			return err
		}
		if version > len(migrations) {
			return fmt.Errorf("schema version %d is newer than this Hoist knows (%d)", version, len(migrations))
		}
		for ; version < len(migrations); version++ {
			if _, err := tx.Exec(ctx, migrations[version]); err != nil {
				return fmt.Errorf("migrate to schema version %d: %w", version+1, err)
			}
		}
		_, err = tx.Exec(ctx, `INSERT INTO hoist_meta (name, value) VALUES ('schema_version', $1)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, version)
		return err
	})
}
