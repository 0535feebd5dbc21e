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
	// hoist_apply runs the writes of several CompareAndSetOnly Updates (deferred.go,
	// applyqueue.go) in one statement. Update u has counts[u] consecutive operations; ops[i]
	// is 'c' (check that the record kinds[i] ids[i] is at versions[i]), 'p' (Put at
	// versions[i]), 'd' (Delete), 'i' (Insert), 'r' (replace: Delete and Insert again, the row
	// rewritten with a new Seq) or 'n' (announce parents[i]). Each Update runs in a
	// subtransaction of its own, so it commits all or none of its writes, independently of
	// the others: a stale check or Put raises serialization_failure, a Put or Delete of a
	// record that is gone no_data_found, an Insert of a taken ID unique_violation, and
	// codes[u] and messages[u] say so ('' when it succeeded). seqs[i] is the Seq of write i.
	`CREATE FUNCTION hoist_apply(counts int[], ops text, kinds text[], ids text[], parents text[],
		versions bigint[], datas bytea[], OUT seqs bigint[], OUT codes text[], OUT messages text[])
	LANGUAGE plpgsql VOLATILE AS $$
	DECLARE
		pos int := 1;
		s bigint;
		found_version bigint;
	BEGIN
		seqs := '{}'; codes := '{}'; messages := '{}';
		FOR u IN 1 .. coalesce(array_length(counts, 1), 0) LOOP
			BEGIN
				FOR i IN pos .. pos + counts[u] - 1 LOOP
					s := 0;
					CASE substr(ops, i, 1)
					WHEN 'c' THEN
						SELECT version INTO found_version FROM hoist_records WHERE kind = kinds[i] AND id = ids[i];
						IF found_version IS DISTINCT FROM versions[i] THEN
							RAISE EXCEPTION 'store: version conflict: % "%" changed since it was read at version %',
								kinds[i], ids[i], versions[i] USING ERRCODE = '40001';
						END IF;
					WHEN 'p' THEN
						UPDATE hoist_records SET parent = parents[i], data = datas[i], version = version + 1
							WHERE kind = kinds[i] AND id = ids[i] AND version = versions[i] RETURNING seq INTO s;
						IF NOT FOUND THEN
							SELECT version INTO found_version FROM hoist_records WHERE kind = kinds[i] AND id = ids[i];
							IF NOT FOUND THEN
								RAISE EXCEPTION 'store: record not found: % "%"', kinds[i], ids[i] USING ERRCODE = 'P0002';
							END IF;
							RAISE EXCEPTION 'store: version conflict: % "%" is at version %, not %',
								kinds[i], ids[i], found_version, versions[i] USING ERRCODE = '40001';
						END IF;
					WHEN 'd' THEN
						DELETE FROM hoist_records WHERE kind = kinds[i] AND id = ids[i] RETURNING seq INTO s;
						IF NOT FOUND THEN
							RAISE EXCEPTION 'store: record not found: % "%"', kinds[i], ids[i] USING ERRCODE = 'P0002';
						END IF;
					WHEN 'r' THEN
						UPDATE hoist_records SET parent = parents[i], data = datas[i], version = 1, seq = DEFAULT
							WHERE kind = kinds[i] AND id = ids[i] RETURNING seq INTO s;
						IF NOT FOUND THEN
							RAISE EXCEPTION 'store: record not found: % "%"', kinds[i], ids[i] USING ERRCODE = 'P0002';
						END IF;
					WHEN 'i' THEN
						INSERT INTO hoist_records (kind, id, parent, version, data)
							VALUES (kinds[i], ids[i], parents[i], 1, datas[i]) RETURNING seq INTO s;
					WHEN 'n' THEN
						PERFORM pg_notify('hoist_announce', parents[i]);
					END CASE;
					seqs[i] := s;
				END LOOP;
				codes[u] := ''; messages[u] := '';
			EXCEPTION WHEN OTHERS THEN
				codes[u] := SQLSTATE; messages[u] := SQLERRM;
				FOR i IN pos .. pos + counts[u] - 1 LOOP
					seqs[i] := 0; -- none of it was written
				END LOOP;
			END;
			pos := pos + counts[u];
		END LOOP;
	END $$;`,
	// Room on each page for a record's next version: a Put that keeps Parent (most writes:
	// a document edited in place) can then be a heap-only update, which adds no entry to any
	// of the three indexes.
	`ALTER TABLE hoist_records SET (fillfactor = 80);`,
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
