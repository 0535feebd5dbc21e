package hostd

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"syscall"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/cgroup"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/contain"
)

// Resources holds local instances to the vCPUs, memory and process count of their instance
// type with control groups (package cgroup): one group per instance, named after it. On a
// host without cgroups (not root, a controller missing, not Linux) it runs degraded: groups
// are not created, Reason says why, and instances run unlimited, as before.
//
// How the host uses it (docs/managed-fleets.md, "Resources"):
//
//	New:          r := NewResources(...); r.Sweep(nil) before any instance runs
//	setup:        ig, err := r.Create(li) before the install script (ig is nil when degraded)
//	each process: contain.Spec.Cgroups = ig.Cgroups(); netguard attaches at ig.UnifiedDir()
//	install:      an install script that died of SIGKILL: ig.KilledOutOfMemory(true)
//	exit:         reportExit(ctx, control, li, ig, exit) instead of AgentProcessExited
//	teardown:     ig.Close() once the processes are stopped, before the sandbox goes
type Resources struct {
	m      *cgroup.Manager // nil when degraded
	reason string
}

// ResourcesConfig configures NewResources.
type ResourcesConfig struct {
	// Parent is the name of the parent group of the instances' groups (cgroup.DefaultParent
	// when empty); two Hoist servers on one host need different ones.
	Parent string
	// Logger gets one line at start saying whether instances are limited; discarded when nil.
	Logger *slog.Logger
}

// NewResources sets up the instances' control groups, or the degraded mode when the host
// cannot have them; either way it logs once which it is.
func NewResources(cfg ResourcesConfig) *Resources {
	// The wait for a closed group to drain is on the wall clock, never the host's (possibly
	// virtual) one: it waits for the kernel to end processes, not for game time to pass.
	m, err := cgroup.New(cgroup.Config{Parent: cfg.Parent, Clock: clock.Real{}})
	r := newResources(m, err)
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if r.m == nil {
		log.Warn("local instances run without resource limits: their processes may use all of this host's CPUs and memory", "reason", r.reason)
	} else {
		log.Info("local instances get the vCPUs, memory and process count of their instance type", "cgroups", m.Layout())
	}
	return r
}

func newResources(m *cgroup.Manager, err error) *Resources {
	if err != nil {
		return &Resources{reason: "no resource limits: " + err.Error()}
	}
	return &Resources{m: m}
}

// Limited reports whether instances get their type's resources; Reason says why not.
func (r *Resources) Limited() bool { return r.m != nil }

// Reason is why instances are not limited ("" when they are), for the log and for
// DescribeInstances' status reason.
func (r *Resources) Reason() string { return r.reason }

// Sweep removes the groups a previous run left behind, killing their processes: every group
// whose instance keep does not name (all of them when keep is nil). Call it at start, before
// any instance runs.
func (r *Resources) Sweep(keep func(instanceID string) bool) ([]string, error) {
	if r.m == nil {
		return nil, nil
	}
	return r.m.Sweep(keep)
}

// Create makes li's group with the limits of its instance type. It returns nil (no group,
// no error) when degraded; every InstanceGroup method accepts nil.
func (r *Resources) Create(li gamelift.LocalInstance) (*InstanceGroup, error) {
	if r.m == nil {
		return nil, nil
	}
	res := li.Resources
	g, err := r.m.Create(li.InstanceID, cgroup.Limits{CPUs: res.CPUs, MemoryBytes: res.MemoryBytes, Pids: res.Pids})
	if err != nil {
		return nil, fmt.Errorf("resource limits of instance %s: %w", li.InstanceID, err)
	}
	return &InstanceGroup{g: g, limits: res}, nil
}

// InstanceGroup is one instance's control group, from Create until Close.
type InstanceGroup struct {
	g      *cgroup.Group
	limits gamelift.InstanceResources

	mu   sync.Mutex
	seen int // OOM kills already attributed to an exit
}

// Cgroups are the group's directories, one per hierarchy, that a process of the instance
// (install script, server process) joins before it execs: contain.Spec.Cgroups. Nil when
// degraded.
func (ig *InstanceGroup) Cgroups() []contain.Cgroup {
	if ig == nil {
		return nil
	}
	var out []contain.Cgroup
	for _, d := range ig.g.Dirs() {
		out = append(out, contain.Cgroup{Dir: d.Path, V2: d.V2})
	}
	return out
}

// UnifiedDir is the group's cgroup2 directory (for netguard's BPF programs); "" when degraded
// or the host has no cgroup2.
func (ig *InstanceGroup) UnifiedDir() string {
	if ig == nil {
		return ""
	}
	return ig.g.UnifiedDir()
}

// Close kills whatever still runs in the group and removes it: call it at the instance's
// teardown, after its processes have been stopped.
func (ig *InstanceGroup) Close() error {
	if ig == nil {
		return nil
	}
	return ig.g.Close()
}

// OutOfMemory tells whether a server process's exit was an out-of-memory kill: it died of
// SIGKILL that the supervisor did not send, and the group's OOM kill count rose past the kills
// already attributed. Each kill is attributed to one exit.
func (ig *InstanceGroup) OutOfMemory(e supervisor.Exit) bool {
	return ig.KilledOutOfMemory(e.Signal == syscall.SIGKILL.String() && !e.Killed)
}

// KilledOutOfMemory is OutOfMemory for any process of the instance (the install script, say):
// sigkilled says that SIGKILL, from no one in Hoist, ended it.
func (ig *InstanceGroup) KilledOutOfMemory(sigkilled bool) bool {
	if ig == nil || !sigkilled {
		return false
	}
	n, err := ig.g.OOMKills()
	if err != nil {
		return false
	}
	ig.mu.Lock()
	defer ig.mu.Unlock()
	if n <= ig.seen {
		return false
	}
	ig.seen++
	return true
}

// OutOfMemoryReporter is the part of the control plane that records an out-of-memory kill;
// *gamelift.Service implements it.
type OutOfMemoryReporter interface {
	// InstanceProcessOutOfMemory reports a server process killed at its instance's memory
	// limit (SERVER_PROCESS_CRASHED naming the kill and the limit).
	InstanceProcessOutOfMemory(ctx context.Context, fleetID, instanceID, processID string, limitBytes int64) error
}

// reportExit reports a server process's exit to c: as an out-of-memory kill when ig says it
// was one (and c can record it), else with the agent's event code (exitCode).
func reportExit(ctx context.Context, c Control, li gamelift.LocalInstance, ig *InstanceGroup, e supervisor.Exit) error {
	if oom, ok := c.(OutOfMemoryReporter); ok && ig.OutOfMemory(e) {
		return oom.InstanceProcessOutOfMemory(ctx, li.FleetID, li.InstanceID, e.ID, ig.limits.MemoryBytes)
	}
	return c.AgentProcessExited(ctx, li.FleetID, li.InstanceID, e.ID, exitCode(e))
}

// Close removes the instances' groups and their parent, killing what still runs in them: for
// a host that stops for good, and for tests.
func (r *Resources) Close() error {
	if r.m == nil {
		return nil
	}
	return r.m.Remove()
}
