package agent

import (
	"github.com/hoist-gg/hoist/internal/testwait"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
)

// TestAgentHeartbeatPushesAndReports runs the agent against the fake control plane and the
// test websocket server: processes get the GAMELIFT_SDK_* environment, heartbeats list them,
// a ForceExit push kills the named process (reported as FORCE_TERMINATED), an unhealthy
// listing terminates one, a crashing process is reported as CRASHED, and shutdown terminates
// and reports everything and deregisters.
func TestAgentHeartbeatPushesAndReports(t *testing.T) {
	h := startAgent(t, sleepers(2))
	procs := h.live(t, 2)

	// The environment of protocol §1.1.
	for _, p := range procs {
		var body []byte
		testwait.Until(t, 20*time.Second, 2*time.Millisecond, "the process's environment file", func() bool {
			body, _ = os.ReadFile(filepath.Join(h.dir, strconv.Itoa(p.PID)+".env"))
			return body != nil
		})
		env := strings.Split(string(body), "\n")
		slices.Sort(env)
		want := []string{
			"GAMELIFT_SDK_AUTH_TOKEN=token-1", "GAMELIFT_SDK_FLEET_ID=fleet-1", "GAMELIFT_SDK_HOST_ID=host-1",
			"GAMELIFT_SDK_PROCESS_ID=" + p.ID, "GAMELIFT_SDK_WEBSOCKET_URL=wss://sdk.hoist.test/",
		}
		if !slices.Equal(env, want) {
			t.Fatalf("process environment %q, want %q", env, want)
		}
	}

	// A heartbeat lists both processes, once the interval has passed.
	var hb map[string]any
	for hb == nil || len(hb["ProcessList"].([]any)) != 2 {
		hb = h.next(ActionSendHeartbeat, 5*time.Second)
	}
	listed := ids(hb["ProcessList"])
	slices.Sort(listed)
	want := []string{procs[0].ID, procs[1].ID}
	slices.Sort(want)
	if !slices.Equal(listed, want) || hb["Status"] != StatusActive || hb["HeartbeatTimeMillis"] == nil {
		t.Fatalf("heartbeat %v, want Active with %v", hb, want)
	}

	// ForceExitServerProcess kills the named process.
	h.ws.push(map[string]any{"Action": ActionForceExitServerProcess, "ProcessId": procs[0].ID, "StatusCode": 200})
	term := h.next(ActionNotifyServerProcessTermination, time.Second)
	if term["ProcessId"] != procs[0].ID || term["EventCode"] != "SERVER_PROCESS_FORCE_TERMINATED" {
		t.Fatalf("termination report %v", term)
	}
	if alive(procs[0].PID) {
		t.Fatal("force-exited process still running")
	}

	// The heartbeat answer's UnhealthyProcesses are terminated.
	h.ws.push(map[string]any{"Action": ActionSendHeartbeat, "StatusCode": 200, "UnhealthyProcesses": []string{procs[1].ID}})
	term = h.next(ActionNotifyServerProcessTermination, time.Second)
	if term["ProcessId"] != procs[1].ID || term["EventCode"] != "SERVER_PROCESS_TERMINATED_UNHEALTHY" {
		t.Fatalf("termination report %v", term)
	}

	// A runtime configuration change (re-read every minute) brings a crashing process.
	h.cp.setConfig(append(sleepers(2)(h.bin, h.dir),
		supervisor.ServerProcess{LaunchPath: h.bin, Parameters: "hoist-helper exit 7", ConcurrentExecutions: 1}))
	for {
		term = h.next(ActionNotifyServerProcessTermination, 5*time.Second)
		if term["EventCode"] == "SERVER_PROCESS_CRASHED" {
			break
		}
	}
	survivors := h.a.Supervisor().Processes()

	// Shutdown terminates, reports and deregisters.
	h.shutdown()
	for _, p := range survivors {
		if alive(p.PID) {
			t.Errorf("process %d survived shutdown", p.PID)
		}
	}
	if _, _, d := h.cp.counts(); d != 1 {
		t.Fatalf("%d DeregisterCompute calls, want 1", d)
	}
}

// TestAgentSurvivesControlPlaneRestart drops the agent websocket while the control plane has
// forgotten the compute and refuses the old token: the agent keeps its processes, registers
// again, gets a new token and reconnects with it.
func TestAgentSurvivesControlPlaneRestart(t *testing.T) {
	h := startAgent(t, sleepers(1))
	before := h.live(t, 1)
	h.next(ActionSendHeartbeat, time.Second)

	h.cp.forget()
	h.ws.mu.Lock()
	h.ws.valid = map[string]bool{"token-2": true}
	h.ws.mu.Unlock()
	h.ws.drop()

	hb := h.next(ActionSendHeartbeat, time.Second)
	if got := ids(hb["ProcessList"]); len(got) != 1 || got[0] != before[0].ID {
		t.Fatalf("after reconnect the heartbeat lists %v, want the same process %s", got, before[0].ID)
	}
	if !alive(before[0].PID) {
		t.Fatal("the process died across the reconnect")
	}
	if r, _, _ := h.cp.counts(); r != 2 {
		t.Fatalf("%d registrations, want 2", r)
	}
	h.ws.mu.Lock()
	last := h.ws.queries[len(h.ws.queries)-1]
	h.ws.mu.Unlock()
	if !strings.Contains(last, "Authorization=token-2") {
		t.Fatalf("reconnected with %q, want the new token", last)
	}
}

// TestAgentStartComputeTermination: the push stops the agent even though its context lives.
func TestAgentStartComputeTermination(t *testing.T) {
	h := startAgent(t, sleepers(1))
	p := h.live(t, 1)[0]
	h.next(ActionSendHeartbeat, time.Second)
	h.ws.push(map[string]any{"Action": ActionStartComputeTermination, "StatusCode": 200})
	term := h.next(ActionNotifyServerProcessTermination, 5*time.Second)
	if term["ProcessId"] != p.ID || term["TerminationReason"] != "COMPUTE_SHUTDOWN" {
		t.Fatalf("termination report %v", term)
	}
	if err := h.waitRun(time.Second, "Run returning after StartComputeTermination"); err != nil {
		t.Fatal(err)
	}
}
