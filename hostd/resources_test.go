package hostd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/store/sqlite"
)

// newTestResources returns Resources with a parent group of the test's own, removed at the
// end; it skips the test when the host cannot limit resources.
func newTestResources(t *testing.T) *Resources {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("resource limits need root")
	}
	r := NewResources(ResourcesConfig{Parent: fmt.Sprintf("hoist-test-%d-%s", os.Getpid(), t.Name())})
	if !r.Limited() {
		t.Skipf("no resource limits here: %s", r.Reason())
	}
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	})
	return r
}

// managedInstance creates a managed c5.large fleet on a real Service and returns the Service
// and the fleet's instance as the host sees it.
func managedInstance(t *testing.T) (*gamelift.Service, gamelift.LocalInstance) {
	t.Helper()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	svc := gamelift.New(gamelift.Config{Store: st})
	h, ctx := svc.Handlers(), t.Context()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	linux := api.OperatingSystemAmazonLinux2023
	b, err := h.CreateBuild(ctx, &api.CreateBuildInput{OperatingSystem: &linux,
		StorageLocation: &api.S3Location{Bucket: api.String(gamelift.LocalBucket), Key: api.String(dir)}})
	if err != nil {
		t.Fatal(err)
	}
	it := api.EC2InstanceTypeC5Large
	if _, err := h.CreateFleet(ctx, &api.CreateFleetInput{Name: api.String("oom"), BuildId: b.Build.BuildId, EC2InstanceType: &it,
		RuntimeConfiguration: &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{{
			LaunchPath: api.String("/local/game/server"), ConcurrentExecutions: api.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	lis, err := svc.LocalInstances(ctx)
	if err != nil || len(lis) != 1 {
		t.Fatalf("LocalInstances = %+v, %v", lis, err)
	}
	return svc, lis[0]
}

// runJoined runs script with /bin/sh as a process that first joins ig, and returns its exit
// as the supervisor reports one.
func runJoined(t *testing.T, ig *InstanceGroup, id, script string) supervisor.Exit {
	t.Helper()
	join := `for f do echo $$ > "$f" || exit 97; done; `
	cmd := exec.Command("/bin/sh", append([]string{"-c", join + script, "sh"}, procsFiles(ig)...)...)
	out, err := cmd.CombinedOutput()
	e := supervisor.Exit{Info: supervisor.Info{ID: id}, Code: cmd.ProcessState.ExitCode()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	} else if err != nil {
		t.Fatalf("%s: %v %s", script, err, out)
	}
	if e.Code == 97 {
		t.Fatalf("%s could not join the group: %s", id, out)
	}
	return e
}

// procsFiles are ig's cgroup.procs files, through which a script joins it.
func procsFiles(ig *InstanceGroup) []string {
	var out []string
	for _, c := range ig.Cgroups() {
		out = append(out, filepath.Join(c.Dir, "cgroup.procs"))
	}
	return out
}

func lastEvent(t *testing.T, svc *gamelift.Service, fleetID string) api.Event {
	t.Helper()
	out, err := svc.Handlers().DescribeFleetEvents(t.Context(), &api.DescribeFleetEventsInput{FleetId: api.String(fleetID)})
	if err != nil || len(out.Events) == 0 {
		t.Fatalf("DescribeFleetEvents = %+v, %v", out, err)
	}
	return out.Events[len(out.Events)-1]
}

// TestOutOfMemoryIsReportedAsACrash: a process of an instance that allocates past its limit
// is killed by the kernel, and the host reports SERVER_PROCESS_CRASHED naming the kill and
// the limit; other exits are reported as before.
func TestOutOfMemoryIsReportedAsACrash(t *testing.T) {
	r := newTestResources(t)
	svc, li := managedInstance(t)
	if li.Resources.MemoryBytes != 4<<30 || li.Resources.CPUs != 2 {
		t.Fatalf("c5.large resources %+v", li.Resources)
	}
	li.Resources.MemoryBytes = 32 << 20 // small enough to reach at once
	ig, err := r.Create(li)
	if err != nil {
		t.Fatal(err)
	}
	defer ig.Close()
	ctx := context.Background()

	e := runJoined(t, ig, "hungry", "exec tail /dev/zero")
	if e.Signal != "killed" {
		t.Fatalf("tail ended %+v, want killed", e)
	}
	if err := reportExit(ctx, svc, li, ig, e); err != nil {
		t.Fatal(err)
	}
	ev := lastEvent(t, svc, li.FleetID)
	if *ev.EventCode != api.EventCodeServerProcessCrashed || !strings.Contains(*ev.Message, "out of memory") ||
		!strings.Contains(*ev.Message, "32 MiB") || !strings.Contains(*ev.Message, "hungry") {
		t.Fatalf("event %s: %s", *ev.EventCode, *ev.Message)
	}

	// The kill is attributed once: a later SIGKILL from elsewhere is a plain crash.
	killed := runJoined(t, ig, "shot", "kill -KILL $$")
	if ig.OutOfMemory(killed) {
		t.Fatal("a SIGKILL without a new OOM kill counted as one")
	}
	crash := runJoined(t, ig, "crashy", "exit 3")
	if err := reportExit(ctx, svc, li, ig, crash); err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, svc, li.FleetID); *ev.EventCode != api.EventCodeServerProcessCrashed || strings.Contains(*ev.Message, "memory") {
		t.Fatalf("crash event %s: %s", *ev.EventCode, *ev.Message)
	}
}

// TestInstanceGroupLimitsAndTeardown: an instance's group has its type's limits (a fork past
// the process limit fails) and Close kills what is left and removes it.
func TestInstanceGroupLimitsAndTeardown(t *testing.T) {
	r := newTestResources(t)
	li := gamelift.LocalInstance{FleetID: "fleet-1", InstanceID: "i-0123456789abcdef0",
		Resources: gamelift.InstanceResources{CPUs: 1, MemoryBytes: 256 << 20, Pids: 2}}
	ig, err := r.Create(li)
	if err != nil {
		t.Fatal(err)
	}
	e := runJoined(t, ig, "forky", "sleep 30 >/dev/null 2>&1 & sleep 0 && exit 0; exit 5")
	if e.Code == 0 {
		t.Fatal("a second child was forked past a process limit of 2")
	}
	files := procsFiles(ig)
	if len(files) == 0 || !strings.Contains(files[0], li.InstanceID) {
		t.Fatalf("cgroup.procs files = %v", files)
	}
	if err := ig.Close(); err != nil { // kills the background sleep
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Dir(f)); !os.IsNotExist(err) {
			t.Errorf("%s remains after Close: %v", filepath.Dir(f), err)
		}
	}
	if _, err := r.Create(gamelift.LocalInstance{InstanceID: "i-stale"}); err != nil {
		t.Fatal(err)
	}
	if removed, err := r.Sweep(nil); err != nil || len(removed) != 1 || removed[0] != "i-stale" {
		t.Fatalf("Sweep = %v, %v", removed, err)
	}
}

// TestDegradedResources: without cgroups nothing is created, every call is harmless, the
// reason is kept, and exits are reported with the agent's codes.
func TestDegradedResources(t *testing.T) {
	r := newResources(nil, errors.New("cgroup: the memory controller is available neither on a cgroup v1 hierarchy nor on cgroup2"))
	if r.Limited() || !strings.Contains(r.Reason(), "memory controller") {
		t.Fatalf("degraded: limited %v, reason %q", r.Limited(), r.Reason())
	}
	ig, err := r.Create(gamelift.LocalInstance{InstanceID: "i-1", Resources: gamelift.InstanceResources{MemoryBytes: 1 << 30}})
	if err != nil || ig != nil {
		t.Fatalf("Create = %v, %v", ig, err)
	}
	if ig.Cgroups() != nil || ig.UnifiedDir() != "" || ig.Close() != nil || ig.OutOfMemory(supervisor.Exit{Signal: "killed"}) {
		t.Fatal("a nil InstanceGroup is not inert")
	}
	if removed, err := r.Sweep(nil); err != nil || removed != nil {
		t.Fatalf("Sweep = %v, %v", removed, err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestSupervisedProcessOutOfMemory: a server process run by agent/supervisor, joined to its
// instance's group through its cgroup.procs files, is killed past the memory limit, and the
// supervisor's Exit for it is reported as the out-of-memory crash.
func TestSupervisedProcessOutOfMemory(t *testing.T) {
	r := newTestResources(t)
	svc, li := managedInstance(t)
	li.Resources.MemoryBytes = 48 << 20
	ig, err := r.Create(li)
	if err != nil {
		t.Fatal(err)
	}
	defer ig.Close()
	exits := make(chan supervisor.Exit, 10)
	sup := supervisor.New(supervisor.Config{StaggerMin: 0, StaggerMax: 1, Rand: func() float64 { return 0 },
		Hooks: supervisor.Hooks{
			Prestart: func(_ context.Context, l *supervisor.Launch) error {
				l.Path, l.Dir = "/bin/sh", "/"
				l.Args = append([]string{"-c", `for f do echo $$ > "$f" || exit 97; done; exec tail /dev/zero`, "sh"}, procsFiles(ig)...)
				return nil
			},
			Exited: func(e supervisor.Exit) { exits <- e },
		}})
	sup.SetConfig([]supervisor.ServerProcess{{LaunchPath: "/local/game/server", ConcurrentExecutions: 1}})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go sup.Run(ctx)
	var e supervisor.Exit
	select {
	case e = <-exits:
	case <-time.After(30 * time.Second):
		t.Fatal("the process was not killed within 30 s")
	}
	sup.Stop()
	<-sup.Done()
	if err := reportExit(t.Context(), svc, li, ig, e); err != nil {
		t.Fatal(err)
	}
	ev := lastEvent(t, svc, li.FleetID)
	if *ev.EventCode != api.EventCodeServerProcessCrashed || !strings.Contains(*ev.Message, "out of memory") ||
		!strings.Contains(*ev.Message, "48 MiB") || !strings.Contains(*ev.Message, e.ID) {
		t.Fatalf("exit %+v reported as %s: %s", e, *ev.EventCode, *ev.Message)
	}
}
