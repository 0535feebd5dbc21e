// Package cgroup puts the processes of a local instance in control groups that hold them to
// the vCPUs, memory and process count of the instance's type. It works on every layout a
// Linux host may have: cgroup v2 alone ("unified"), cgroup v1 alone, and the hybrid of the
// two (controllers on v1, an empty cgroup2 hierarchy beside them). Each controller (cpu,
// memory, pids) is taken from the v1 hierarchy that carries it, else from cgroup2.
//
// A Manager owns a parent group (Config.Parent) below the cgroup this process is in, in every
// hierarchy it uses; Create makes one group per instance beneath it. A process joins the
// group in every hierarchy Dirs lists before it execs (package contain does that), so nothing
// it starts escapes the limits. On a host with cgroup2 the group's cgroup2 directory
// (UnifiedDir) is where per-instance BPF programs attach.
//
// The package is a library: it keeps no state beyond the directories it names, and its only
// waiting (Close draining a group) runs on the clock it is given. It is hand-written rather
// than built on containerd/cgroups because Hoist needs three controllers and the OOM count,
// not that module's systemd, eBPF device and statistics dependencies.
//
// Only hostd (and tests) should import it.
package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// Limits are the resources of one group. A zero field means no limit.
type Limits struct {
	// CPUs is the CPU time the group may use, in CPUs (1.5 = one and a half cores), enforced
	// as a CFS quota over a 100 ms period.
	CPUs float64
	// MemoryBytes is the most memory (RSS and page cache, no swap) the group may hold; beyond
	// it the kernel's OOM killer kills one of its processes.
	MemoryBytes int64
	// Pids is the most processes and threads the group may hold; fork and clone fail beyond.
	Pids int
}

// Controllers Hoist needs, each from a v1 hierarchy or cgroup2.
var controllers = []string{"cpu", "memory", "pids"}

// DefaultParent is the name of the Manager's parent group when Config.Parent is empty.
const DefaultParent = "hoist"

// DefaultDrainTimeout is how long Close waits for killed processes to leave a group.
const DefaultDrainTimeout = 10 * time.Second

// Config configures a Manager.
type Config struct {
	// Parent is the parent group's path below this process's own cgroup (DefaultParent when
	// empty). Several Hoist processes on one host need different parents.
	Parent string
	// Clock paces Close's retries; clock.Real{} when nil.
	Clock clock.Clock
	// DrainTimeout bounds Close's wait for a group to empty (DefaultDrainTimeout when zero).
	DrainTimeout time.Duration
}

// hierarchy is one mounted cgroup hierarchy Hoist uses.
type hierarchy struct {
	parent string   // the parent group's directory in it
	v2     bool     // cgroup2
	ctrls  []string // the controllers of ours it carries
}

// Manager creates and removes the groups of local instances. Create it with New.
type Manager struct {
	cfg   Config
	hiers []hierarchy
}

// New detects the host's cgroup layout and creates the parent group in every hierarchy it
// needs. It fails, with a reason fit for a log line, when a controller is missing or the
// groups cannot be created (not root, no delegation).
func New(cfg Config) (*Manager, error) {
	if cfg.Parent == "" {
		cfg.Parent = DefaultParent
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.DrainTimeout <= 0 {
		cfg.DrainTimeout = DefaultDrainTimeout
	}
	lay, err := readLayout("/proc/self/mountinfo", "/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	hiers, err := lay.plan(cfg.Parent)
	if err != nil {
		return nil, err
	}
	m := &Manager{cfg: cfg, hiers: hiers}
	for _, h := range hiers {
		if err := m.makeParent(h); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Layout describes the hierarchies in use, e.g. "cgroup v1 (cpu, memory, pids) with cgroup2
// at /sys/fs/cgroup/unified", for the log line saying how instances are contained.
func (m *Manager) Layout() string {
	var v1, v2 []string
	unified := ""
	for _, h := range m.hiers {
		if h.v2 {
			v2, unified = h.ctrls, h.parent
		} else {
			v1 = append(v1, h.ctrls...)
		}
	}
	switch {
	case len(v1) == 0:
		return fmt.Sprintf("cgroup v2 (%s) at %s", strings.Join(v2, ", "), unified)
	case unified == "":
		return fmt.Sprintf("cgroup v1 (%s)", strings.Join(v1, ", "))
	case len(v2) == 0:
		return fmt.Sprintf("cgroup v1 (%s) with cgroup2 at %s", strings.Join(v1, ", "), unified)
	}
	return fmt.Sprintf("cgroup v1 (%s) and v2 (%s) at %s", strings.Join(v1, ", "), strings.Join(v2, ", "), unified)
}

// makeParent creates h's parent group; on cgroup2 it enables our controllers for the groups
// beneath it, level by level from this process's own cgroup.
func (m *Manager) makeParent(h hierarchy) error {
	if err := os.MkdirAll(h.parent, 0o755); err != nil {
		return fmt.Errorf("cgroup: cannot create %s: %w", h.parent, err)
	}
	if !h.v2 || len(h.ctrls) == 0 {
		return nil
	}
	own := filepath.Dir(h.parent)
	for _, dir := range []string{own, h.parent} {
		if err := enableControllers(dir, h.ctrls); err != nil {
			return err
		}
	}
	return nil
}

// enableControllers writes "+ctrl ..." to dir's cgroup.subtree_control. cgroup2 refuses it
// while dir itself holds processes (EBUSY); they are then moved into a leaf, dir/hoist-self.
func enableControllers(dir string, ctrls []string) error {
	want := "+" + strings.Join(ctrls, " +")
	err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(want), 0)
	if err == nil || !errors.Is(err, errBusy) {
		return wrapErr("enable controllers in", dir, err)
	}
	leaf := filepath.Join(dir, "hoist-self")
	if err := os.MkdirAll(leaf, 0o755); err != nil {
		return wrapErr("create", leaf, err)
	}
	pids, err := readPids(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return err
	}
	for _, pid := range pids {
		_ = os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte(fmt.Sprint(pid)), 0)
	}
	err = os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(want), 0)
	return wrapErr("enable controllers in", dir, err)
}

func wrapErr(what, path string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("cgroup: cannot %s %s: %w", what, path, err)
}

// readPids reads a cgroup.procs file.
func readPids(path string) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pids []int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var pid int
		if _, err := fmt.Sscan(sc.Text(), &pid); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, sc.Err()
}

// Sweep removes the groups under the parent that keep does not want (all of them when keep is
// nil), killing what runs in them: the groups a previous run left behind. The host calls it
// at start, before it creates any. It returns the names removed.
func (m *Manager) Sweep(keep func(name string) bool) ([]string, error) {
	names := map[string]bool{}
	for _, h := range m.hiers {
		entries, err := os.ReadDir(h.parent)
		if err != nil {
			return nil, fmt.Errorf("cgroup: cannot list %s: %w", h.parent, err)
		}
		for _, e := range entries {
			if e.IsDir() && e.Name() != "hoist-self" && (keep == nil || !keep(e.Name())) {
				names[e.Name()] = true
			}
		}
	}
	removed := slices.Sorted(func(yield func(string) bool) {
		for n := range names {
			if !yield(n) {
				return
			}
		}
	})
	for _, n := range removed {
		if err := m.group(n).Close(); err != nil {
			return nil, err
		}
	}
	return removed, nil
}

// Remove removes every group (killing what runs in them) and the parent group itself, in
// every hierarchy: for a Hoist server that shuts down for good, and for tests.
func (m *Manager) Remove() error {
	if _, err := m.Sweep(nil); err != nil {
		return err
	}
	for _, h := range m.hiers {
		if err := os.Remove(h.parent); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup: cannot remove %s: %w", h.parent, err)
		}
	}
	return nil
}
