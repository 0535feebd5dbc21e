package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hoist-gg/hoist/internal/cli"
	"github.com/hoist-gg/hoist/server"
)

const devUsage = `Usage:
  hoist dev DIR-or-BINARY [flags]

Runs a game server build as a local managed fleet: starts an embedded dev-mode server (unless
--endpoint names a running one), creates a build and a fleet, waits until ACTIVE, prints the
endpoint, keys and CLI commands, and streams the processes' output as "[process-id] line".
The fleet's settings come from the flags, else from hoist.yaml or hoist.json beside the build
(docs/dev.md). Ctrl-C deletes the fleet and stops the server. Flags:
`

// devOptions are `hoist dev`'s flags.
type devOptions struct {
	spec devSpec         // the fleet flags (LaunchPath, Parameters, Processes, ... as the flags give them)
	set  map[string]bool // the flags given on the command line, environment or --config
	// activationTimeout is --activation-timeout (the spec's gameSessionActivationTimeoutSeconds).
	activationTimeout time.Duration
	target            string // the build directory or binary
	watch             bool
	listen            string
	keep              bool // keep the temporary data directory
	timeout           time.Duration
	client            adminClient
}

// devFlags registers `hoist dev`'s flags on fs.
func devFlags(fs *flag.FlagSet, o *devOptions) {
	fs.StringVar(&o.spec.LaunchPath, "launch-path", "", "the server process's launch path under /local/game/ (default: the binary, or the spec file's launchPath)")
	fs.StringVar(&o.spec.Parameters, "parameters", "", "the server process's parameters")
	fs.IntVar(&o.spec.Processes, "processes", 1, "concurrent server processes per instance")
	fs.IntVar(&o.spec.Instances, "instances", 1, "instances in the fleet")
	fs.StringVar(&o.spec.PortRange, "port-range", "7000-8000", "the fleet's inbound TCP and UDP port range, FROM-TO")
	fs.StringVar(&o.spec.Name, "name", "", "the fleet's name (default hoist-dev-N, N counting deployments)")
	fs.StringVar(&o.spec.InstanceType, "instance-type", "c5.large", "the fleet's EC2 instance type (its CPU and memory limits)")
	fs.IntVar(&o.spec.MaxActivations, "max-concurrent-activations", 0, "the runtime configuration's MaxConcurrentGameSessionActivations (default GameLift's)")
	fs.DurationVar(&o.activationTimeout, "activation-timeout", 0, "the runtime configuration's GameSessionActivationTimeoutSeconds, as a duration (default GameLift's)")
	fs.BoolVar(&o.watch, "watch", false, "when the binary changes, deploy it as a new fleet and delete the old one")
	fs.StringVar(&o.listen, "listen", server.DefaultListen, "TCP address of the embedded server's API")
	fs.BoolVar(&o.keep, "keep-data", false, "keep the embedded server's temporary data directory on exit")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "how long to wait for the fleet to become ACTIVE")
	fs.StringVar(&o.client.endpoint, "endpoint", "", "a running server's API URL to use instead of an embedded one")
	fs.StringVar(&o.client.creds.AccessKeyID, "access-key-id", "", "access key ID for --endpoint")
	fs.StringVar(&o.client.creds.SecretAccessKey, "secret-access-key", "", "secret access key for --endpoint")
	fs.StringVar(&o.client.region, "region", server.DefaultRegion, "SigV4 region for --endpoint")
}

// parseDev parses `hoist dev`'s arguments: the build and flags before or after it.
func parseDev(args []string, out io.Writer) (*devOptions, error) {
	o := &devOptions{}
	fs := flag.NewFlagSet("hoist dev", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() { fmt.Fprint(fs.Output(), devUsage); fs.PrintDefaults() }
	devFlags(fs, o)
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	pos := fs.Args()
	if len(pos) > 0 {
		if err := cli.Parse(fs, pos[1:]); err != nil {
			return nil, err
		}
	}
	if len(pos) == 0 || fs.NArg() > 0 {
		return nil, &cli.UsageError{Err: errors.New("want one DIR-or-BINARY argument")}
	}
	o.target = pos[0]
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, nil
}

// runDev is `hoist dev`.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseDev(args, stderr)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "hoist-dev-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	if err := buildGoSource(o, work); err != nil {
		return err
	}
	b, err := resolveBuild(o)
	if err != nil {
		return err
	}
	d := &devSession{opts: o, build: b, work: work, stdout: stdout, stderr: stderr}
	return d.run(ctx)
}

// devBuild is the build `hoist dev` deploys.
type devBuild struct {
	dir    string    // absolute build directory
	binary string    // absolute path of the launched binary, watched with --watch
	spec   fleetSpec // the fleet, with launch paths under /local/game/
}

// resolveBuild finds the build directory and binary, and merges the flags with the spec file
// beside the build (devspec.go).
func resolveBuild(o *devOptions) (devBuild, error) {
	abs, err := filepath.Abs(o.target)
	if err != nil {
		return devBuild{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return devBuild{}, err
	}
	b := devBuild{dir: abs}
	if !st.IsDir() {
		b.dir, b.binary = filepath.Dir(abs), abs
	}
	file, err := readSpecFile(b.dir)
	if err != nil {
		return devBuild{}, err
	}
	if b.spec, err = mergeSpec(o, file); err != nil {
		return devBuild{}, err
	}
	return b.withLaunchPaths()
}

// startEmbedded starts a dev-mode server on a data directory under work and points the
// client at it.
func (d *devSession) startEmbedded(ctx context.Context) error {
	log := slog.New(slog.NewTextHandler(d.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	srv, err := server.New(ctx, server.Config{Dev: true, DataDir: filepath.Join(d.work, "data"),
		Listen: d.opts.listen, TLSListen: "", S3Listen: "", StatsDListen: server.StatsDOff, Logger: log})
	if err != nil {
		return err
	}
	go srv.Serve()
	d.srv = srv
	c := srv.Credentials()
	d.opts.client.endpoint = srv.URL()
	d.opts.client.creds = aws.Credentials{AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey}
	d.opts.client.region = server.DefaultRegion
	return nil
}

// stopEmbedded shuts the embedded server down, if there is one.
func (d *devSession) stopEmbedded() {
	if d.srv == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d.srv.Shutdown(ctx)
}
