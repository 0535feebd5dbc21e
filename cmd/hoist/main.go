// Command hoist is the one Hoist binary: `hoist server` runs the GameLift-compatible control
// plane, `hoist bench` drives load against it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/hoist-gg/hoist/agent"
	"github.com/hoist-gg/hoist/bench"
	"github.com/hoist-gg/hoist/hostd"
	"github.com/hoist-gg/hoist/internal/cli"
	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/server"
)

const usage = `Hoist: self-hosted game server hosting, wire-compatible with Amazon GameLift.

Usage:
  hoist server [flags]   run the control plane (hoist server -h for flags)
  hoist agent [flags]    run on a game host: register a compute, run its server processes (hoist agent -h)
  hoist bench [flags]    drive load against an operation, beside a bare HTTP baseline
  hoist dev DIR-or-BINARY [flags]  run a game server build as a local fleet, streaming its output (docs/dev.md)
  hoist time [advance DURATION | set TIME]  read or move a dev-mode server's clock (docs/dev.md)
  hoist fault crash|instance-loss [flags]   inject a fault into a dev-mode server (docs/dev.md)
  hoist matchsim [flags] simulate and benchmark FlexMatch matchmaking on a virtual clock
  hoist version          the version, the Go version and the VCS revision
  hoist help             this text

Every flag can also be set with an environment variable (HOIST_<FLAG>, e.g. HOIST_LISTEN) or in
a JSON file given with --config; the command line wins over both (docs/cli.md).
`

func main() {
	contain.Main() // first: the binary doubles as the init of contained processes
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(exitCode(run(ctx, os.Args[1:], os.Stdout, os.Stderr), os.Stderr))
}

// dispatch runs the command args[0] (cli.go's run names the command in its usage errors).
func dispatch(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stdout, usage)
		return nil
	}
	switch args[0] {
	case "server":
		return runServer(ctx, args[1:], stdout, stderr)
	case "agent":
		return agent.Main(ctx, args[1:], stderr)
	case "bench":
		return bench.Main(ctx, args[1:], stdout)
	case "time":
		return runTime(ctx, args[1:], stdout, stderr)
	case "fault":
		return runFault(ctx, args[1:], stdout, stderr)
	case "dev":
		return runDev(ctx, args[1:], stdout, stderr)
	case "matchsim":
		return runMatchsim(ctx, args[1:], stdout)
	case "version", "--version":
		printVersion(stdout)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		fmt.Fprint(stderr, usage)
		return fmt.Errorf("unknown command %q", args[0])
	}
}

// serverFlags parses `hoist server` flags into a server.Config.
func serverFlags(args []string, out io.Writer) (server.Config, string, error) {
	var cfg server.Config
	fs := flag.NewFlagSet("hoist server", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&cfg.Listen, "listen", server.DefaultListen, "TCP address of the API")
	fs.StringVar(&cfg.DataDir, "data", server.DefaultDataDir, "data directory (embedded store, generated credentials)")
	fs.StringVar(&cfg.Store, "store", "", "empty for the embedded store, or a postgres:// URL")
	fs.StringVar(&cfg.Region, "region", server.DefaultRegion, "home Region: the Region in every ARN and the fleets' home location")
	fs.StringVar(&cfg.AccountID, "account-id", "", "account ID in ARNs (empty gives GameLift's documented arn:aws:gamelift:<region>::... form)")
	fs.StringVar(&cfg.AccessKeyID, "access-key-id", "", "access key ID clients sign with (env HOIST_ACCESS_KEY_ID)")
	fs.StringVar(&cfg.SecretAccessKey, "secret-access-key", "", "secret access key (env HOIST_SECRET_ACCESS_KEY)")
	fs.BoolVar(&cfg.AllowAnyCredentials, "allow-any-credentials", false, "accept requests without checking signatures (local play only)")
	fs.StringVar(&cfg.TLSListen, "tls-listen", server.DefaultTLSListen, "TCP address of the TLS listener (API over https, SDK and agent websockets over wss; empty for none)")
	fs.StringVar(&cfg.MetricsListen, "metrics-listen", "", "TCP address of a listener of its own for GET /metrics (empty: the API listener; off: no metrics)")
	fs.StringVar(&cfg.StatsDListen, "statsd-listen", server.DefaultStatsDListen, "UDP address of the DogStatsD receiver for local instances' server process metrics (off: none)")
	fs.StringVar(&cfg.EventsTopic, "events-topic", "", "ARN of a topic that receives every GameLift event, fleet events included (empty: each resource's NotificationTarget only)")
	fs.StringVar(&cfg.S3Listen, "s3-listen", server.DefaultS3Listen, "TCP address of a separate S3 endpoint for build uploads (the API listener answers S3 requests too; empty for none)")
	hosts := fs.String("tls-hosts", "", "comma-separated names and addresses the TLS certificate covers (default localhost,127.0.0.1)")
	fs.StringVar(&cfg.SDKEndpoint, "sdk-endpoint", "", "Server SDK websocket URL handed to computes (default ws://<listen>/sdk)")
	fs.StringVar(&cfg.AgentEndpoint, "agent-endpoint", "", "agent websocket URL handed to computes (default ws://<listen>/agent)")
	fs.BoolVar(&cfg.Dev, "dev", false, "dev mode: virtual time that 'hoist time advance' moves forward (embedded store only; docs/dev.md)")
	hostMemory := fs.String("host-memory", "", "memory local instances share, e.g. 64GiB, for the instance limits (empty: the host's MemTotal)")
	hostCPUs := fs.Int("host-cpus", 0, "CPUs local instances share, for the instance limits (0: the CPUs this process may use)")
	fs.StringVar(&cfg.Isolation, "isolation", server.IsolationAuto, "isolate local instances (own user, private file system view): auto (when the host supports it), on (refuse to start without) or off (docs/isolation.md)")
	fs.StringVar(&cfg.InstanceNetwork, "instance-network", server.InstanceNetworkLoopback, "addresses of local instances: loopback (127.0.0.2 onwards) or netns (an isolated instance's own network namespace on a bridge, 10.201.0.2 onwards; docs/isolation-network.md)")
	fs.BoolVar(&cfg.EnforceInbound, "enforce-inbound", false, "let each managed fleet's EC2InboundPermissions decide which packets reach its isolated instances (docs/isolation-network.md)")
	fs.IntVar(&cfg.InstanceUIDBase, "instance-uid-base", hostd.DefaultUIDBase, "first user ID given to isolated local instances (one per instance, no /etc/passwd entry needed)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	err := cli.Parse(fs, args)
	if err == nil {
		cfg.HostCapacity, err = hostCapacity(*hostMemory, *hostCPUs)
	}
	if err == nil && fs.NArg() > 0 {
		err = &cli.UsageError{Err: fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *hosts != "" {
		cfg.TLSHosts = strings.Split(*hosts, ",")
	}
	return cfg, *level, err
}

// serverGCPercent is the GC target `hoist server` uses unless GOGC is set. The API allocates
// many short-lived objects per request and keeps a small live heap, so trading memory for
// fewer collections pays: on DescribeAlias it raised throughput from 0.50 to 0.58 of a bare
// net/http handler (docs/benchmarks.md).
const serverGCPercent = 400

func tuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}

func runServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, level, err := serverFlags(args, stdout)
	if err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return fmt.Errorf("--log-level %q: %w", level, err)
	}
	cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	tuneGC()
	privateUmask()
	srv, err := server.New(ctx, cfg)
	if err != nil {
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cfg.Logger.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
