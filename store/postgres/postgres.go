// Package postgres is Hoist's shared store: records in one PostgreSQL table, so that several
// Hoist server processes can use one database.
//
// Correctness across processes comes from the database, never from in-process locks: Update
// runs in a SERIALIZABLE transaction, Put is a compare-and-set on the record's version
// (UPDATE ... WHERE version = $n), and Insert relies on the primary key. Serialization
// failures and deadlocks surface as store.ErrConflict, so Update runs its function again
// after a short, jittered backoff, a bounded number of times. View runs in a READ ONLY
// REPEATABLE READ transaction: one snapshot.
//
// SERIALIZABLE keeps the two stores equivalent: the embedded store runs its Updates one at a
// time, so domain code that is correct on it (say, "check no alias has this name, then insert")
// is correct here too.
//
// An Update marked store.CompareAndSetOnly, whose correctness rests on the compare-and-set
// alone, runs without a transaction around its reads and applies its writes in one statement
// shared with the others committing at the same moment (deferred.go, readcache.go,
// applyqueue.go).
//
// Only the process's wiring imports this package: the domain sees the store.Store interface.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Retry policy of Update.
const (
	maxAttempts = 30
	baseBackoff = time.Millisecond
	maxBackoff  = 50 * time.Millisecond
)

// Store is the PostgreSQL store. It implements store.Store.
type Store struct {
	pool    *pgxpool.Pool
	cache   readCache  // records read or written by CompareAndSetOnly Updates (readcache.go)
	applies applyQueue // their writes waiting to be applied (applyqueue.go)
}

var _ store.Store = (*Store)(nil)

// Open connects to the database at dsn (a libpq URL or keyword/value string) and creates or
// migrates the schema. Several processes may Open the same database at once.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = defaultMaxConns()
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	if err := migrate(ctx, pool); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres store: schema: %w", err)
	}
	return &Store{pool: pool}, nil
}

// defaultMaxConns sizes the pool when the DSN does not (pool_max_conns): a request holds a
// connection only for its own round trips, so a few more connections than pgxpool's default
// (the number of CPUs, at least 4) keep concurrent requests from queueing for one; measured
// with 16 concurrent claims on 2 CPUs, 4 connections gave 0.42 of the claims 16 gave. At most
// 32, so that three nodes stay under PostgreSQL's default max_connections of 100.
func defaultMaxConns() int32 {
	return int32(min(max(16, 4*runtime.GOMAXPROCS(0)), 32))
}

// Close closes every connection, waiting for transactions in progress.
func (s *Store) Close() error {
	s.pool.Close()
	return nil
}

// Get reads one record with a single statement (one round trip, no transaction).
func (s *Store) Get(ctx context.Context, kind, id string) (*store.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	r := &store.Record{Kind: kind, ID: id}
	err := retryUnavailable(ctx, func() error {
		return classify(s.pool.QueryRow(ctx, sqlGet, kind, id).Scan(&r.Parent, &r.Version, &r.Seq, &r.Data))
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(kind, id)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres store: %w", err)
	}
	return r, nil
}

// Retry policy for an unreachable database. A restart leaves broken connections in the pool,
// and each fails once before the pool replaces it, so a single-statement read, or a
// transaction that could not begin (nothing of it ran), is tried a few times before
// ErrUnavailable reaches the caller. A transaction that failed after it began is not retried
// here: its commit may have happened.
const (
	unavailableAttempts = 3
	unavailableBackoff  = 100 * time.Millisecond
)

// retryUnavailable runs fn until it succeeds, fails with something other than ErrUnavailable,
// or has run unavailableAttempts times.
func retryUnavailable(ctx context.Context, fn func() error) error {
	for attempt := 1; ; attempt++ {
		err := fn()
		if err == nil || !errors.Is(err, store.ErrUnavailable) || attempt == unavailableAttempts {
			return err
		}
		if wait(ctx, time.Duration(attempt)*unavailableBackoff) != nil {
			return err
		}
	}
}

// begin starts a transaction, retrying while the database is unreachable.
func (s *Store) begin(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	var ptx pgx.Tx
	err := retryUnavailable(ctx, func() error {
		var err error
		ptx, err = s.pool.BeginTx(ctx, opts)
		return classify(err)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: begin: %w", err)
	}
	return ptx, nil
}

// View runs fn in a read-only transaction on one snapshot.
func (s *Store) View(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ptx, err := s.begin(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	tx := &tx{ctx: ctx, tx: ptx, readOnly: true, cache: &s.cache}
	err = fn(tx)
	tx.done = true
	if err != nil {
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres store: commit: %w", classify(err))
	}
	return nil
}

// Update runs fn in a serializable transaction and commits it; see store.Store. fn runs again
// when it or the commit fails with a conflict, up to maxAttempts times.
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	once := s.updateOnce
	if store.IsCompareAndSetOnly(ctx) {
		once = s.updateDeferred // its reads need no transaction, its writes go in one batch
	}
	for attempt := 1; ; attempt++ {
		err := once(ctx, fn)
		if err == nil || !errors.Is(err, store.ErrConflict) {
			return err
		}
		if attempt == maxAttempts {
			return fmt.Errorf("postgres store: gave up after %d attempts: %w", attempt, err)
		}
		if werr := wait(ctx, backoff(attempt)); werr != nil {
			return err
		}
	}
}

// updateOnce runs one attempt of Update.
func (s *Store) updateOnce(ctx context.Context, fn func(store.Tx) error) error {
	ptx, err := s.begin(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	defer ptx.Rollback(context.WithoutCancel(ctx))
	tx := &tx{ctx: ctx, tx: ptx, cache: &s.cache}
	err = fn(tx)
	tx.done = true
	if err != nil {
		return err
	}
	if err := ptx.Commit(ctx); err != nil {
		err = classify(err)
		if tx.retryable && !errors.Is(err, store.ErrConflict) {
			// fn swallowed a serialization failure, so the commit only rolled back.
			err = fmt.Errorf("%w: %w", store.ErrConflict, err)
		}
		return fmt.Errorf("postgres store: commit: %w", err)
	}
	return nil
}

// backoff returns the wait before attempt+1: exponential from baseBackoff, capped at
// maxBackoff, with jitter so that competing writers spread out.
func backoff(attempt int) time.Duration {
	d := min(baseBackoff<<min(attempt-1, 10), maxBackoff)
	return d/2 + rand.N(d/2+1)
}

// wait returns after d, or early with ctx's error (wall-clock pacing of retries).
func wait(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, clock.Real{}, d) }
