package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/internal/cli"
)

// options are the parsed `hoist agent` flags.
type options struct {
	server, region, keyID, secret, session string
	compute                                Compute
	sdkEndpoint, agentEndpoint, workDir    string
	sdkProxy                               string
	statsd                                 string
	servers                                []string
	grace, heartbeat, configEvery          time.Duration
	deregister, inheritOutput              bool
	logLevel                               string
	runAs                                  string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("hoist agent", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.server, "server", "", "control-plane URL, e.g. http://hoist.example:9080, or several nodes' URLs separated by commas (env HOIST_SERVER)")
	fs.StringVar(&o.compute.FleetID, "fleet-id", "", "fleet to register with (required)")
	fs.StringVar(&o.compute.Location, "location", "", "the fleet's custom location this host is in (required)")
	fs.StringVar(&o.compute.ComputeName, "compute-name", "", "name of this compute (default: the host name)")
	fs.StringVar(&o.compute.IPAddress, "ip-address", "", "address game clients reach this host at (default: the address used to reach --server)")
	fs.StringVar(&o.compute.DNSName, "dns-name", "", "DNS name of this host, if any")
	fs.StringVar(&o.region, "region", envOr("AWS_REGION", os.Getenv("AWS_DEFAULT_REGION")), "Region to sign for (env AWS_REGION)")
	fs.StringVar(&o.keyID, "access-key-id", os.Getenv("AWS_ACCESS_KEY_ID"), "access key ID (env AWS_ACCESS_KEY_ID)")
	fs.StringVar(&o.secret, "secret-access-key", os.Getenv("AWS_SECRET_ACCESS_KEY"), "secret access key (env AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&o.session, "session-token", os.Getenv("AWS_SESSION_TOKEN"), "session token, if any (env AWS_SESSION_TOKEN)")
	fs.StringVar(&o.sdkEndpoint, "sdk-endpoint", "", "override the GameLiftServiceSdkEndpoint handed to server processes")
	fs.StringVar(&o.agentEndpoint, "agent-endpoint", "", "override the GameLiftAgentEndpoint the agent connects to")
	fs.StringVar(&o.sdkProxy, "sdk-proxy", "127.0.0.1:0", "loopback address of the SDK proxy server processes connect through, so they move to a live node when theirs dies; \"off\" hands them the node's SDK endpoint")
	fs.StringVar(&o.statsd, "statsd-listen", "127.0.0.1:0", "UDP address of the DogStatsD receiver for server processes' metrics (GAMELIFT_STATSD_HOST/PORT), forwarded to the server; \"off\" for none")
	fs.StringVar(&o.workDir, "work-dir", "", "directory relative launch paths are resolved against (default: current directory)")
	fs.DurationVar(&o.grace, "grace-period", supervisor.DefaultGracePeriod, "time between SIGTERM and SIGKILL when stopping a server process")
	fs.DurationVar(&o.heartbeat, "heartbeat-interval", DefaultHeartbeatInterval, "time between heartbeats")
	fs.DurationVar(&o.configEvery, "config-interval", DefaultConfigInterval, "time between reads of the runtime configuration")
	fs.BoolVar(&o.deregister, "deregister", false, "deregister the compute when the agent stops")
	fs.BoolVar(&o.inheritOutput, "process-output", false, "pass server processes' stdout/stderr through (default: discarded)")
	fs.StringVar(&o.logLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&o.runAs, "run-as", "", "user (name or ID) server processes run as, with its primary group only; the agent must run as root (default: the agent's own user)")
	if err := cli.Parse(fs, args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return o, o.complete()
}

func envOr(key, fallback string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return fallback
}

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9-]+`)

// complete checks the required flags and fills in the derived defaults.
func (o *options) complete() error {
	o.servers = ParseServers(o.server)
	if o.statsd == "off" {
		o.statsd = ""
	}
	if o.sdkProxy == "off" {
		o.sdkProxy = ""
	}
	switch {
	case len(o.servers) == 0:
		return errors.New("--server is required")
	case o.compute.FleetID == "":
		return errors.New("--fleet-id is required")
	case o.compute.Location == "":
		return errors.New("--location is required")
	case o.keyID == "" || o.secret == "":
		return errors.New("credentials are required: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the flags")
	}
	if o.region == "" {
		o.region = "us-west-2"
	}
	if o.compute.ComputeName == "" {
		host, _ := os.Hostname()
		o.compute.ComputeName = strings.Trim(notNameChars.ReplaceAllString(host, "-"), "-")
		if o.compute.ComputeName == "" {
			return errors.New("--compute-name is required (the host name is unusable)")
		}
	}
	if o.compute.IPAddress == "" && o.compute.DNSName == "" {
		ip, err := outboundIP(o.servers[0])
		if err != nil {
			return fmt.Errorf("--ip-address not given and %w", err)
		}
		o.compute.IPAddress = ip
	}
	return nil
}

// outboundIP is the local address this host uses to reach the server (no packet is sent).
func outboundIP(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("--server %q is not a URL", server)
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(u.Hostname(), "443")
	}
	c, err := net.Dial("udp", host)
	if err != nil {
		return "", fmt.Errorf("cannot find a local address: %w", err)
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String(), nil
}

// Main runs `hoist agent` with args (the flags after the subcommand) until ctx ends (SIGINT or
// SIGTERM in cmd/hoist) or the control plane terminates the compute. Logs go to stderr.
func Main(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(o.logLevel)); err != nil {
		return fmt.Errorf("--log-level %q: %w", o.logLevel, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lv}))
	remote := NewRemote(RemoteConfig{
		Endpoints: o.servers, Region: o.region, Logger: log,
		AccessKeyID: o.keyID, SecretAccessKey: o.secret, SessionToken: o.session,
	})
	sc := supervisor.Config{GracePeriod: o.grace, WorkDir: o.workDir}
	if o.runAs != "" {
		r, err := lookupRunAs(o.runAs)
		if err != nil {
			return err
		}
		sc.Hooks.Command = r.hook(sc.Hooks.Command)
		log.Info("server processes run as another user", "user", r.name, "uid", r.uid, "gid", r.gid)
	}
	if o.inheritOutput {
		sc.Stdout, sc.Stderr = os.Stdout, os.Stderr
	}
	a, err := New(Config{
		Compute: o.compute, ControlPlane: remote, Logger: log,
		SdkEndpoint: o.sdkEndpoint, AgentEndpoint: o.agentEndpoint, SDKProxy: o.sdkProxy, Servers: o.servers,
		StatsD: o.statsd, HeartbeatInterval: o.heartbeat, ConfigInterval: o.configEvery,
		Deregister: o.deregister, Supervisor: sc,
	})
	if err != nil {
		return err
	}
	return a.Run(ctx)
}
