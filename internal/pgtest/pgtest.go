// Package pgtest gives tests a real PostgreSQL database. When $HOIST_TEST_POSTGRES_DSN is set
// it uses that server; otherwise it starts one throwaway cluster per test binary from the
// installed PostgreSQL binaries, on 127.0.0.1 and a free port, and removes it when the binary
// exits. Every DSN(t) call gets a new, empty database, dropped when the test ends.
//
// A package whose tests use it declares
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without PostgreSQL binaries or a DSN the tests fail; set HOIST_TEST_SKIP_POSTGRES=1 to skip
// them instead. Code outside tests (a benchmark driver, a script) can use StartCluster, or the
// hoist-testpg command in cmd/, to get a server the same way.
//
// Only tests and test tools import this package.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables that steer pgtest.
const (
	envDSN  = "HOIST_TEST_POSTGRES_DSN"  // a server to use instead of starting one
	envSkip = "HOIST_TEST_SKIP_POSTGRES" // "1": skip PostgreSQL tests
)

var (
	inMain atomic.Bool // Main is running the tests

	once       sync.Once
	cluster    *Cluster // the cluster this binary started, if any
	serverDSN  string
	startError error
)

// Main runs the tests and then stops the cluster, if one was started. Call it from TestMain.
func Main(m *testing.M) {
	inMain.Store(true)
	code := m.Run()
	if cluster != nil {
		if err := cluster.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	os.Exit(code)
}

// DSN returns the DSN of a new, empty database for t and drops the database when t ends. It
// skips t when HOIST_TEST_SKIP_POSTGRES=1 and fails it when no server can be had.
func DSN(t testing.TB) string {
	t.Helper()
	if os.Getenv(envSkip) == "1" {
		t.Skip(envSkip + "=1")
	}
	if !inMain.Load() && os.Getenv(envDSN) == "" {
		t.Fatal("pgtest: call pgtest.Main from TestMain so that the cluster is stopped at exit")
	}
	server, err := Server()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dsn, drop, err := NewDatabase(ctx, server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return dsn
}

// Server returns the DSN of the server tests use: $HOIST_TEST_POSTGRES_DSN, or the cluster
// this process started on its first call. Tests should use DSN instead; this is for tools.
func Server() (string, error) {
	if dsn := os.Getenv(envDSN); dsn != "" {
		return dsn, nil
	}
	once.Do(func() {
		cluster, startError = StartCluster(context.Background())
		if startError == nil {
			serverDSN = cluster.DSN()
		}
	})
	return serverDSN, startError
}

// NewDatabase creates an empty database with a unique name on the server and returns its DSN
// and a function that drops it (disconnecting anyone still connected).
func NewDatabase(ctx context.Context, server string) (dsn string, drop func() error, err error) {
	conn, err := pgx.Connect(ctx, server)
	if err != nil {
		return "", nil, fmt.Errorf("pgtest: connect to %s: %w", redact(server), err)
	}
	defer conn.Close(ctx)
	name := "hoist_test_" + randomHex(8)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", nil, fmt.Errorf("pgtest: create database: %w", err)
	}
	dsn, err = withDatabase(server, name)
	drop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, server)
		if err != nil {
			return err
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)")
		return err
	}
	return dsn, drop, err
}

// withDatabase returns dsn (a URL or a keyword/value string) pointing at database name.
func withDatabase(dsn, name string) (string, error) {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return "", fmt.Errorf("pgtest: parse DSN: %w", err)
		}
		u.Path = "/" + name
		return u.String(), nil
	}
	// In keyword/value form the last setting of a keyword wins.
	return dsn + " dbname=" + name, nil
}

// redact hides a password in a URL DSN for error messages.
func redact(dsn string) string {
	if u, err := url.Parse(dsn); err == nil && u.User != nil {
		return u.Redacted()
	}
	return "the server"
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// OwnCluster starts a cluster of t's own, for tests that halt and resume PostgreSQL, and
// stops it when t ends. It skips t when HOIST_TEST_SKIP_POSTGRES=1, or when
// HOIST_TEST_POSTGRES_DSN names a server and this machine has no PostgreSQL binaries.
func OwnCluster(t testing.TB) *Cluster {
	t.Helper()
	if os.Getenv(envSkip) == "1" {
		t.Skip(envSkip + "=1")
	}
	if _, err := findBinaries(); err != nil && os.Getenv(envDSN) != "" {
		t.Skip("no PostgreSQL binaries to start a cluster of the test's own")
	}
	c, err := StartCluster(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("pgtest: %v", err)
		}
	})
	return c
}
