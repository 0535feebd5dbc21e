package server_test

import (
	"testing"

	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// TestMain installs contain.Main (local instances run contained: the test binary is their
// init) and starts PostgreSQL for the tests that need it.
func TestMain(m *testing.M) {
	contain.Main()
	pgtest.Main(m)
}

// TestGoSDKLifecyclePostgres runs the Go SDK lifecycle on the PostgreSQL store.
func TestGoSDKLifecyclePostgres(t *testing.T) {
	srv := startServer(t, server.Config{Store: pgtest.DSN(t)})
	runLifecycle(t, client(srv.URL(), testKeyID, testSecret))
}

// TestTwoNodesShareOnePostgres checks that what one server node writes, another node on the
// same database reads.
func TestTwoNodesShareOnePostgres(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := startServer(t, server.Config{Store: dsn})
	b := startServer(t, server.Config{Store: dsn})
	runAliases(t, client(a.URL(), testKeyID, testSecret))
	checkAliasesVisible(t, client(a.URL(), testKeyID, testSecret), client(b.URL(), testKeyID, testSecret))
}

// TestKill9Postgres is the kill -9 test with the server on PostgreSQL.
func TestKill9Postgres(t *testing.T) {
	testKill9(t, "--store", pgtest.DSN(t))
}
