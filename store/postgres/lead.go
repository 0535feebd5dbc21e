package postgres

import (
	"context"
	"log/slog"
	"time"

	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
)

// Leadership is a PostgreSQL session-level advisory lock, held on a connection of its own
// for as long as the process leads. PostgreSQL releases it the moment that connection ends:
// when the process dies, its kernel closes the socket; when the host or the network dies, the
// server's TCP keepalives (set short on this connection) end the session within seconds. The
// leader checks its connection every pingEvery and steps down when a check fails or takes
// longer than pingTimeout, so a leader cut off from the database stops within seconds too.
const (
	// leaderLockKey is the advisory lock's key: "leader" in ASCII, distinct from schemaLock.
	leaderLockKey = 0x6c6561646572
	// campaignEvery is how often a follower tries to take the lock.
	campaignEvery = time.Second
	pingEvery     = time.Second
	pingTimeout   = 2 * time.Second
)

var _ store.Elector = (*Store)(nil)

// Lead campaigns for leadership until ctx is done; see store.Elector.
func (s *Store) Lead(ctx context.Context, lead func(ctx context.Context)) {
	for ctx.Err() == nil {
		if err := s.campaign(ctx, lead); err != nil && ctx.Err() == nil {
			slog.Debug("postgres store: leadership connection failed", "err", err)
		}
		_ = wait(ctx, campaignEvery)
	}
}

// campaign opens the connection that holds the lock, tries to take it until it does, then
// runs lead until the connection fails or ctx ends.
func (s *Store) campaign(ctx context.Context, lead func(ctx context.Context)) error {
	conn, err := s.leaderConn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	for {
		var won bool
		if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(leaderLockKey)).Scan(&won); err != nil {
			return err
		}
		if won {
			break
		}
		if err := wait(ctx, campaignEvery); err != nil {
			return err
		}
	}
	leading, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		lead(leading)
	}()
	err = holdLock(leading, conn)
	stop()
	<-done
	return err
}

// leaderConn opens a connection outside the pool (the lock lives as long as it does) with
// short server-side TCP keepalives.
func (s *Store) leaderConn(ctx context.Context) (*pgx.Conn, error) {
	cfg := s.pool.Config().ConnConfig.Copy()
	if cfg.RuntimeParams == nil {
		cfg.RuntimeParams = map[string]string{}
	}
	cfg.RuntimeParams["tcp_keepalives_idle"] = "2"
	cfg.RuntimeParams["tcp_keepalives_interval"] = "1"
	cfg.RuntimeParams["tcp_keepalives_count"] = "3"
	cfg.RuntimeParams["application_name"] = "hoist-leader"
	return pgx.ConnectConfig(ctx, cfg)
}

// holdLock checks the connection every pingEvery until a check fails or ctx is done.
func holdLock(ctx context.Context, conn *pgx.Conn) error {
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err := conn.Ping(pctx)
		cancel()
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
}
