package server_test

import (
	"bytes"
	"context"
	"github.com/hoist-gg/hoist/internal/testwait"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
)

// goBuild compiles a package of this module into a temporary directory.
func goBuild(t *testing.T, pkg, name string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), name)
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// pidsOf returns the PIDs of running processes whose executable is bin.
func pidsOf(bin string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if bytes.HasPrefix(cmd, []byte(bin+"\x00")) && !strings.Contains(string(stat), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// eventually polls cond every 50 ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, d, 50*time.Millisecond, what, cond)
}

// hostingRig is a server on a fake clock, a fleet, and a `hoist agent` process.
type hostingRig struct {
	t        *testing.T
	clk      *clock.Fake
	data     string
	addr     string
	srv      *server.Server
	gl       *gamelift.Client
	fleet    string
	game     string
	hoistBin string
	agent    *exec.Cmd
}

func (r *hostingRig) start() {
	r.srv = startServer(r.t, server.Config{Clock: r.clk, DataDir: r.data, Listen: r.addr})
	r.addr = r.srv.Addr()
}

func (r *hostingRig) utilization() types.FleetUtilization {
	out, err := r.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{r.fleet}})
	if err != nil || len(out.FleetUtilization) != 1 {
		return types.FleetUtilization{}
	}
	return out.FleetUtilization[0]
}

func (r *hostingRig) activeProcesses() int {
	return int(aws.ToInt32(r.utilization().ActiveServerProcessCount))
}

func (r *hostingRig) hasEvent(code types.EventCode) bool {
	out, err := r.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(r.fleet)})
	if err != nil {
		return false
	}
	for _, e := range out.Events {
		if e.EventCode == code {
			return true
		}
	}
	return false
}

func (r *hostingRig) startAgent(compute string) {
	r.agent = runAgent(r.t, r.hoistBin, "http://"+r.addr, r.fleet, sessionLocation, compute)
}

// runAgent starts `hoist agent` as its own process for compute of fleet in location, against
// servers (the --server value: one URL or several, comma-separated); the test's cleanup kills
// it.
func runAgent(t *testing.T, hoistBin, servers, fleet, location, compute string) *exec.Cmd {
	cmd := exec.Command(hoistBin, "agent", "--server", servers, "--fleet-id", fleet,
		"--location", location, "--compute-name", compute, "--grace-period", "5s", "--ip-address", "127.0.0.1")
	if testing.Verbose() {
		cmd.Args = append(cmd.Args, "--process-output")
	}
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+testKeyID, "AWS_SECRET_ACCESS_KEY="+testSecret, "AWS_REGION=us-west-2")
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func newHostingRig(t *testing.T, processes int32) *hostingRig {
	r := &hostingRig{t: t, clk: clock.NewFake(time.Now()), data: t.TempDir(), addr: "127.0.0.1:0"}
	r.hoistBin = buildHoist(t)
	r.game = goBuild(t, "../examples/gameserver", "gameserver")
	t.Cleanup(func() {
		for _, pid := range pidsOf(r.game) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	r.start()
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	if _, err := r.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-hosting-lab")}); err != nil {
		t.Fatal(err)
	}
	f, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("hosting"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String("custom-hosting-lab")}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String(r.game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(processes)}}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	r.fleet = aws.ToString(f.FleetAttributes.FleetId)
	return r
}

// TestAnywhereHostingWithRealProcesses runs `hoist agent` as its own process against a server
// on a fake clock, with the example game server as the fleet's build, and walks the hosting
// lifecycle: processes reach ACTIVE, a killed one is replaced, a runtime configuration change
// takes effect, an unhealthy one is recycled, the server restarts and everything reconnects,
// and deleting the fleet leaves no process behind.
func TestAnywhereHostingWithRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newHostingRig(t, 2)
	r.startAgent("host-1")
	eventually(t, 60*time.Second, "2 ACTIVE processes", func() bool { return r.activeProcesses() == 2 })
	if n := len(pidsOf(r.game)); n != 2 {
		t.Fatalf("%d game server processes running, want 2", n)
	}

	// A killed process is reported and replaced.
	victim := pidsOf(r.game)[0]
	syscall.Kill(victim, syscall.SIGKILL)
	eventually(t, 30*time.Second, "a SERVER_PROCESS_CRASHED event", func() bool { return r.hasEvent(types.EventCodeServerProcessCrashed) })
	eventually(t, 60*time.Second, "the killed process replaced", func() bool {
		pids := pidsOf(r.game)
		return len(pids) == 2 && pids[0] != victim && pids[1] != victim && r.activeProcesses() == 2
	})

	// A runtime configuration change reaches the agent at once.
	_, err := r.gl.UpdateRuntimeConfiguration(context.Background(), &gamelift.UpdateRuntimeConfigurationInput{
		FleetId: aws.String(r.fleet), RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
			{LaunchPath: aws.String(r.game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(3)}}}})
	if err != nil {
		t.Fatalf("UpdateRuntimeConfiguration: %v", err)
	}
	eventually(t, 60*time.Second, "3 ACTIVE processes after the change", func() bool {
		return r.activeProcesses() == 3 && len(pidsOf(r.game)) == 3
	})

	r.restartServer()
	r.deleteFleet()
}

// restartServer stops the server and starts a new one on the same address and data: the agent
// and every process reconnect, and the processes are still ACTIVE.
func (r *hostingRig) restartServer() {
	t := r.t
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	before := pidsOf(r.game)
	r.start()
	eventually(t, 90*time.Second, "processes reconnected after the restart", func() bool {
		return r.srv.Sockets() >= len(before)+1 && r.activeProcesses() == len(before)
	})
	if after := pidsOf(r.game); len(after) != len(before) {
		t.Errorf("%d processes before the restart, %d after", len(before), len(after))
	}
}

// deleteFleet deletes the fleet and checks that its processes and the agent end.
func (r *hostingRig) deleteFleet() {
	t := r.t
	if _, err := r.gl.DeleteFleet(context.Background(), &gamelift.DeleteFleetInput{FleetId: aws.String(r.fleet)}); err != nil {
		t.Fatalf("DeleteFleet: %v", err)
	}
	eventually(t, 60*time.Second, "no game server process left", func() bool { return len(pidsOf(r.game)) == 0 })
	done := make(chan error, 1)
	go func() { done <- r.agent.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Error("the agent did not stop after its fleet was deleted")
	}
	r.clk.Advance(10 * time.Minute)
	if err := r.srv.StepLoops(context.Background()); err != nil {
		t.Fatalf("stepping the loops: %v", err)
	}
	out, err := r.gl.DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{r.fleet}})
	if err != nil || len(out.FleetAttributes) != 1 || out.FleetAttributes[0].Status != types.FleetStatusTerminated {
		t.Errorf("fleet after deletion: %v %+v", err, out)
	}
}

// TestUnhealthyProcessIsRecycled runs a game server that reports unhealthy: once three health
// periods pass on the fake clock without a healthy report, the server terminates it, records
// SERVER_PROCESS_TERMINATED_UNHEALTHY, and the agent launches a replacement.
func TestUnhealthyProcessIsRecycled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newHostingRig(t, 1)
	_, err := r.gl.UpdateRuntimeConfiguration(context.Background(), &gamelift.UpdateRuntimeConfigurationInput{
		FleetId: aws.String(r.fleet), RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
			{LaunchPath: aws.String(r.game), Parameters: aws.String("--port 0 --unhealthy"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	r.startAgent("host-sick")
	eventually(t, 60*time.Second, "1 ACTIVE process", func() bool { return r.activeProcesses() == 1 })
	first := pidsOf(r.game)
	if len(first) != 1 {
		t.Fatalf("%d game server processes, want 1", len(first))
	}
	r.clk.Advance(3*time.Minute + time.Second)
	if err := r.srv.StepLoops(context.Background()); err != nil {
		t.Fatalf("stepping the loops: %v", err)
	}
	if !r.hasEvent(types.EventCodeServerProcessTerminatedUnhealthy) {
		t.Error("no SERVER_PROCESS_TERMINATED_UNHEALTHY event")
	}
	eventually(t, 60*time.Second, "the unhealthy process replaced by a new ACTIVE one", func() bool {
		pids := pidsOf(r.game)
		return len(pids) == 1 && pids[0] != first[0] && r.activeProcesses() == 1
	})
}
