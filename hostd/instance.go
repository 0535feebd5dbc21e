package hostd

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/contain"
)

// instance runs one instance: setup, processes, teardown.
type instance struct {
	h   *Host
	li  gamelift.LocalInstance
	dir string // the sandbox
	uid int    // the user (and group) its processes run as, when contained

	// cgroups and netns contain the processes further (contain.Spec): cgroups are the
	// group's directories (limits.go), netns stays empty unless instances get namespaces.
	cgroups []contain.Cgroup
	netns   string
	group   *InstanceGroup     // its control group; nil when not limited
	guard   io.Closer          // its bind guard; nil when none (under mu)
	inbound []api.IpPermission // the inbound permissions guard enforces (under mu)

	stop     chan struct{} // closed by requestStop
	stopOnce sync.Once

	mu        sync.Mutex
	procs     []supervisor.ServerProcess
	sup       *supervisor.Supervisor // nil until the processes start
	activated bool                   // the first process has launched
}

func newInstance(h *Host, li gamelift.LocalInstance) *instance {
	in := &instance{h: h, li: li, dir: filepath.Join(h.cfg.Dir, li.InstanceID), stop: make(chan struct{})}
	in.procs = specs(li.ServerProcesses)
	if in.contained() {
		in.uid = h.uids.get(li.InstanceID)
	}
	return in
}

// specs converts a runtime configuration's entries for the supervisor.
func specs(sps []api.ServerProcess) []supervisor.ServerProcess {
	out := make([]supervisor.ServerProcess, len(sps))
	for i, sp := range sps {
		out[i] = supervisor.ServerProcess{LaunchPath: api.Deref(sp.LaunchPath), Parameters: api.Deref(sp.Parameters),
			ConcurrentExecutions: int(api.Deref(sp.ConcurrentExecutions))}
	}
	return out
}

func (in *instance) requestStop() { in.stopOnce.Do(func() { close(in.stop) }) }

func (in *instance) stopped() bool {
	select {
	case <-in.stop:
		return true
	default:
		return false
	}
}

// setProcesses applies a changed runtime configuration to the running processes.
func (in *instance) setProcesses(sps []api.ServerProcess) {
	next := specs(sps)
	in.mu.Lock()
	defer in.mu.Unlock()
	if reflect.DeepEqual(next, in.procs) {
		return
	}
	in.procs = next
	if in.sup != nil {
		in.sup.SetConfig(next)
	}
}

// run sets the instance up, runs its processes until it is to stop, and tears it down. When
// the Host closes, the processes are stopped but the sandbox and the record stay.
func (in *instance) run() {
	defer in.h.uids.put(in.li.InstanceID)
	defer in.unlimit()
	ctx := in.h.ctx
	log := in.h.cfg.Logger.With("fleet", in.li.FleetID, "instance", in.li.InstanceID)
	if !in.stopped() {
		if code, err := in.setup(ctx); err != nil {
			log.Warn("instance setup failed", "code", code, "err", err)
			if ctx.Err() != nil {
				return
			}
			_ = in.h.cfg.Control.InstanceFailed(ctx, in.li.FleetID, in.li.InstanceID, code, err.Error())
			in.requestStop()
		} else {
			in.runProcesses(ctx)
			in.killUser()
			if ctx.Err() != nil {
				return
			}
		}
	}
	if err := removeSandbox(in.dir); err != nil {
		log.Error("cannot remove instance sandbox", "dir", in.dir, "err", err)
		return
	}
	if err := in.h.cfg.Control.InstanceGone(ctx, in.li.FleetID, in.li.InstanceID); err != nil {
		log.Error("cannot record instance removal", "err", err)
	}
}

// setup installs the build in a fresh sandbox and checks the launch paths, reporting each
// stage. It returns GameLift's event code for the step that failed.
func (in *instance) setup(ctx context.Context) (api.EventCode, error) {
	c, li := in.h.cfg.Control, in.li
	if err := c.InstanceProgress(ctx, li.FleetID, li.InstanceID, gamelift.StageDownloading); err != nil {
		return api.EventCodeFleetBinaryDownloadFailed, err
	}
	in.reportUnisolated()
	_ = c.InstanceEvent(ctx, li.FleetID, api.EventCodeFleetCreationExtractingBuild,
		fmt.Sprintf("Extracting build %s on instance %s.", li.Build.BuildID, li.InstanceID))
	build, err := in.h.localBuild(ctx, li.Build)
	if err == nil {
		err = installBuild(build, in.dir)
	}
	if err != nil {
		return api.EventCodeFleetBinaryDownloadFailed, fmt.Errorf("build %s could not be installed on instance %s: %w", li.Build.BuildID, li.InstanceID, err)
	}
	if li.DNSName != "" {
		path, err := in.writeCertificate()
		if err == nil {
			err = c.InstanceCertificate(ctx, li.FleetID, li.InstanceID, in.inside(path))
		}
		if err != nil {
			return api.EventCodeFleetActivationFailed, fmt.Errorf("fleet certificate for instance %s: %w", li.InstanceID, err)
		}
	}
	if err := in.handOver(); err != nil {
		return api.EventCodeFleetBinaryDownloadFailed, fmt.Errorf("sandbox of instance %s: %w", li.InstanceID, err)
	}
	if err := in.limit(); err != nil {
		return api.EventCodeFleetActivationFailed, fmt.Errorf("instance %s: %w", li.InstanceID, err)
	}
	if li.Build.InstallScript != "" {
		_ = c.InstanceEvent(ctx, li.FleetID, api.EventCodeFleetCreationRunningInstaller,
			fmt.Sprintf("Running install script %s on instance %s.", li.Build.InstallScript, li.InstanceID))
		if err := in.runInstallScript(ctx); err != nil {
			return api.EventCodeFleetCreationRunningInstaller, err
		}
	}
	if err := c.InstanceProgress(ctx, li.FleetID, li.InstanceID, gamelift.StageValidating); err != nil {
		return api.EventCodeFleetValidationTimedOut, err
	}
	_ = c.InstanceEvent(ctx, li.FleetID, api.EventCodeFleetCreationValidatingRuntimeConfig,
		fmt.Sprintf("Validating the runtime configuration on instance %s.", li.InstanceID))
	in.mu.Lock()
	procs := in.procs
	in.mu.Unlock()
	if err := checkLaunchPaths(in.dir, procs); err != nil {
		return api.EventCodeFleetValidationLaunchPathNotFound, fmt.Errorf("instance %s: %w", li.InstanceID, err)
	}
	if err := c.InstanceProgress(ctx, li.FleetID, li.InstanceID, gamelift.StageBuilding); err != nil {
		return api.EventCodeFleetActivationFailed, err
	}
	return "", nil
}

// runProcesses runs the instance's server processes with a supervisor until the instance is
// to stop or the Host closes, then stops them (grace period, then SIGKILL) and waits.
func (in *instance) runProcesses(ctx context.Context) {
	cfg := in.h.cfg
	sup := supervisor.New(supervisor.Config{
		Clock: cfg.Clock, GracePeriod: cfg.GracePeriod, Logger: cfg.Logger,
		WorkDir: filepath.Join(in.dir, "local", "game"), Stdout: cfg.Stdout, Stderr: cfg.Stderr, DieWithParent: true,
		// Local instances launch processes as fast as they start: no stagger.
		StaggerMin: 0, StaggerMax: 1, Rand: func() float64 { return 0 },
		Hooks: supervisor.Hooks{Prestart: in.prestart, Command: in.command, AfterStart: contain.Started, Started: in.started, Exited: in.exited},
	})
	in.mu.Lock()
	in.sup = sup
	sup.SetConfig(in.procs)
	in.mu.Unlock()
	runCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go sup.Run(runCtx)
	select {
	case <-in.stop:
	case <-ctx.Done():
	}
	sup.Stop()
	<-sup.Done()
}

// prestart resolves the launch path inside the sandbox and sets the Server SDK environment,
// with a fresh compute auth token.
func (in *instance) prestart(ctx context.Context, l *supervisor.Launch) error {
	l.Path = in.inside(sandboxPath(in.dir, l.Spec.LaunchPath))
	l.Dir = filepath.Dir(l.Path)
	token, _, err := in.h.cfg.Control.InstanceAuthToken(in.h.ctx, in.li.FleetID, in.li.InstanceID)
	if err != nil {
		return fmt.Errorf("compute auth token: %w", err)
	}
	l.Env = append(l.Env,
		"GAMELIFT_SDK_WEBSOCKET_URL="+in.h.cfg.SDKEndpoint,
		"GAMELIFT_SDK_AUTH_TOKEN="+token,
		"GAMELIFT_SDK_FLEET_ID="+in.li.FleetID,
		"GAMELIFT_SDK_HOST_ID="+in.li.InstanceID,
		"GAMELIFT_SDK_PROCESS_ID="+l.ID,
		"GAMELIFT_COMPUTE_TYPE=EC2",
		"GAMELIFT_REGION="+in.li.Location,
		"HOIST_INSTANCE_IP_ADDRESS="+in.li.IPAddress,
		"HOIST_INSTANCE_ROOT="+in.root(),
	)
	if in.li.DNSName != "" {
		l.Env = append(l.Env, "HOIST_INSTANCE_DNS_NAME="+in.li.DNSName)
	}
	in.telemetry(l)
	return nil
}

// command runs a contained instance's process contained, with only the environment the
// launch sets.
func (in *instance) command(l *supervisor.Launch, cmd *exec.Cmd) error {
	if !in.contained() {
		return nil
	}
	return in.wrap(cmd, l.Env)
}

// telemetry hands a process the DogStatsD address and tells the tracker where it runs.
func (in *instance) telemetry(l *supervisor.Launch) {
	cfg := in.h.cfg
	if cfg.StatsDHost != "" {
		l.Env = append(l.Env, "GAMELIFT_STATSD_HOST="+cfg.StatsDHost, "GAMELIFT_STATSD_PORT="+cfg.StatsDPort)
	}
	if cfg.Processes != nil {
		cfg.Processes.ProcessLaunched(in.li.FleetID, in.li.Location, in.li.InstanceID, l.ID)
	}
}

// started reports the instance's first launched process (the fleet moves to ACTIVATING).
func (in *instance) started(supervisor.Info) {
	in.mu.Lock()
	first := !in.activated
	in.activated = true
	in.mu.Unlock()
	if first {
		_ = in.h.cfg.Control.InstanceProgress(in.h.ctx, in.li.FleetID, in.li.InstanceID, gamelift.StageActivating)
	}
}

// exited reports a process's end with the event code the hoist agent would send.
func (in *instance) exited(e supervisor.Exit) {
	if in.contained() && e.Code == contain.ExitSetupFailed {
		in.h.cfg.Logger.Error("a server process could not be contained (its stderr says why)", "instance", in.li.InstanceID, "id", e.ID)
	}
	if p := in.h.cfg.Processes; p != nil {
		p.ProcessEnded(e.ID)
	}
	_ = reportExit(in.h.ctx, in.h.cfg.Control, in.li, in.group, e)
}

// exitCode maps how a process ended to the agent's event code (docs/agent.md).
func exitCode(e supervisor.Exit) string {
	switch {
	case e.LaunchErr != nil:
		return string(api.EventCodeServerProcessInvalidPath)
	case e.Reason != "" && e.Killed:
		return string(api.EventCodeServerProcessProcessExitTimeout)
	case e.Reason != "":
		return ""
	case e.Code != 0:
		return string(api.EventCodeServerProcessCrashed)
	}
	return ""
}
