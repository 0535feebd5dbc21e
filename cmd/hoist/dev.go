package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
The runtime configuration comes from the flags, else from hoist.json beside the build
(docs/dev.md). Ctrl-C deletes the fleet and stops the server. Flags:
`

// devSpec is what `hoist dev` runs: the flags, merged with hoist.json.
type devSpec struct {
	LaunchPath string `json:"launchPath"`
	Parameters string `json:"parameters"`
	Processes  int    `json:"processes"`
	Instances  int    `json:"instances"`
	PortRange  string `json:"portRange"`
}

// devOptions are `hoist dev`'s flags.
type devOptions struct {
	spec    devSpec
	set     map[string]bool // the spec flags given on the command line, environment or --config
	target  string          // the build directory or binary
	watch   bool
	listen  string
	keep    bool // keep the temporary data directory
	timeout time.Duration
	client  adminClient
}

// devFlags registers `hoist dev`'s flags on fs.
func devFlags(fs *flag.FlagSet, o *devOptions) {
	fs.StringVar(&o.spec.LaunchPath, "launch-path", "", "the server process's launch path under /local/game/ (default: the binary, or hoist.json's launchPath)")
	fs.StringVar(&o.spec.Parameters, "parameters", "", "the server process's parameters")
	fs.IntVar(&o.spec.Processes, "processes", 1, "concurrent server processes per instance")
	fs.IntVar(&o.spec.Instances, "instances", 1, "instances in the fleet")
	fs.StringVar(&o.spec.PortRange, "port-range", "7000-8000", "the fleet's inbound TCP and UDP port range, FROM-TO")
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
	b, err := resolveBuild(o)
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
	d := &devSession{opts: o, build: b, work: work, stdout: stdout, stderr: stderr}
	return d.run(ctx)
}

// devBuild is the build `hoist dev` deploys.
type devBuild struct {
	dir    string  // absolute build directory
	binary string  // absolute path of the launched binary, watched with --watch
	spec   devSpec // the runtime configuration, with LaunchPath under /local/game/
}

// resolveBuild finds the build directory and binary, and merges the flags with hoist.json.
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
	file, err := readHoistJSON(b.dir)
	if err != nil {
		return devBuild{}, err
	}
	b.spec = mergeSpec(o, file)
	return b.withLaunchPath()
}

// readHoistJSON reads hoist.json in dir; a missing file is an empty spec.
func readHoistJSON(dir string) (devSpec, error) {
	var s devSpec
	data, err := os.ReadFile(filepath.Join(dir, "hoist.json"))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%s: %v", filepath.Join(dir, "hoist.json"), err)
	}
	return s, nil
}

// mergeSpec takes each field from the flags when given, else from hoist.json when set there,
// else the flag's default.
func mergeSpec(o *devOptions, file devSpec) devSpec {
	s := o.spec
	pick := func(flag string, zero bool, apply func()) {
		if !o.set[flag] && !zero {
			apply()
		}
	}
	pick("launch-path", file.LaunchPath == "", func() { s.LaunchPath = file.LaunchPath })
	pick("parameters", file.Parameters == "", func() { s.Parameters = file.Parameters })
	pick("processes", file.Processes == 0, func() { s.Processes = file.Processes })
	pick("instances", file.Instances == 0, func() { s.Instances = file.Instances })
	pick("port-range", file.PortRange == "", func() { s.PortRange = file.PortRange })
	return s
}

// withLaunchPath settles the launch path (under /local/game/) and the binary to watch.
func (b devBuild) withLaunchPath() (devBuild, error) {
	lp := b.spec.LaunchPath
	switch {
	case lp == "" && b.binary == "":
		return b, errors.New("no launch path: name the binary, or give --launch-path or hoist.json's launchPath")
	case lp == "":
		lp = filepath.Base(b.binary)
	}
	rel := strings.TrimPrefix(filepath.ToSlash(lp), "/local/game/")
	if b.binary == "" {
		b.binary = filepath.Join(b.dir, filepath.FromSlash(rel))
	}
	if _, err := os.Stat(b.binary); err != nil {
		return b, fmt.Errorf("launch path: %v", err)
	}
	b.spec.LaunchPath = "/local/game/" + rel
	return b, nil
}

// portRange parses FROM-TO.
func portRange(s string) (int, int, error) {
	from, to, ok := strings.Cut(s, "-")
	f, err1 := strconv.Atoi(from)
	t, err2 := strconv.Atoi(to)
	if !ok || err1 != nil || err2 != nil || f < 1 || t < f || t > 65535 {
		return 0, 0, fmt.Errorf("port range %q: want FROM-TO, e.g. 7000-8000", s)
	}
	return f, t, nil
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
