// Command hoist-testpg starts a throwaway PostgreSQL cluster the way Hoist's tests do, prints
// its DSN on one line, and stops and removes the cluster when its standard input closes or it
// receives SIGINT or SIGTERM. Scripts use it to get a database for benchmarks and end-to-end
// runs:
//
//	coproc PG { go run ./internal/pgtest/cmd/hoist-testpg; }
//	read -r DSN <&"${PG[0]}"
//
// With $HOIST_TEST_POSTGRES_DSN set it prints that DSN and starts nothing.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/hoist-gg/hoist/internal/pgtest"
)

func main() {
	if dsn := os.Getenv("HOIST_TEST_POSTGRES_DSN"); dsn != "" {
		fmt.Println(dsn)
		return
	}
	c, err := pgtest.StartCluster(context.Background())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(c.DSN())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	<-ctx.Done()
	if err := c.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
