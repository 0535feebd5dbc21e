package postgres

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// notifyChannel is the LISTEN/NOTIFY channel announcements travel on. A payload is
// "<kind> <parent>".
const notifyChannel = "hoist_announce"

// sqlNotify queues an announcement; PostgreSQL delivers it to listeners when, and only if,
// the transaction commits.
const sqlNotify = `SELECT pg_notify('` + notifyChannel + `', $1)`

// maxPayload is below PostgreSQL's 8000-byte NOTIFY payload limit; a longer announcement is
// cut, and the watcher then learns only that something of its kind changed.
const maxPayload = 7900

var _ store.Watcher = (*Store)(nil)

// announce queues the announcement of r's write when its kind is announced.
func (t *tx) announce(r *store.Record) error {
	if !store.Announced(r.Kind) {
		return nil
	}
	if _, err := t.tx.Exec(t.ctx, sqlNotify, payloadOf(r)); err != nil {
		return t.fail(err)
	}
	return nil
}

// payloadOf is the announcement of r's write: "<kind> <parent>", or "<kind> " when that is too
// long.
func payloadOf(r *store.Record) string {
	payload := r.Kind + " " + r.Parent
	if len(payload) > maxPayload {
		payload = r.Kind + " "
	}
	return payload
}

// Watch listens on one dedicated connection and calls fn for every announcement from any
// process sharing the database, until ctx is done. Whenever the connection is (re)established
// it first calls fn with Missed set, since announcements sent while it was down are lost.
func (s *Store) Watch(ctx context.Context, fn func(store.Announcement)) {
	go func() {
		for attempt := 1; ctx.Err() == nil; attempt++ {
			if s.listen(ctx, fn) {
				attempt = 1
			}
			if ctx.Err() == nil {
				_ = wait(ctx, min(time.Duration(attempt)*100*time.Millisecond, 2*time.Second))
			}
		}
	}()
}

// listen holds one LISTEN connection until it fails or ctx is done; it reports whether the
// connection was established.
func (s *Store) listen(ctx context.Context, fn func(store.Announcement)) bool {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return false
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		conn.Conn().Close(context.WithoutCancel(ctx)) // do not hand a half-set connection back
		return false
	}
	fn(store.Announcement{Missed: true})
	for {
		n, err := conn.Conn().WaitForNotification(ctx)
		if err != nil {
			if ctx.Err() == nil {
				slog.Debug("postgres store: LISTEN connection lost", "err", err)
			}
			conn.Conn().Close(context.WithoutCancel(ctx))
			return true
		}
		fn(parseAnnouncement(n.Payload))
	}
}

// parseAnnouncement reads a payload written by announce.
func parseAnnouncement(payload string) store.Announcement {
	kind, parent, _ := strings.Cut(payload, " ")
	return store.Announcement{Kind: kind, Parent: parent}
}
