package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/console"
	"github.com/hoist-gg/hoist/server"
)

// devSession is one `hoist dev` run: the server it talks to, the fleet it keeps running, and
// the work directory holding the staged builds, process logs and the embedded server's data.
type devSession struct {
	opts   *devOptions
	build  devBuild
	work   string
	srv    *server.Server // the embedded server; nil with --endpoint
	stdout io.Writer
	stderr io.Writer
	fleet  string // the fleet running now
	revs   int    // builds staged so far
	mu     sync.Mutex
}

// errf prints a progress or status line on stderr.
func (d *devSession) errf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintf(d.stderr, "hoist dev: "+format+"\n", args...)
}

// run deploys the build, streams the logs and, on --watch, redeploys until ctx ends; then it
// deletes the fleet and stops the embedded server.
func (d *devSession) run(ctx context.Context) error {
	if d.opts.client.endpoint == "" {
		if err := d.startEmbedded(ctx); err != nil {
			return err
		}
		defer d.stopEmbedded()
	} else {
		d.opts.client.dataDir = server.DefaultDataDir
	}
	logs := filepath.Join(d.work, "logs")
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return err
	}
	tailCtx, stopTail := context.WithCancel(context.Background())
	tailDone := make(chan struct{})
	go func() { defer close(tailDone); tailLogs(tailCtx, logPatterns(logs, d.dataDir()), d.stdout, &d.mu) }()
	defer func() { stopTail(); <-tailDone }()
	fleet, err := d.deploy(ctx)
	if err != nil {
		d.cleanup(fleet)
		return quietCancel(ctx, err)
	}
	d.fleet = fleet
	d.printReady()
	if d.opts.watch {
		d.watch(ctx)
	}
	<-ctx.Done()
	d.errf("stopping")
	d.cleanup(d.fleet)
	return nil
}

// quietCancel turns an error caused by ctx ending (Ctrl-C) into a clean exit.
func quietCancel(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// deploy stages the build, creates it and a fleet, and waits until the fleet is ACTIVE. The
// fleet ID is returned even on failure, so that the caller deletes it.
func (d *devSession) deploy(ctx context.Context) (string, error) {
	d.revs++
	stage, err := d.stage(d.revs)
	if err != nil {
		return "", err
	}
	buildID, err := d.createBuild(ctx, stage)
	if err != nil {
		return "", err
	}
	fleet, err := d.createFleet(ctx, buildID)
	if err != nil {
		return "", err
	}
	d.errf("build %s, fleet %s created", buildID, fleet)
	wctx, cancel := context.WithTimeout(ctx, d.opts.timeout)
	defer cancel()
	return fleet, d.waitActive(wctx, fleet)
}

// cleanup deletes fleet (if any) and waits a little for it to go.
func (d *devSession) cleanup(fleet string) {
	if fleet == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := d.deleteFleet(ctx, fleet); err != nil {
		d.errf("deleting fleet %s: %v", fleet, err)
		return
	}
	d.errf("fleet %s deleted", fleet)
}

// printReady prints the endpoint, keys, fleet and commands to paste.
func (d *devSession) printReady() {
	c := d.opts.client
	env := fmt.Sprintf("AWS_ENDPOINT_URL=%s AWS_ACCESS_KEY_ID=%s AWS_SECRET_ACCESS_KEY=%s AWS_REGION=%s",
		c.endpoint, c.creds.AccessKeyID, c.creds.SecretAccessKey, c.region)
	lines := []string{
		"",
		"Fleet " + d.fleet + " is ACTIVE.",
		"  endpoint:          " + c.endpoint,
		"  access key ID:     " + c.creds.AccessKeyID,
		"  secret access key: " + c.creds.SecretAccessKey,
		"  fleet ID:          " + d.fleet,
		"  console:           " + strings.TrimSuffix(c.endpoint, "/") + console.Path + "  (log in with the key pair)",
		"",
		"Try:",
		"  export " + env,
		"  aws gamelift create-game-session --fleet-id " + d.fleet + " --maximum-player-session-count 4",
		"  aws gamelift describe-game-sessions --fleet-id " + d.fleet,
		"  hoist time advance 61s   # dev mode: move the server's clock (docs/dev.md)",
		"",
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	fmt.Fprintln(d.stdout, strings.Join(lines, "\n"))
}
