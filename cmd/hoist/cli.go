package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/hoist-gg/hoist/internal/cli"
)

// version is Hoist's version, set at build time:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/hoist
var version = "dev"

// run runs the command in args and names it in usage errors ("server: flag provided but not
// defined: -x (hoist server -h)").
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := dispatch(ctx, args, stdout, stderr)
	var ue *cli.UsageError
	if errors.As(err, &ue) && len(args) > 0 {
		return &cli.UsageError{Err: fmt.Errorf("%s: %w (hoist %s -h)", args[0], err, args[0])}
	}
	return err
}

// exitCode reports err on stderr in one line and returns the process's exit code: 0 for
// success and for -h/--help, 2 for any error.
func exitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, "hoist:", err)
	return 2
}

// printVersion prints `hoist version`: the version, the Go version and, when the binary was
// built from a VCS checkout, the revision (with "+dirty" for uncommitted changes).
func printVersion(w io.Writer) {
	rev := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		rev = revision(info.Settings)
	}
	fmt.Fprintf(w, "hoist %s (%s, revision %s)\n", version, runtime.Version(), rev)
}

// revision returns the VCS revision recorded in build settings, or "unknown".
func revision(settings []debug.BuildSetting) string {
	rev, dirty := "unknown", false
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}
