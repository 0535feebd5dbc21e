package cgroup

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// mountinfo builds /proc/self/mountinfo text: each entry is "fstype point superoptions".
func mountinfo(entries ...string) string {
	var b strings.Builder
	for i, e := range entries {
		f := strings.Fields(e)
		b.WriteString(strings.Join([]string{strconv.Itoa(30 + i), "23", "0:" + strconv.Itoa(i), "/", f[1], "rw,relatime", "-", f[0], f[0], f[2]}, " "))
		b.WriteString("\n")
	}
	return b.String()
}

func TestPlanHybrid(t *testing.T) {
	mi := mountinfo("tmpfs /sys/fs/cgroup rw", "cgroup /sys/fs/cgroup/cpu,cpuacct rw,cpu,cpuacct",
		"cgroup /sys/fs/cgroup/memory rw,memory", "cgroup /sys/fs/cgroup/pids rw,pids",
		"cgroup2 /sys/fs/cgroup/unified rw")
	self := "4:pids:/\n3:memory:/svc/x\n2:cpu,cpuacct:/\n0::/svc\n"
	hiers, err := parseLayout(mi, self).plan("hoist")
	if err != nil {
		t.Fatal(err)
	}
	want := []hierarchy{
		{parent: "/sys/fs/cgroup/cpu,cpuacct/hoist", ctrls: []string{"cpu"}},
		{parent: "/sys/fs/cgroup/memory/svc/x/hoist", ctrls: []string{"memory"}},
		{parent: "/sys/fs/cgroup/pids/hoist", ctrls: []string{"pids"}},
		{parent: "/sys/fs/cgroup/unified/svc/hoist", v2: true},
	}
	if !reflect.DeepEqual(hiers, want) {
		t.Fatalf("plan = %+v\nwant %+v", hiers, want)
	}
}

func TestPlanUnified(t *testing.T) {
	root := t.TempDir()
	own := filepath.Join(root, "system.slice", "hoist.service")
	if err := os.MkdirAll(own, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "cgroup.controllers"), []byte("cpuset cpu io memory pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	hiers, err := parseLayout(mountinfo("cgroup2 "+root+" rw"), "0::/system.slice/hoist.service\n").plan("hoist")
	if err != nil {
		t.Fatal(err)
	}
	want := []hierarchy{{parent: filepath.Join(own, "hoist"), v2: true, ctrls: []string{"cpu", "memory", "pids"}}}
	if !reflect.DeepEqual(hiers, want) {
		t.Fatalf("plan = %+v\nwant %+v", hiers, want)
	}
}

func TestPlanMissingController(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "cgroup.controllers"), []byte("cpu pids\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := parseLayout(mountinfo("cgroup2 "+root+" rw"), "0::/\n").plan("hoist")
	if err == nil || !strings.Contains(err.Error(), "memory controller") {
		t.Fatalf("plan without memory: %v", err)
	}
}

func TestParseMountNamespacedRoot(t *testing.T) {
	m, ok := parseMount(`41 31 0:38 /ns /sys/fs/cgroup/my\040unified rw - cgroup2 cgroup2 rw`)
	if !ok || !m.v2 || m.point != "/sys/fs/cgroup/my unified" || m.root != "/ns" {
		t.Fatalf("parseMount = %+v, %v", m, ok)
	}
	if got := m.dirOf("/ns/a"); got != "/sys/fs/cgroup/my unified/a" {
		t.Fatalf("dirOf = %s", got)
	}
	if _, ok := parseMount("22 1 0:5 / /proc rw - proc proc rw"); ok {
		t.Fatal("proc parsed as a cgroup mount")
	}
}

// On a hybrid host a group has a directory in each v1 hierarchy and one on cgroup2, and Dirs
// says which is which (package contain joins them differently).
func TestDirsHybrid(t *testing.T) {
	mi := mountinfo("cgroup /sys/fs/cgroup/cpu rw,cpu", "cgroup /sys/fs/cgroup/memory rw,memory",
		"cgroup /sys/fs/cgroup/pids rw,pids", "cgroup2 /sys/fs/cgroup/unified rw")
	hiers, err := parseLayout(mi, "3:pids:/\n2:memory:/\n1:cpu:/\n0::/\n").plan("hoist")
	if err != nil {
		t.Fatal(err)
	}
	got := (&Manager{hiers: hiers}).group("i-1").Dirs()
	want := []Dir{{Path: "/sys/fs/cgroup/cpu/hoist/i-1"}, {Path: "/sys/fs/cgroup/memory/hoist/i-1"},
		{Path: "/sys/fs/cgroup/pids/hoist/i-1"}, {Path: "/sys/fs/cgroup/unified/hoist/i-1", V2: true}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Dirs = %+v\nwant %+v", got, want)
	}
}
