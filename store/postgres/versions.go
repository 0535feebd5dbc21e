package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
)

// Version reads, outside store.Store: the identity and version of records without their
// documents, each in one statement (one snapshot, one round trip, no transaction), for callers
// that keep decoded copies and only need to learn what changed. store/sqlite has the same
// methods.

const (
	sqlVersions       = `SELECT id, seq, version FROM hoist_records WHERE kind = $1 AND seq > $2 ORDER BY seq LIMIT $3`
	sqlVersionsParent = `SELECT id, seq, version FROM hoist_records WHERE kind = $1 AND seq > $2 AND parent = $4 ORDER BY seq LIMIT $3`
	sqlVersionOf      = `SELECT seq, version FROM hoist_records WHERE kind = $1 AND id = $2`
)

// EachVersion calls fn with the ID, Seq and Version of every committed record of kind that
// opt selects, in Seq order. fn runs while the statement's rows are open, so it must be quick
// and must not use the store.
func (s *Store) EachVersion(ctx context.Context, kind string, opt store.ListOptions, fn func(id string, seq, version int64)) error {
	query, args := listQuery(sqlVersions, sqlVersionsParent, kind, opt)
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("postgres store: %w", classify(err))
	}
	defer rows.Close()
	var id string
	var seq, version int64
	for rows.Next() {
		if err := rows.Scan(&id, &seq, &version); err != nil {
			return fmt.Errorf("postgres store: %w", classify(err))
		}
		fn(id, seq, version)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("postgres store: %w", classify(err))
	}
	return nil
}

// VersionOf reports the Seq and Version of one committed record, or ErrNotFound.
func (s *Store) VersionOf(ctx context.Context, kind, id string) (seq, version int64, err error) {
	err = retryUnavailable(ctx, func() error {
		return classify(s.pool.QueryRow(ctx, sqlVersionOf, kind, id).Scan(&seq, &version))
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, notFound(kind, id)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("postgres store: %w", err)
	}
	return seq, version, nil
}
