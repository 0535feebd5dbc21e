package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// newManager returns a Manager with a parent group of the test's own, removed at the end. It
// skips the test when this host cannot give it one (not root, a controller missing).
func newManager(t *testing.T) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("cgroup tests need root")
	}
	m, err := New(Config{Parent: fmt.Sprintf("hoist-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "-"))})
	if err != nil {
		t.Skipf("no cgroups here: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Remove(); err != nil {
			t.Error(err)
		}
		for _, h := range m.hiers {
			if _, err := os.Stat(h.parent); !os.IsNotExist(err) {
				t.Errorf("%s still there after Remove: %v", h.parent, err)
			}
		}
	})
	return m
}

// startIn starts script with /bin/sh as a process that first joins g through its procs files,
// the way package contain joins a process before it execs.
func startIn(t *testing.T, g *Group, script string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	join := `for f do echo $$ > "$f" || exit 97; done; `
	cmd := exec.Command("/bin/sh", append([]string{"-c", join + script, "sh"}, g.ProcsFiles()...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &out
}

func TestMemoryLimitOOMKillsAndCounts(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-oom", Limits{MemoryBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := g.OOMKills(); err != nil || n != 0 {
		t.Fatalf("OOMKills of a new group = %d, %v", n, err)
	}
	// tail keeps the last line of its input in memory; /dev/zero has no newline.
	cmd, out := startIn(t, g, "exec tail /dev/zero")
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("tail ended with %v (%s), want SIGKILL", err, out)
	}
	if n, err := g.OOMKills(); err != nil || n != 1 {
		t.Fatalf("OOMKills = %d, %v; want 1", n, err)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestPidsLimitRefusesForks(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-pids", Limits{Pids: 2})
	if err != nil {
		t.Fatal(err)
	}
	// The shell and one sleep fill the group; the second sleep cannot be forked.
	cmd, out := startIn(t, g, "sleep 30 >/dev/null 2>&1 & sleep 0 && echo second-fork-ran; kill $!")
	_ = cmd.Wait()
	if strings.Contains(out.String(), "second-fork-ran") || !strings.Contains(strings.ToLower(out.String()), "fork") {
		t.Fatalf("output %q: the second fork was not refused", out)
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLimitsAreWritten(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-limits", Limits{CPUs: 0.5, MemoryBytes: 64 << 20, Pids: 100})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for i, h := range g.hiers {
		for _, c := range h.ctrls {
			for _, s := range settings(c, h.v2, Limits{CPUs: 0.5, MemoryBytes: 64 << 20, Pids: 100}) {
				want[filepath.Join(g.dirs[i], s.file)] = s.value
			}
		}
	}
	for _, v := range []string{"50000", "67108864", "100"} {
		if !containsValue(want, v) {
			t.Fatalf("no setting writes %s: %v", v, want)
		}
	}
	for path, v := range want {
		b, err := os.ReadFile(path)
		if os.IsNotExist(err) {
			continue // optional (swap accounting)
		}
		if err != nil || !strings.HasPrefix(strings.TrimSpace(string(b)), v) {
			t.Errorf("%s = %q, %v; want %s", path, b, err, v)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
}

func containsValue(m map[string]string, v string) bool {
	for _, x := range m {
		if strings.HasPrefix(x, v) {
			return true
		}
	}
	return false
}

func TestCloseKillsWhatIsLeftAndRemovesTheGroup(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-close", Limits{Pids: 50})
	if err != nil {
		t.Fatal(err)
	}
	cmd, out := startIn(t, g, "sleep 1000 & exec sleep 1000")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	for !inGroup(t, g, cmd.Process.Pid) {
		select {
		case err := <-done:
			t.Fatalf("process ended before joining: %v %s", err, out)
		default:
		}
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("the process in the group survived Close")
	}
	for _, d := range g.dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s still exists after Close: %v", d, err)
		}
	}
	if err := g.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// inGroup reports whether pid is in every hierarchy of g (it has run the join loop).
func inGroup(t *testing.T, g *Group, pid int) bool {
	for _, f := range g.ProcsFiles() {
		pids, err := readPids(f)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, p := range pids {
			found = found || p == pid
		}
		if !found {
			return false
		}
	}
	return true
}

func TestSweepRemovesStaleGroups(t *testing.T) {
	m := newManager(t)
	for _, n := range []string{"i-keep", "i-stale"} {
		if _, err := m.Create(n, Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := m.Sweep(func(name string) bool { return name == "i-keep" })
	if err != nil || len(removed) != 1 || removed[0] != "i-stale" {
		t.Fatalf("Sweep = %v, %v", removed, err)
	}
	for _, h := range m.hiers {
		if _, err := os.Stat(filepath.Join(h.parent, "i-keep")); err != nil {
			t.Errorf("kept group gone: %v", err)
		}
	}
}

func TestUnifiedDirOnHostsWithCgroup2(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-unified", Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	hasV2 := false
	for _, h := range m.hiers {
		hasV2 = hasV2 || h.v2
	}
	d := g.UnifiedDir()
	if !hasV2 {
		if d != "" {
			t.Fatalf("UnifiedDir = %q without cgroup2", d)
		}
		return
	}
	if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err != nil {
		t.Fatalf("UnifiedDir %q is not a cgroup2 group: %v", d, err)
	}
	t.Logf("layout: %s; unified dir %s", m.Layout(), d)
}

func TestCreateRefusesBadNames(t *testing.T) {
	m := &Manager{}
	for _, n := range []string{"", ".", "..", "a/b", "hoist-self"} {
		if _, err := m.Create(n, Limits{}); err == nil {
			t.Errorf("Create(%q) succeeded", n)
		}
	}
}

func TestHostMemory(t *testing.T) {
	n, err := HostMemory()
	if err != nil || n < 64<<20 {
		t.Fatalf("HostMemory = %d, %v", n, err)
	}
	if _, err := parseKiB(" 12 MB"); err == nil {
		t.Fatal("parseKiB accepted MB")
	}
}

// TestCPUQuotaThrottles: a busy process in a group with a small quota is throttled by the
// kernel (cpu.stat nr_throttled), not only configured.
func TestCPUQuotaThrottles(t *testing.T) {
	m := newManager(t)
	g, err := m.Create("i-cpu", Limits{CPUs: 0.01}) // 1 ms of CPU per 100 ms period
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cmd, out := startIn(t, g, `i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("busy loop: %v %s", err, out)
	}
	for i, h := range g.hiers {
		if !slices.Contains(h.ctrls, "cpu") {
			continue
		}
		n, err := readKeyed(filepath.Join(g.dirs[i], "cpu.stat"), "nr_throttled")
		if err != nil || n == 0 {
			t.Fatalf("nr_throttled = %d, %v", n, err)
		}
		return
	}
	t.Fatal("no hierarchy carries cpu")
}
