package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SQLSTATE codes the store reacts to.
const (
	uniqueViolation      = "23505"
	serializationFailure = "40001"
	deadlockDetected     = "40P01"
)

var (
	errTxDone   = errors.New("store: transaction used after its function returned")
	errInvalid  = errors.New("store: record needs a kind and an ID")
	errReadOnly = errors.New("store: write in a read-only transaction")
)

// The statements. List has one variant with and one without a parent filter, so that each
// uses its index.
const (
	sqlGet    = `SELECT parent, version, seq, data FROM hoist_records WHERE kind = $1 AND id = $2`
	sqlInsert = `INSERT INTO hoist_records (kind, id, parent, version, data) VALUES ($1, $2, $3, 1, $4)
		ON CONFLICT (kind, id) DO NOTHING RETURNING seq`
	sqlPut = `UPDATE hoist_records SET parent = $4, data = $5, version = version + 1
		WHERE kind = $1 AND id = $2 AND version = $3 RETURNING seq`
	sqlVersion    = `SELECT version FROM hoist_records WHERE kind = $1 AND id = $2`
	sqlDelete     = `DELETE FROM hoist_records WHERE kind = $1 AND id = $2`
	sqlList       = `SELECT id, parent, version, seq, data FROM hoist_records WHERE kind = $1 AND seq > $2 ORDER BY seq LIMIT $3`
	sqlListParent = `SELECT id, parent, version, seq, data FROM hoist_records WHERE kind = $1 AND seq > $2 AND parent = $4 ORDER BY seq LIMIT $3`
)

// tx is a store.Tx over one PostgreSQL transaction.
type tx struct {
	ctx       context.Context
	tx        pgx.Tx
	cache     *readCache // forgets what this transaction changes (readcache.go)
	readOnly  bool
	done      bool
	retryable bool // a statement failed with a serialization failure or deadlock
}

func (t *tx) check(write bool) error {
	switch {
	case t.done:
		return errTxDone
	case write && t.readOnly:
		return errReadOnly
	}
	return nil
}

// fail classifies a statement's error and remembers whether it calls for a retry.
func (t *tx) fail(err error) error {
	err = classify(err)
	if errors.Is(err, store.ErrConflict) {
		t.retryable = true
	}
	return fmt.Errorf("postgres store: %w", err)
}

func (t *tx) Get(kind, id string) (*store.Record, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	r := &store.Record{Kind: kind, ID: id}
	err := t.tx.QueryRow(t.ctx, sqlGet, kind, id).Scan(&r.Parent, &r.Version, &r.Seq, &r.Data)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(kind, id)
	}
	if err != nil {
		return nil, t.fail(err)
	}
	return r, nil
}

func (t *tx) Insert(r *store.Record) error {
	if err := t.check(true); err != nil {
		return err
	}
	if r.Kind == "" || r.ID == "" {
		return errInvalid
	}
	var seq int64
	err := t.tx.QueryRow(t.ctx, sqlInsert, r.Kind, r.ID, r.Parent, nonNil(r.Data)).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) { // ON CONFLICT DO NOTHING: the ID is taken
		return fmt.Errorf("%w: %s %q", store.ErrExists, r.Kind, r.ID)
	}
	if err != nil {
		return t.fail(err)
	}
	r.Version, r.Seq = 1, seq
	return t.announce(r)
}

func (t *tx) Put(r *store.Record) error {
	if err := t.check(true); err != nil {
		return err
	}
	var seq int64
	err := t.tx.QueryRow(t.ctx, sqlPut, r.Kind, r.ID, r.Version, r.Parent, nonNil(r.Data)).Scan(&seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return t.putMissed(r)
	}
	if err != nil {
		return t.fail(err)
	}
	r.Version, r.Seq = r.Version+1, seq
	t.cache.drop([]recordKey{{r.Kind, r.ID}})
	return t.announce(r)
}

// putMissed tells why a Put matched no row: the record is gone, or its version moved on.
func (t *tx) putMissed(r *store.Record) error {
	var version int64
	err := t.tx.QueryRow(t.ctx, sqlVersion, r.Kind, r.ID).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return notFound(r.Kind, r.ID)
	}
	if err != nil {
		return t.fail(err)
	}
	return fmt.Errorf("%w: %s %q is at version %d, not %d",
		store.ErrConflict, r.Kind, r.ID, version, r.Version)
}

func (t *tx) Delete(kind, id string) error {
	if err := t.check(true); err != nil {
		return err
	}
	tag, err := t.tx.Exec(t.ctx, sqlDelete, kind, id)
	if err != nil {
		return t.fail(err)
	}
	if tag.RowsAffected() == 0 {
		return notFound(kind, id)
	}
	t.cache.drop([]recordKey{{kind, id}})
	return nil
}

func (t *tx) List(kind string, opt store.ListOptions) ([]*store.Record, error) {
	if err := t.check(false); err != nil {
		return nil, err
	}
	query, args := listQuery(sqlList, sqlListParent, kind, opt)
	rows, err := t.tx.Query(t.ctx, query, args...)
	if err != nil {
		return nil, t.fail(err)
	}
	out, err := collectRecords(rows, kind)
	if err != nil {
		return nil, t.fail(err)
	}
	return out, nil
}

// collectRecords reads the rows of sqlList or sqlListParent.
func collectRecords(rows pgx.Rows, kind string) ([]*store.Record, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*store.Record, error) {
		r := &store.Record{Kind: kind}
		return r, row.Scan(&r.ID, &r.Parent, &r.Version, &r.Seq, &r.Data)
	})
}

// listQuery picks the statement for opt, without or with a parent, and its arguments:
// kind, AfterSeq, the limit (NULL for none) and the parent.
func listQuery(all, byParent, kind string, opt store.ListOptions) (string, []any) {
	var limit any // NULL: no limit
	if opt.Limit > 0 {
		limit = opt.Limit
	}
	if opt.Parent == "" {
		return all, []any{kind, opt.AfterSeq, limit}
	}
	return byParent, []any{kind, opt.AfterSeq, limit, opt.Parent}
}

// classify marks serialization failures and deadlocks as store.ErrConflict (so that Update
// retries) and unique violations as store.ErrExists, keeping the driver's error in the chain.
func classify(err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		if unreachable(err) {
			return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
		}
		return err
	}
	switch {
	case pgErr.Code == serializationFailure, pgErr.Code == deadlockDetected:
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	case pgErr.Code == uniqueViolation:
		return fmt.Errorf("%w: %w", store.ErrExists, err)
	case pgErr.Code == noDataFound: // hoist_write_missed: a deferred write's record is gone
		return fmt.Errorf("%w: %w", store.ErrNotFound, err)
	case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02",
		pgErr.Code == "57P03", pgErr.Code == "53300":
		// connection exceptions; admin or crash shutdown; starting up; too many connections
		return fmt.Errorf("%w: %w", store.ErrUnavailable, err)
	}
	return err
}

// unreachable reports whether err (not an error the server sent) says the database could not
// be reached or the connection broke. A cancelled or timed-out request is not one: its
// caller gave up.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || pgconn.SafeToRetry(err) || strings.Contains(err.Error(), "conn closed")
}

func notFound(kind, id string) error { return fmt.Errorf("%w: %s %q", store.ErrNotFound, kind, id) }

// nonNil stores a nil document as an empty bytea (the column is NOT NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
