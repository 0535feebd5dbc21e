package agent

import (
	"testing"
	"time"
)

// TestAgentCrashPush: Hoist's HoistCrashServerProcess push kills the named process at once
// (SIGKILL, no termination asked), and the agent reports it as any crash:
// SERVER_PROCESS_CRASHED. The other process is left alone.
func TestAgentCrashPush(t *testing.T) {
	h := startAgent(t, sleepers(2))
	procs := h.live(t, 2)
	h.ws.push(map[string]any{"Action": ActionCrashServerProcess, "ProcessId": procs[0].ID})
	term := h.next(ActionNotifyServerProcessTermination, time.Second)
	if term["ProcessId"] != procs[0].ID || term["EventCode"] != "SERVER_PROCESS_CRASHED" || term["TerminationReason"] != "CRASHED" {
		t.Fatalf("termination report %v, want %s SERVER_PROCESS_CRASHED", term, procs[0].ID)
	}
	if alive(procs[0].PID) {
		t.Error("the crashed process still runs")
	}
	if !alive(procs[1].PID) {
		t.Error("the other process died too")
	}
	if h.a.crashProcess("no-such-process") {
		t.Error("crashing an unknown process reported success")
	}
}
