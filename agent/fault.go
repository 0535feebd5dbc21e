package agent

import "syscall"

// ActionCrashServerProcess is Hoist's push, outside GameLift's agent protocol, ordering the
// agent to kill a process as a crash would (fault injection in dev mode, docs/dev.md).
const ActionCrashServerProcess = "HoistCrashServerProcess"

// crashProcess kills the live process with the given ID and its process group with SIGKILL,
// without asking it to terminate: the supervisor sees an exit it did not ask for, which the
// agent reports as SERVER_PROCESS_CRASHED and replaces, as any crash. It reports whether such
// a process ran.
func (a *Agent) crashProcess(id string) bool {
	for _, p := range a.sup.Processes() {
		if p.ID == id && !p.Terminating && p.PID > 0 {
			return syscall.Kill(-p.PID, syscall.SIGKILL) == nil
		}
	}
	return false
}
