package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/hoist-gg/hoist/server"
)

const timeUsage = `Usage:
  hoist time [flags]                  print the server's time
  hoist time advance DURATION [flags] move a dev-mode server's clock forward (90s, 5m, 1h30m, or seconds)
  hoist time set TIME [flags]         move a dev-mode server's clock to an RFC 3339 time (never backwards)

The server must run with --dev (docs/dev.md). Flags:
`

// runTime is `hoist time`: it reads or moves a dev-mode server's virtual clock.
func runTime(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c adminClient
	fs := flag.NewFlagSet("hoist time", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), timeUsage); fs.PrintDefaults() }
	c.flags(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	target, in, err := timeRequest(pos)
	if err != nil {
		return err
	}
	var out server.TimeOutput
	if err := c.call(ctx, target, in, &out); err != nil {
		return err
	}
	printTime(stdout, out)
	return nil
}

// timeRequest turns `hoist time`'s arguments into an operation and its input.
func timeRequest(pos []string) (string, any, error) {
	switch {
	case len(pos) == 0:
		return server.GetTimeTarget, server.GetTimeInput{}, nil
	case pos[0] == "advance" && len(pos) == 2:
		d, err := parseAdvance(pos[1])
		if err != nil {
			return "", nil, err
		}
		return server.AdvanceTimeTarget, server.AdvanceTimeInput{Seconds: d.Seconds()}, nil
	case pos[0] == "set" && len(pos) == 2:
		if _, err := time.Parse(time.RFC3339Nano, pos[1]); err != nil {
			return "", nil, fmt.Errorf("time set: %q is not an RFC 3339 time (e.g. 2026-12-01T10:00:00Z)", pos[1])
		}
		return server.SetTimeTarget, server.SetTimeInput{Time: pos[1]}, nil
	}
	return "", nil, errors.New("usage: hoist time [advance DURATION | set TIME] (hoist time -h)")
}

// parseAdvance reads a Go duration (90s, 5m) or a number of seconds.
func parseAdvance(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return d, nil
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), nil
	}
	return 0, fmt.Errorf("time advance: %q is not a duration (90s, 5m, 1h30m) or a number of seconds, not negative", s)
}

// printTime prints the server's time and how far ahead of the wall clock it is.
func printTime(w io.Writer, out server.TimeOutput) {
	offset := time.Duration(out.OffsetSeconds * float64(time.Second)).Round(time.Second)
	switch {
	case !out.Dev:
		fmt.Fprintf(w, "%s (not in dev mode: the wall clock)\n", out.Time)
	default:
		fmt.Fprintf(w, "%s (%s ahead of the wall clock)\n", out.Time, offset)
	}
}
