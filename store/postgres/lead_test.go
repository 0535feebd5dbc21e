package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/internal/testwait"
	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
)

// campaigner is one process campaigning for leadership through its own store.
type campaigner struct {
	leading atomic.Bool
	terms   atomic.Int32
	cancel  context.CancelFunc
	done    chan struct{}
}

// campaign starts a campaigner; overlap counts those leading, and two at once fail the test
// unless strict has been cleared (a leader whose session the database killed learns of it
// only at its next check, as store.Elector says).
func campaign(t *testing.T, dsn string, overlap *atomic.Int32, strict *atomic.Bool) *campaigner {
	st, err := open(dsn)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &campaigner{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		st.(store.Elector).Lead(ctx, func(ctx context.Context) {
			if overlap.Add(1) > 1 && strict.Load() {
				t.Error("two campaigners lead at once")
			}
			c.leading.Store(true)
			c.terms.Add(1)
			<-ctx.Done()
			c.leading.Store(false)
			overlap.Add(-1)
		})
	}()
	t.Cleanup(func() { c.stop(); st.Close() })
	return c
}

func (c *campaigner) stop() { c.cancel(); <-c.done }

func leaders(cs []*campaigner) (n int, who *campaigner) {
	for _, c := range cs {
		if c.leading.Load() {
			n, who = n+1, c
		}
	}
	return n, who
}

// TestLeadership has three campaigners on one database: one leads at a time; when the leader
// stops, or its connection is killed from the database's side, another leads within seconds.
func TestLeadership(t *testing.T) {
	dsn := pgtest.DSN(t)
	var overlap atomic.Int32
	var strict atomic.Bool
	strict.Store(true)
	var cs []*campaigner
	for range 3 {
		cs = append(cs, campaign(t, dsn, &overlap, &strict))
	}
	var leader *campaigner
	testwait.Until(t, 10*time.Second, 20*time.Millisecond, "a leader", func() bool {
		n, who := leaders(cs)
		leader = who
		return n == 1
	})
	leader.stop()
	var next *campaigner
	testwait.Until(t, 5*time.Second, 20*time.Millisecond, "a new leader after a clean stop", func() bool {
		n, who := leaders(cs)
		next = who
		return n == 1 && who != leader
	})

	// Kill the leader's session in the database: it steps down, and another process leads.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	terms := next.terms.Load()
	strict.Store(false)
	var killed int
	if err := conn.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_locks
		WHERE locktype = 'advisory' AND granted AND classid = $1 AND objid = $2`,
		uint32(0x6c6561646572>>32), uint32(0x6c6561646572&0xffffffff)).Scan(&killed); err != nil || killed != 1 {
		t.Fatalf("terminating the leader's session: %d sessions, %v", killed, err)
	}
	testwait.Until(t, 10*time.Second, 20*time.Millisecond, "leadership to move after the leader's session died", func() bool {
		n, _ := leaders(cs)
		return n == 1 && (!next.leading.Load() || next.terms.Load() > terms)
	})
}
