package main

import (
	"context"
	"io"

	"github.com/hoist-gg/hoist/bench/matchsim"
)

// runMatchsim is `hoist matchsim`: the matchmaking simulator and benchmark (package
// bench/matchsim, docs/benchmarks.md).
func runMatchsim(ctx context.Context, args []string, stdout io.Writer) error {
	return matchsim.Main(ctx, args, stdout)
}
