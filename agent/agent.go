// Package agent is the Hoist host agent: it registers a compute with the control plane, keeps
// a compute auth token fresh, launches and supervises server processes as the fleet's
// RuntimeConfiguration says (through package supervisor), and reports to the control plane
// over the agent websocket: heartbeats with the live process list, process terminations; it
// obeys the control plane's pushes (force exit, compute termination, connection refresh).
//
// The control plane is an interface (ControlPlane): Remote reaches a Hoist server over the
// network; the server can provide an in-process implementation to run the same agent for its
// local instances. cmd/hoist calls Main for `hoist agent`.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/internal/clock"
)

// Defaults for Config fields left zero.
const (
	DefaultHeartbeatInterval = 60 * time.Second
	DefaultConfigInterval    = 60 * time.Second
	DefaultReconnectMin      = 1 * time.Second
	DefaultReconnectMax      = 60 * time.Second
	// callTimeout bounds one control-plane call (a network deadline).
	callTimeout = 30 * time.Second
	// unregisteredLimit: a process listed as unregistered in this many heartbeat answers in a
	// row is terminated, as the GameLift Agent does.
	unregisteredLimit = 8
)

// Config configures an Agent.
type Config struct {
	Compute      Compute
	ControlPlane ControlPlane
	Clock        clock.Clock
	Logger       *slog.Logger
	// SdkEndpoint and AgentEndpoint, when set, replace what the registration returns.
	SdkEndpoint, AgentEndpoint string
	// SDKProxy, when set, is the loopback address (host:port, port 0 for any) of the agent's
	// SDK proxy (sdkproxy.go): processes are handed its URL, and their connections go to a
	// live node — the registration's SDK endpoint, else one of Servers. Not used with
	// SdkEndpoint, which hands processes that URL as it is.
	SDKProxy string
	// Servers are the control-plane URLs the agent was given, the proxy's fallbacks.
	Servers           []string
	HeartbeatInterval time.Duration
	// ConfigInterval is how often the runtime configuration is re-read.
	ConfigInterval                         time.Duration
	TokenRefreshBefore, TokenCheckInterval time.Duration
	// ReconnectMin and ReconnectMax bound the backoff between agent websocket dials.
	ReconnectMin, ReconnectMax time.Duration
	// Deregister makes the agent deregister the compute when it shuts down.
	Deregister bool
	// StatsD, when set, is the UDP address (port 0 for any) of the agent's DogStatsD
	// receiver for its processes' game metrics (gamemetrics.go); empty for none.
	StatsD string
	// GameMetricsInterval is how often the received metrics are forwarded to the server.
	GameMetricsInterval time.Duration
	// Supervisor configures process management (grace period, stagger, output, work dir).
	// Its Clock and Logger default to the agent's; its Hooks run after the agent's own.
	Supervisor supervisor.Config
}

// Agent runs one compute. Create it with New and call Run once.
type Agent struct {
	cfg    Config
	clk    clock.Clock
	log    *slog.Logger
	cp     ControlPlane
	sup    *supervisor.Supervisor
	tokens *tokenKeeper
	logs   *logShipper // nil when the control plane takes no logs (logs.go)
	msgs   chan Message
	exitC  chan struct{}
	quit   chan struct{} // closed when Run returns

	mu    sync.Mutex // guards reg (read by the Env hook) and exits
	reg   Registration
	exits []supervisor.Exit

	proxy *sdkProxy  // nil without Config.SDKProxy
	tel   *telemetry // nil without Config.StatsD; set before processes start

	// Owned by the Run goroutine.
	link           Link
	status         string
	stopping       bool
	pending        []Termination
	unregistered   map[string]int
	reconnectDelay time.Duration
	nextToken      time.Time
	nextConfig     time.Time
	nextConnect    time.Time
	nextHeartbeat  time.Time
}

// New returns an Agent for cfg with the defaults filled in.
func New(cfg Config) (*Agent, error) {
	if cfg.ControlPlane == nil {
		return nil, errors.New("agent: no control plane")
	}
	if cfg.Compute.FleetID == "" || cfg.Compute.ComputeName == "" {
		return nil, errors.New("agent: fleet ID and compute name are required")
	}
	defaults(&cfg)
	a := &Agent{
		cfg: cfg, clk: cfg.Clock, log: cfg.Logger, cp: cfg.ControlPlane,
		msgs:         make(chan Message, 64),
		exitC:        make(chan struct{}, 1),
		quit:         make(chan struct{}),
		status:       StatusInitializing,
		unregistered: map[string]int{},
	}
	a.tokens = &tokenKeeper{
		clk: cfg.Clock, refreshBefore: cfg.TokenRefreshBefore, checkEvery: cfg.TokenCheckInterval,
		fetch: a.fetchToken,
	}
	sc := a.supervisorConfig()
	if up, ok := cfg.ControlPlane.(LogUploader); ok {
		a.logs = newLogShipper(cfg.Clock, cfg.Logger, up, cfg.Compute, func() string { return a.tokens.Current().Value }, a.quit)
		a.cp = logTap{ControlPlane: cfg.ControlPlane, logs: a.logs}
		sc.Hooks = a.logs.hooks(sc.Hooks)
	}
	a.sup = supervisor.New(sc)
	return a, nil
}

func defaults(cfg *Config) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	setDefault(&cfg.HeartbeatInterval, DefaultHeartbeatInterval)
	setDefault(&cfg.ConfigInterval, DefaultConfigInterval)
	setDefault(&cfg.TokenRefreshBefore, DefaultTokenRefreshBefore)
	setDefault(&cfg.TokenCheckInterval, DefaultTokenCheckInterval)
	setDefault(&cfg.ReconnectMin, DefaultReconnectMin)
	setDefault(&cfg.ReconnectMax, DefaultReconnectMax)
	setDefault(&cfg.GameMetricsInterval, DefaultGameMetricsInterval)
}

func setDefault(d *time.Duration, v time.Duration) {
	if *d <= 0 {
		*d = v
	}
}

// Supervisor returns the process supervisor the agent drives.
func (a *Agent) Supervisor() *supervisor.Supervisor { return a.sup }

// Registration returns the compute's current registration.
func (a *Agent) Registration() Registration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.reg
}

// Run registers the compute, then supervises and reports until ctx ends or the control plane
// sends StartComputeTermination. Either way it terminates every server process (SIGTERM,
// grace period, SIGKILL), reports their ends, deregisters the compute if configured to, and
// returns. It fails early only if the compute cannot be registered.
func (a *Agent) Run(ctx context.Context) error {
	defer close(a.quit)
	if err := a.register(ctx); err != nil {
		return err
	}
	if err := a.startProxy(); err != nil {
		return err
	}
	if err := a.startTelemetry(); err != nil {
		return err
	}
	defer a.stopTelemetry()
	go a.sup.Run(context.Background()) // stopped through beginShutdown, never by ctx alone
	bg := context.WithoutCancel(ctx)
	cancelled := ctx.Done()
	for {
		now := a.clk.Now()
		a.runDue(bg, now)
		if a.stopping && a.finished() {
			break
		}
		var linkDone <-chan struct{}
		if a.link != nil {
			linkDone = a.link.Done()
		}
		select {
		case <-a.clk.After(a.nextWake(now)):
		case m := <-a.msgs:
			a.handle(bg, m)
		case <-a.exitC:
		case <-linkDone:
			a.linkLost("link closed")
		case <-cancelled:
			cancelled = nil
			a.beginShutdown(bg, "signal")
		case <-a.sup.Done():
		}
	}
	a.finish(bg)
	if a.logs != nil {
		a.logs.drain()
	}
	if a.proxy != nil {
		a.proxy.Close()
	}
	return nil
}

// startProxy starts the SDK proxy when the configuration asks for one.
func (a *Agent) startProxy() error {
	if a.cfg.SDKProxy == "" || a.cfg.SdkEndpoint != "" {
		return nil
	}
	p, err := startSDKProxy(a.cfg.SDKProxy, func() []string {
		return append([]string{a.Registration().SdkEndpoint}, a.cfg.Servers...)
	}, a.log)
	if err != nil {
		return err
	}
	a.mu.Lock()
	a.proxy = p
	a.mu.Unlock()
	a.log.Info("server processes connect through the agent's SDK proxy", "url", p.URL())
	return nil
}

// sdkURL is the GAMELIFT_SDK_WEBSOCKET_URL processes get: the proxy's, else the
// registration's SDK endpoint.
func (a *Agent) sdkURL() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.proxy != nil {
		return a.proxy.URL()
	}
	return a.reg.SdkEndpoint
}

func (a *Agent) register(ctx context.Context) error {
	reg, err := Register(ctx, a.clk, a.cp, a.cfg.Compute)
	if err != nil {
		return err
	}
	a.setRegistration(reg)
	a.log.Info("compute registered", "fleet", a.cfg.Compute.FleetID, "compute", a.cfg.Compute.ComputeName,
		"sdk_endpoint", reg.SdkEndpoint, "agent_endpoint", reg.AgentEndpoint)
	if reg.AgentEndpoint == "" {
		a.log.Warn("no agent endpoint: processes run, but nothing is reported")
	}
	return nil
}

// setRegistration keeps reg, with the configured endpoint overrides applied.
func (a *Agent) setRegistration(reg Registration) {
	if a.cfg.SdkEndpoint != "" {
		reg.SdkEndpoint = a.cfg.SdkEndpoint
	}
	if a.cfg.AgentEndpoint != "" {
		reg.AgentEndpoint = a.cfg.AgentEndpoint
	}
	a.mu.Lock()
	a.reg = reg
	a.mu.Unlock()
}

// fetchToken gets a token; if the compute is gone (a control plane that lost it, e.g. after a
// restart) it registers again first.
func (a *Agent) fetchToken(ctx context.Context) (Token, error) {
	c := a.cfg.Compute
	tok, err := a.cp.GetComputeAuthToken(ctx, c.FleetID, c.ComputeName)
	if errors.Is(err, ErrNotFound) && !a.stopping {
		a.log.Warn("compute unknown to the control plane; registering again")
		if err := a.register(ctx); err != nil {
			return Token{}, err
		}
		tok, err = a.cp.GetComputeAuthToken(ctx, c.FleetID, c.ComputeName)
	}
	return tok, err
}

// finished reports whether shutdown is complete: every process ended and was reported (or
// can no longer be).
func (a *Agent) finished() bool {
	select {
	case <-a.sup.Done():
	default:
		return false
	}
	a.collectExits()
	return len(a.pending) == 0 || a.link == nil
}

func (a *Agent) finish(ctx context.Context) {
	c := a.cfg.Compute
	if a.cfg.Deregister {
		cctx, cancel := context.WithTimeout(ctx, callTimeout)
		err := a.cp.DeregisterCompute(cctx, c.FleetID, c.ComputeName)
		cancel()
		if err != nil {
			a.log.Error("deregister compute", "err", err)
		} else {
			a.log.Info("compute deregistered")
		}
	}
	if a.link != nil {
		_ = a.link.Close()
		a.link = nil
	}
}

// beginShutdown stops launching and terminates every process; Run returns once they ended.
func (a *Agent) beginShutdown(ctx context.Context, why string) {
	if a.stopping {
		return
	}
	a.log.Info("shutting down: terminating server processes", "why", why)
	a.stopping = true
	a.status = StatusTerminating
	a.sup.Stop()
	a.sendHeartbeat(ctx)
}
