// Package server wires Hoist's control plane together: the store, the GameLift domain, SigV4
// authentication and the HTTP front for both wire protocols. cmd/hoist turns flags into a
// Config; end-to-end tests start a Server in-process on 127.0.0.1:0.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/console"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/hostd"
	"github.com/hoist-gg/hoist/httpapi"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/netns"
	"github.com/hoist-gg/hoist/internal/tlsca"
	"github.com/hoist-gg/hoist/s3api"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/postgres"
	"github.com/hoist-gg/hoist/store/sqlite"
	"github.com/hoist-gg/hoist/wire/sigv4"
)

// Config is everything `hoist server` can be told.
type Config struct {
	// Listen is the TCP address of the API, default 127.0.0.1:9080.
	Listen string
	// DataDir holds the embedded store and generated credentials, default ./hoist-data.
	DataDir string
	// Store is empty for the embedded store, or a postgres:// DSN.
	Store string
	// Region is the home Region: it appears in every ARN, default us-west-2.
	Region string
	// AccountID is the account part of ARNs; empty gives GameLift's documented `::` form.
	AccountID string
	// AccessKeyID and SecretAccessKey are the key pair clients must sign with. When both are
	// empty, a pair is generated on first start and kept in DataDir.
	AccessKeyID, SecretAccessKey string
	// AllowAnyCredentials turns signature verification off.
	AllowAnyCredentials bool
	// TLSListen is the TCP address of the TLS listener (the API over https, the websockets over
	// wss), with a certificate from Hoist's own CA; empty for none.
	TLSListen string
	// TLSHosts are the names and addresses the TLS certificate covers (localhost and 127.0.0.1
	// when empty).
	TLSHosts []string
	// S3Listen is the TCP address of a separate S3 endpoint builds are uploaded to
	// (docs/builds.md); empty for none. The API listener answers S3 requests either way.
	S3Listen string
	// SDKEndpoint and AgentEndpoint override the websocket URLs RegisterCompute hands out
	// (default ws://<Listen>/sdk and ws://<Listen>/agent).
	SDKEndpoint, AgentEndpoint string
	// Logger receives the server's log; default a text logger on stderr.
	Logger *slog.Logger
	// Clock is the time source; default the wall clock, or a clock.Virtual in dev mode.
	Clock clock.Clock
	// Dev is dev mode (`hoist server --dev`, docs/dev.md): the server's time can be moved
	// forward with Hoist.AdvanceTime and Hoist.SetTime. It needs the embedded store.
	Dev bool
	// MetricsListen is where GET /metrics is served: empty for the API listener, a TCP
	// address for a listener of its own, MetricsOff for nowhere (docs/metrics.md).
	MetricsListen string
	// StatsDListen is the UDP address of the DogStatsD receiver for local instances' server
	// processes (DefaultStatsDListen when empty, StatsDOff for none; docs/metrics.md).
	StatsDListen string
	// EventsTopic, when set, is the ARN of a topic (docs/notifications.md) that receives every
	// GameLift event — placement, matchmaking and fleet events — besides each resource's own
	// NotificationTarget, as an EventBridge rule for source aws.gamelift would.
	EventsTopic string
	// HostCapacity is the memory and CPUs local instances share, from which each instance
	// type's DescribeEC2InstanceLimits limit follows; zero: unknown, every type gets
	// gamelift.DefaultInstanceLimit (`hoist server` detects it; docs/managed-fleets.md).
	HostCapacity gamelift.HostCapacity
	// Isolation says whether local instances run isolated (docs/isolation.md): IsolationAuto
	// (the default: when the host supports it), IsolationOn (refuse to start when it does
	// not) or IsolationOff.
	Isolation string
	// InstanceUIDBase is the first user ID of local instances (hostd.DefaultUIDBase when 0).
	InstanceUIDBase int
	// InstanceNetwork is InstanceNetworkLoopback (the default) or InstanceNetworkNetns
	// (docs/isolation-network.md).
	InstanceNetwork string
	// NetnsConfig overrides netns.DefaultConfig (the bridge, subnet and namespace directory)
	// for InstanceNetworkNetns.
	NetnsConfig *netns.Config
	// EnforceInbound makes each managed fleet's EC2InboundPermissions decide which packets
	// reach its isolated instances (docs/isolation-network.md).
	EnforceInbound bool
}

// Defaults for Config.
const (
	DefaultListen  = "127.0.0.1:9080"
	DefaultDataDir = "hoist-data"
	DefaultRegion  = "us-west-2"
	// DefaultTLSListen is the TLS listener `hoist server` binds unless told otherwise.
	DefaultTLSListen = "127.0.0.1:9443"
	// DefaultS3Listen is the S3 endpoint for build uploads `hoist server` binds unless told
	// otherwise.
	DefaultS3Listen = "127.0.0.1:9081"
)

func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.DataDir == "" {
		c.DataDir = DefaultDataDir
	}
	if c.Region == "" {
		c.Region = DefaultRegion
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if c.Clock == nil && c.Dev {
		c.Clock = clock.NewVirtual()
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
}

// Server is a running control plane.
type Server struct {
	cfg   Config
	log   *slog.Logger
	store store.Store
	ln    net.Listener
	http  *http.Server
	creds Credentials
	tlsLn net.Listener
	s3Ln  net.Listener // the separate S3 endpoint for build uploads; nil when off
	// gwLn serves the API to instances in network namespaces, on their gateway; nil when off.
	gwLn net.Listener
	// instanceAddr is the domain's instance address function with network namespaces.
	instanceAddr func(int) string
	s3           *http.Server
	s3h          *s3api.Handler // the S3 subset, on the API listener (route.go) and on s3Ln
	hub          *sdkws.Hub
	logs         *logFiles
	// stopLoops stops the background loops (startLoops).
	stopLoops func()
	// delivery delivers the outbox's messages for this node's sockets (delivery.go); outbox
	// gives up those past their deadline.
	delivery *delivery
	outbox   *gamelift.OutboxMonitor
	placer   *gamelift.PlacementLoop
	// notify is the SNS-compatible notification service (notifications.go).
	notify *notifications
	// matchmaker is the FlexMatch matchmaker; it runs on the leader and is woken by the
	// store's announcements of its inbox.
	matchmaker *gamelift.MatchmakingLoop
	fleetIQ    *gamelift.FleetIQLoop
	monitor    *gamelift.ProcessMonitor
	sessions   *gamelift.SessionMonitor
	// host runs the managed fleets' local instances; instances is their control-plane loop.
	host      *hostd.Host
	instances *gamelift.InstanceMonitor
	svc       *gamelift.Service
	// parts are the computes partitioned by fault injection (fault_partition.go).
	parts *partitions
	// faulty is the dev mode's store, which SlowStore and FailingStore reach (fault_store.go);
	// nil otherwise.
	faulty *faultStore
	// nodeID, started and leading are this node's place in the cluster (cluster.go).
	nodeID  string
	started time.Time
	leading atomic.Bool
	// metrics is the Prometheus endpoint (metrics.go); nil when off.
	metrics *metricsEndpoint
	// game holds the game servers' metrics (gamemetrics.go); nil when metrics are off.
	game *gameTelemetry
	// changes wakes the web console's event streams (console.go).
	changes *console.Changes
}

// New opens the store, settles the credentials and binds the listener. Serve starts answering.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := checkDev(cfg); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, started: cfg.Clock.Now()}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, err
	}
	if err := s.checkDataDir(true); err != nil {
		return nil, err
	}
	id, err := loadOrCreateNodeID(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	s.nodeID = id
	st, err := openStore(ctx, cfg)
	if err != nil {
		return nil, err
	}
	s.store = s.devStore(st)
	if err := s.build(); err != nil {
		s.closeListeners()
		st.Close()
		return nil, err
	}
	if err := s.checkDataDir(false); err != nil { // again, quietly, for the files the store and the CA created
		s.closeListeners()
		st.Close()
		return nil, err
	}
	return s, nil
}

// build binds the listeners and assembles the domain, the websocket hub and the HTTP front.
func (s *Server) build() error {
	auth, err := s.authenticator()
	if err != nil {
		return err
	}
	if s.ln, err = net.Listen("tcp", s.cfg.Listen); err != nil {
		return err
	}
	if err := s.settleCA(context.Background()); err != nil {
		return err
	}
	if err := s.listenTLS(); err != nil {
		return err
	}
	if err := s.setupGameMetrics(); err != nil {
		return err
	}
	s.parts = &partitions{clock: s.cfg.Clock}
	backend := &hostingBackend{parts: s.parts}
	s.changes = console.NewChanges()
	isolation, err := s.isolation()
	if err != nil {
		return err
	}
	network, err := s.instanceNetwork(isolation)
	if err != nil {
		return err
	}
	svc := gamelift.New(gamelift.Config{Store: s.store, Clock: s.cfg.Clock, Region: s.cfg.Region,
		AccountID: s.cfg.AccountID, SDKEndpoint: s.SDKEndpoint(), AgentEndpoint: s.AgentEndpoint(), NodeID: s.nodeID,
		Host: s.cfg.HostCapacity, Logger: s.log, OnCommit: s.changes.Notify, InstanceAddress: s.instanceAddr})
	deliver := newDelivery(svc, nil, s.setupNotifications(auth), s.log)
	hub := sdkws.New(sdkws.Config{Backend: backend, GameSessions: backend, Agent: backend, SigV4Keys: s.keys,
		Clock: s.cfg.Clock, Logger: s.log, OnProcessConnected: deliver.processConnected, OnAgentConnected: deliver.agentConnected,
		OnAgentGameMetrics: s.agentGameMetrics})
	deliver.hub = hub
	backend.svc, backend.hub, s.hub, s.delivery, s.svc = svc, hub, hub, deliver, svc
	handlers := svc.Handlers()
	s.host = hostd.New(s.hostdTelemetry(hostd.Config{Control: svc, Dir: filepath.Join(s.cfg.DataDir, "instances"),
		SDKEndpoint: s.instanceSDKEndpoint(), Clock: s.cfg.Clock, Logger: s.log, Isolation: isolation, UIDBase: s.cfg.InstanceUIDBase,
		EnforceInbound: s.cfg.EnforceInbound, Network: network}))
	pokeOnCapacityChanges(handlers, s.host.Poke)
	logs, err := newLogFiles(context.Background(), svc, s.store, s.cfg.DataDir, s.URL(), s.cfg.Clock, s.log)
	if err != nil {
		return err
	}
	logs.wrap(handlers)
	s.logs = logs
	observe := s.setupMetrics(svc, handlers)
	s.registerGameMetrics()
	apiHandler := httpapi.New(httpapi.Config{Handlers: handlers, Authenticate: auth, Logger: s.log,
		Extensions: slices.Concat(fleetIQExtensions(svc), s.devExtensions(), consoleExtensions(svc)), Unavailable: storeUnavailable, Observe: observe})
	s.s3h = s3api.New(s3api.Config{Builds: svc, Blobs: logs.blobs, Dir: filepath.Join(s.cfg.DataDir, "builds"), Clock: s.cfg.Clock, Logger: s.log})
	consoleHandler := s.setupConsole(handlers, consoleExtensions(svc), observe)
	s.http = &http.Server{Handler: s.withMetrics(routeWebsockets(routeTo(toS3, s.s3h, routeTo(toConsole, consoleHandler, s.routeLeader(logs.route(s.notify.route(apiHandler))))), hub, hub.AgentHandler())),
		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	s.http.RegisterOnShutdown(consoleHandler.Close)
	if err := s.listenS3(); err != nil {
		return err
	}
	if err := s.listenMetrics(); err != nil {
		return err
	}
	s.startLoops(svc)
	return nil
}

// routeWebsockets sends websocket upgrades to the agent endpoint (paths under /agent) or the
// Server SDK endpoint (any other path: the SDKs build their URLs in different ways), and every
// other request to the API.
func routeWebsockets(apiHandler, sdk, agent http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			apiHandler.ServeHTTP(w, r)
			return
		}
		if strings.HasPrefix(r.URL.Path, AgentPath) {
			agent.ServeHTTP(w, r)
			return
		}
		sdk.ServeHTTP(w, r)
	})
}

// storeUnavailable reports errors that mean the store cannot be reached right now.
func storeUnavailable(err error) bool { return errors.Is(err, store.ErrUnavailable) }

func openStore(ctx context.Context, cfg Config) (store.Store, error) {
	switch {
	case cfg.Store == "":
		return sqlite.Open(cfg.DataDir)
	case strings.HasPrefix(cfg.Store, "postgres://"), strings.HasPrefix(cfg.Store, "postgresql://"):
		return postgres.Open(ctx, cfg.Store)
	default:
		return nil, fmt.Errorf("--store %q: want empty (embedded) or a postgres:// URL", cfg.Store)
	}
}

// authenticator settles the key pair and returns the request check, or nil when any
// credentials are allowed.
func (s *Server) authenticator() (func(*http.Request, []byte) *api.Error, error) {
	if s.cfg.AllowAnyCredentials {
		s.log.Warn("SIGNATURE VERIFICATION IS OFF (--allow-any-credentials): anyone who can reach this port can change everything")
		return nil, nil
	}
	creds, err := s.settleCredentials()
	if err != nil {
		return nil, err
	}
	s.creds = creds
	v := &sigv4.Verifier{
		Keys: func(id string) (string, bool) {
			if id == creds.AccessKeyID {
				return creds.SecretAccessKey, true
			}
			return "", false
		},
		Clock:        s.cfg.Clock,
		Service:      "gamelift",
		AlsoServices: []string{"sns"},
	}
	return func(r *http.Request, body []byte) *api.Error {
		_, err := v.Verify(r, body)
		return err
	}, nil
}

func (s *Server) settleCredentials() (Credentials, error) {
	id, secret := s.cfg.AccessKeyID, s.cfg.SecretAccessKey
	switch {
	case id != "" && secret != "":
		return Credentials{AccessKeyID: id, SecretAccessKey: secret}, nil
	case id != "" || secret != "":
		return Credentials{}, errors.New("give both an access key ID and a secret access key, or neither")
	}
	creds, created, err := loadOrCreateCredentials(s.cfg.DataDir)
	if err != nil {
		return creds, err
	}
	if created {
		s.log.Info("generated a key pair for signing requests; it is kept in the data directory",
			"file", credentialsFile, "AWS_ACCESS_KEY_ID", creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY", creds.SecretAccessKey)
	}
	return creds, nil
}

// Credentials returns the key pair requests must be signed with (empty when verification is
// off).
func (s *Server) Credentials() Credentials { return s.creds }

// Addr returns the address the API listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the endpoint URL clients use, e.g. http://127.0.0.1:9080.
func (s *Server) URL() string { return "http://" + s.Addr() }

// Region returns the home Region.
func (s *Server) Region() string { return s.cfg.Region }

// Serve answers requests until Shutdown; it returns nil after a clean shutdown.
func (s *Server) Serve() error {
	s.log.Info("hoist server listening", "endpoint", s.URL(), "region", s.cfg.Region, "store", storeName(s.cfg))
	s.log.Info("web console", "url", s.URL()+console.Path)
	if s.tlsLn != nil {
		s.log.Info("TLS (https, wss) listening", "address", s.tlsLn.Addr().String(), "ca", filepath.Join(s.cfg.DataDir, tlsDir, tlsca.CACertFile))
		go s.http.Serve(s.tlsLn)
	}
	if s.s3Ln != nil {
		s.log.Info("S3 endpoint for build uploads listening", "endpoint", s.S3URL())
		go s.s3.Serve(s.s3Ln)
	}
	if s.gwLn != nil {
		s.log.Info("the API on the instances' network", "address", s.gwLn.Addr().String())
		go s.http.Serve(s.gwLn)
	}
	s.serveMetrics()
	if err := s.http.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown closes the websockets, stops accepting requests, lets those in flight finish, stops
// the loops and closes the store.
func (s *Server) Shutdown(ctx context.Context) error {
	s.hub.Close()
	err := s.http.Shutdown(ctx)
	if s.s3 != nil {
		s.s3.Shutdown(ctx)
	}
	s.shutdownMetrics(ctx)
	s.closeGameMetrics()
	s.stopLoops()
	if herr := s.host.Close(ctx); err == nil {
		err = herr
	}
	if cerr := s.store.Close(); err == nil {
		err = cerr
	}
	return err
}

func storeName(cfg Config) string {
	if cfg.Store == "" {
		return "embedded (" + cfg.DataDir + ")"
	}
	return "postgres"
}

// listenS3 binds the separate S3 endpoint for build uploads when Config.S3Listen is set (the
// API listener answers S3 requests too); uploads are kept in <data>/builds.
func (s *Server) listenS3() error {
	if s.cfg.S3Listen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.S3Listen)
	if err != nil {
		return err
	}
	s.s3Ln = ln
	s.s3 = &http.Server{Handler: s.s3h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	return nil
}

// S3URL returns the separate S3 endpoint's URL (Config.S3Listen), or "" when it is off; the
// API's URL answers S3 requests whether or not it is on.
func (s *Server) S3URL() string {
	if s.s3Ln == nil {
		return ""
	}
	return "http://" + s.s3Ln.Addr().String()
}
