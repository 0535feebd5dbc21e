// Package hostd runs the instances of managed fleets on this host: for each instance the
// control plane wants, it creates a sandbox (a working directory under Config.Dir named after
// the instance), installs the fleet's build there (unpack or copy, then the build's install
// script), and runs the fleet's server processes with agent/supervisor, in-process, with the
// Server SDK environment of the instance (compute name = instance ID). When an instance is to
// stop, its processes are terminated with the grace period and its sandbox removed.
//
// The control plane (package gamelift, through the Control interface) decides which instances
// exist; this package only acts on the host and reports what happened. See
// docs/managed-fleets.md.
package hostd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/internal/netns"
	"github.com/hoist-gg/hoist/internal/tlsca"
)

// Control is what the host needs from the control plane; *gamelift.Service implements it.
type Control interface {
	// LocalInstances lists the instances of every managed fleet.
	LocalInstances(ctx context.Context) ([]gamelift.LocalInstance, error)
	// InstanceProgress reports a setup stage (gamelift.Stage*).
	InstanceProgress(ctx context.Context, fleetID, instanceID, stage string) error
	// InstanceEvent adds an informational fleet event.
	InstanceEvent(ctx context.Context, fleetID string, code api.EventCode, msg string) error
	// InstanceFailed reports a failed setup step with GameLift's event code.
	InstanceFailed(ctx context.Context, fleetID, instanceID string, code api.EventCode, msg string) error
	// InstanceGone reports that an instance has stopped and its sandbox is removed.
	InstanceGone(ctx context.Context, fleetID, instanceID string) error
	// InstanceAuthToken issues a compute auth token for an instance's processes.
	InstanceAuthToken(ctx context.Context, fleetID, instanceID string) (string, time.Time, error)
	// InstanceCertificate reports where an instance's fleet certificate was written.
	InstanceCertificate(ctx context.Context, fleetID, instanceID, path string) error
	// AgentProcessExited reports a server process's exit with the agent's event code.
	AgentProcessExited(ctx context.Context, fleetID, computeName, processID, eventCode string) error
	// OpenBuildBlob opens an uploaded build's zip from the shared store (BuildFiles.Blob).
	OpenBuildBlob(ctx context.Context, key string) (io.ReadCloser, int64, error)
}

// ProcessTracker learns where each server process runs (game metrics attribution).
type ProcessTracker interface {
	// ProcessLaunched is called before a process starts.
	ProcessLaunched(fleetID, location, computeName, processID string)
	// ProcessEnded is called when it has ended.
	ProcessEnded(processID string)
}

// DefaultInstallTimeout bounds a build's install script.
const DefaultInstallTimeout = 10 * time.Minute

// Config configures a Host.
type Config struct {
	// Control is the control plane. Required.
	Control Control
	// Dir holds the sandboxes, one directory per instance (<data>/instances). Required.
	Dir string
	// CA issues the certificates of fleets whose CertificateConfiguration is GENERATED. When
	// nil, Hoist's CA is opened (created if need be) in CADir on first use.
	CA Issuer
	// CADir is the directory of Hoist's CA; when empty, "tls" beside Dir (the server's layout:
	// <data>/instances and <data>/tls).
	CADir string
	// SDKEndpoint is the Server SDK websocket URL processes get as GAMELIFT_SDK_WEBSOCKET_URL.
	SDKEndpoint string
	// StatsDHost and StatsDPort, when set, are where processes send their DogStatsD game
	// metrics (GAMELIFT_STATSD_HOST, GAMELIFT_STATSD_PORT; docs/metrics.md).
	StatsDHost, StatsDPort string
	// Processes, when set, is told which processes start and end, to attribute their metrics.
	Processes ProcessTracker
	// Clock drives the supervisors' grace periods and the install timeout; clock.Real{} when nil.
	Clock clock.Clock
	// GracePeriod is the time between SIGTERM and SIGKILL when a process is stopped
	// (gamelift.DefaultTerminationGracePeriod when zero).
	GracePeriod time.Duration
	// InstallTimeout bounds the install script (DefaultInstallTimeout when zero).
	InstallTimeout time.Duration
	// Stdout and Stderr receive the server processes' and install scripts' output; discarded
	// when nil.
	Stdout, Stderr *os.File
	// Logger receives the host's log; discarded when nil.
	Logger *slog.Logger
	// Isolation says whether instances run contained (contain.Probe, unless the operator
	// turned isolation off): when Available, each instance's install script and server
	// processes run as a user of its own in a private view of the file system; otherwise
	// they run as Hoist's user, and each instance adds a fleet event saying so with Reason.
	Isolation contain.Support
	// UIDBase is the first user ID of instances (DefaultUIDBase when zero).
	UIDBase int
	// EnforceInbound makes each fleet's EC2InboundPermissions decide which packets reach its
	// contained instances' listeners (docs/isolation-network.md); otherwise every port of an
	// instance's address is reachable.
	EnforceInbound bool
	// Network, when set, gives each contained instance a network namespace of its own with
	// its address (docs/isolation-network.md); SDKEndpoint must then be reachable from the
	// namespaces (the network's gateway).
	Network *netns.Network
}

// Host converges the instances running here on what the control plane wants. Create it with
// New; call Step (or Run) to converge and Close to stop.
type Host struct {
	cfg    Config
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wake   chan struct{}
	certs  *fleetCerts

	uids   *uidPool
	limits *limits

	// fetchMu serialises fetches of builds from the shared store (localBuild).
	fetchMu sync.Mutex

	mu        sync.Mutex
	instances map[string]*instance
	// gone holds the instances torn down here; instance IDs are never reused, so a listing
	// read before a teardown finished cannot start one again.
	gone map[string]bool
	wg   sync.WaitGroup
}

// New returns a Host for cfg with the defaults filled in.
func New(cfg Config) *Host {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = gamelift.DefaultTerminationGracePeriod
	}
	if cfg.InstallTimeout <= 0 {
		cfg.InstallTimeout = DefaultInstallTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.UIDBase <= 0 {
		cfg.UIDBase = DefaultUIDBase
	}
	if cfg.CADir == "" {
		cfg.CADir = filepath.Join(filepath.Dir(cfg.Dir), "tls")
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Host{cfg: cfg, ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1), certs: newFleetCerts(cfg),
		uids: &uidPool{base: cfg.UIDBase}, limits: newLimits(cfg), instances: map[string]*instance{}, gone: map[string]bool{}}
}

// newFleetCerts returns the certificate cache of a Host: cfg.CA, or Hoist's CA opened from
// cfg.CADir when first needed.
func newFleetCerts(cfg Config) *fleetCerts {
	return &fleetCerts{open: func() (Issuer, error) {
		if cfg.CA != nil {
			return cfg.CA, nil
		}
		return tlsca.Open(cfg.CADir, cfg.Clock)
	}}
}

// Poke asks Run for a Step now (the control plane changed what it wants).
func (h *Host) Poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Step converges once: it starts an instance the control plane wants and this host does not
// run, updates running instances' process configuration, and stops instances that are
// TERMINATING or no longer listed. Setup and teardown run in the background.
func (h *Host) Step(ctx context.Context) error {
	if h.ctx.Err() != nil {
		return nil
	}
	want, err := h.cfg.Control.LocalInstances(ctx)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	listed := map[string]bool{}
	for _, li := range want {
		listed[li.InstanceID] = true
		in := h.instances[li.InstanceID]
		switch {
		case h.gone[li.InstanceID]:
		case in == nil:
			h.startLocked(li)
		case li.Status == gamelift.InstanceTerminating:
			in.requestStop()
		default:
			in.setProcesses(li.ServerProcesses)
			in.setInbound(li.Inbound)
		}
	}
	for id, in := range h.instances {
		if !listed[id] {
			in.requestStop()
		}
	}
	return nil
}

// startLocked creates the runner of an instance; one that is already TERMINATING (e.g. left
// over from before a restart) is only cleaned up.
func (h *Host) startLocked(li gamelift.LocalInstance) {
	in := newInstance(h, li)
	if li.Status == gamelift.InstanceTerminating {
		in.requestStop()
	}
	h.instances[li.InstanceID] = in
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		in.run()
		h.mu.Lock()
		if h.instances[li.InstanceID] == in {
			delete(h.instances, li.InstanceID)
		}
		if h.ctx.Err() == nil {
			h.gone[li.InstanceID] = true
		}
		h.mu.Unlock()
		h.Poke()
	}()
}

// Run steps on every Poke and on a ticker of the clock until ctx ends or Close is called.
func (h *Host) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	t := h.cfg.Clock.NewTicker(interval)
	defer t.Stop()
	for {
		if err := h.Step(ctx); err != nil && ctx.Err() == nil && h.ctx.Err() == nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			return
		case <-t.C():
		case <-h.wake:
		}
	}
}

// Instances returns the IDs of the instances running (or being set up or torn down) here.
func (h *Host) Instances() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := make([]string, 0, len(h.instances))
	for id := range h.instances {
		ids = append(ids, id)
	}
	return ids
}

// Close stops every instance's processes (SIGTERM, then SIGKILL when the grace period ends)
// and waits for them, or for ctx. Sandboxes and instance records stay: the next Host set up
// over the same control plane installs and starts the instances again.
func (h *Host) Close(ctx context.Context) error {
	h.cancel()
	done := make(chan struct{})
	go func() {
		h.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return errors.Join(errors.New("hostd: instances still stopping"), ctx.Err())
	}
}
