package cgroup

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cfsPeriod is the CPU quota period, in microseconds (the kernel's default, 100 ms).
const cfsPeriod = 100000

// Group is one instance's control group, a directory in every hierarchy the Manager uses.
type Group struct {
	m     *Manager
	name  string
	dirs  []string // one per hierarchy, in the Manager's order
	hiers []hierarchy
}

// Create makes the group name (an instance ID) under the parent in every hierarchy and
// applies l. A group left over with that name is reused and its limits set again.
func (m *Manager) Create(name string, l Limits) (*Group, error) {
	if name == "" || strings.ContainsAny(name, "/\x00") || name == "." || name == ".." || name == "hoist-self" {
		return nil, fmt.Errorf("cgroup: %q is not a group name", name)
	}
	g := m.group(name)
	for _, dir := range g.dirs {
		if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return nil, wrapErr("create", dir, err)
		}
	}
	if err := g.apply(l); err != nil {
		_ = g.Close()
		return nil, err
	}
	return g, nil
}

// group names the group name without creating it.
func (m *Manager) group(name string) *Group {
	g := &Group{m: m, name: name, hiers: m.hiers}
	for _, h := range m.hiers {
		g.dirs = append(g.dirs, filepath.Join(h.parent, name))
	}
	return g
}

// Name is the group's name.
func (g *Group) Name() string { return g.name }

// apply writes l into the controllers' files.
func (g *Group) apply(l Limits) error {
	for i, h := range g.hiers {
		for _, c := range h.ctrls {
			if err := writeLimit(g.dirs[i], c, h.v2, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// setting is one file written to apply a limit; optional ones are skipped when absent (no
// swap accounting, for one).
type setting struct {
	file, value string
	optional    bool
}

// writeLimit applies ctrl's part of l in dir.
func writeLimit(dir, ctrl string, v2 bool, l Limits) error {
	for _, s := range settings(ctrl, v2, l) {
		path := filepath.Join(dir, s.file)
		if s.optional {
			if _, err := os.Stat(path); err != nil {
				continue
			}
		}
		if err := os.WriteFile(path, []byte(s.value), 0); err != nil {
			return fmt.Errorf("cgroup: cannot write %s to %s: %w", s.value, path, err)
		}
	}
	return nil
}

// settings lists the files and values that apply ctrl's part of l.
func settings(ctrl string, v2 bool, l Limits) []setting {
	switch {
	case ctrl == "cpu" && v2:
		return []setting{{file: "cpu.max", value: orMax(quota(l.CPUs)) + " " + strconv.Itoa(cfsPeriod)}}
	case ctrl == "cpu":
		q := quota(l.CPUs)
		if q == 0 {
			q = -1
		}
		return []setting{{file: "cpu.cfs_period_us", value: strconv.Itoa(cfsPeriod)},
			{file: "cpu.cfs_quota_us", value: strconv.FormatInt(q, 10)}}
	case ctrl == "memory" && v2:
		return []setting{{file: "memory.max", value: orMax(l.MemoryBytes)},
			{file: "memory.swap.max", value: "0", optional: true}}
	case ctrl == "memory":
		v := strconv.FormatInt(l.MemoryBytes, 10)
		if l.MemoryBytes <= 0 {
			v = "-1"
		}
		// memsw (memory and swap) may not be below the memory limit: set it second.
		return []setting{{file: "memory.limit_in_bytes", value: v},
			{file: "memory.memsw.limit_in_bytes", value: v, optional: true}}
	case ctrl == "pids":
		return []setting{{file: "pids.max", value: orMax(int64(l.Pids))}}
	}
	return nil
}

// quota is the CFS quota in microseconds per period for cpus, 0 for none; at least 1 ms,
// the kernel's minimum.
func quota(cpus float64) int64 {
	if cpus <= 0 {
		return 0
	}
	return max(int64(math.Round(cpus*cfsPeriod)), 1000)
}

func orMax(n int64) string {
	if n <= 0 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

// Dir is the group's directory in one hierarchy.
type Dir struct {
	// Path is the directory.
	Path string
	// V2 is true on cgroup2 (the unified hierarchy), false on a v1 hierarchy: how a process
	// joins differs (cgroup2 lets it be started in the group, v1 lets one thread move).
	V2 bool
}

// Dirs lists the group's directories, one per hierarchy (including the cgroup2 one on a
// hybrid host): a process of the instance joins the group in each before it execs.
func (g *Group) Dirs() []Dir {
	out := make([]Dir, len(g.dirs))
	for i, d := range g.dirs {
		out[i] = Dir{Path: d, V2: g.hiers[i].v2}
	}
	return out
}

// ProcsFiles are the files listing the group's processes, one per hierarchy; writing a PID
// into each moves that process into the group.
func (g *Group) ProcsFiles() []string {
	out := make([]string, len(g.dirs))
	for i, d := range g.dirs {
		out[i] = filepath.Join(d, "cgroup.procs")
	}
	return out
}

// UnifiedDir is the group's cgroup2 directory (on a hybrid host, one without controllers),
// where BPF programs for the instance attach; "" when the host has no cgroup2.
func (g *Group) UnifiedDir() string {
	for i, h := range g.hiers {
		if h.v2 {
			return g.dirs[i]
		}
	}
	return ""
}

// OOMKills is how many processes of the group the kernel's OOM killer has killed: the
// oom_kill count of memory.events on cgroup2, of memory.oom_control on v1 (Linux 4.13 on).
func (g *Group) OOMKills() (int, error) {
	for i, h := range g.hiers {
		if !slices.Contains(h.ctrls, "memory") {
			continue
		}
		file := "memory.oom_control"
		if h.v2 {
			file = "memory.events"
		}
		return readKeyed(filepath.Join(g.dirs[i], file), "oom_kill")
	}
	return 0, errors.New("cgroup: no memory controller")
}

// readKeyed reads the value of key in a flat-keyed cgroup file ("key value" lines).
func readKeyed(path, key string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " ")
		if k == key {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return 0, fmt.Errorf("cgroup: %s: %s is not a number", path, key)
			}
			return n, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	return 0, fmt.Errorf("cgroup: %s has no %s (kernel older than 4.13?)", path, key)
}

// Pids lists the processes in the group, in any of its hierarchies.
func (g *Group) Pids() ([]int, error) {
	var all []int
	for _, f := range g.ProcsFiles() {
		pids, err := readPids(f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		for _, p := range pids {
			if !slices.Contains(all, p) {
				all = append(all, p)
			}
		}
	}
	slices.Sort(all)
	return all, nil
}

// Close kills every process left in the group and removes its directories, retrying while the
// killed processes drain, up to Config.DrainTimeout. On cgroup2 the kill is cgroup.kill (no
// PID can be reused under it); elsewhere each listed PID gets SIGKILL. Closing a group that
// is gone is not an error.
func (g *Group) Close() error {
	deadline := g.m.cfg.Clock.Now().Add(g.m.cfg.DrainTimeout)
	wait := time.Millisecond
	for {
		g.kill()
		left := g.remove()
		if len(left) == 0 {
			return nil
		}
		if !g.m.cfg.Clock.Now().Before(deadline) {
			return fmt.Errorf("cgroup: group %s still busy after %s: %s", g.name, g.m.cfg.DrainTimeout, strings.Join(left, ", "))
		}
		<-g.m.cfg.Clock.After(wait)
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// kill sends every process in the group SIGKILL.
func (g *Group) kill() {
	if d := g.UnifiedDir(); d != "" {
		_ = os.WriteFile(filepath.Join(d, "cgroup.kill"), []byte("1"), 0)
	}
	pids, _ := g.Pids()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// remove removes the group's directories and returns those still there.
func (g *Group) remove() []string {
	var left []string
	for _, d := range g.dirs {
		if err := os.Remove(d); err != nil && !errors.Is(err, os.ErrNotExist) {
			left = append(left, d)
		}
	}
	return left
}
