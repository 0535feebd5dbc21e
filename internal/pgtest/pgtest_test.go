package pgtest_test

import (
	"context"
	"testing"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDatabasesAreSeparate checks that two DSNs reach two different, working databases.
func TestDatabasesAreSeparate(t *testing.T) {
	ctx := context.Background()
	a, b := connect(t, pgtest.DSN(t)), connect(t, pgtest.DSN(t))
	if _, err := a.Exec(ctx, `CREATE TABLE t (x int)`); err != nil {
		t.Fatal(err)
	}
	var n int
	err := b.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE tablename = 't'`).Scan(&n)
	if err != nil || n != 0 {
		t.Errorf("second database sees the first's table: n=%d err=%v", n, err)
	}
	var addr string
	if err := a.QueryRow(ctx, `SELECT host(inet_server_addr())`).Scan(&addr); err != nil || addr != "127.0.0.1" {
		t.Errorf("server address %q (%v), want 127.0.0.1", addr, err)
	}
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
