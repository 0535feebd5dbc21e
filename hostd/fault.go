package hostd

import (
	"syscall"
)

// CrashProcess kills a server process of a local instance of fleetID as a crash would: SIGKILL
// to its process group, without asking it to terminate first. The instance reports the exit
// as it reports any crash (SERVER_PROCESS_CRASHED) and launches a replacement. It reports
// whether such a process runs here.
func (h *Host) CrashProcess(fleetID, processID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, in := range h.instances {
		if in.li.FleetID != fleetID {
			continue
		}
		if pid := in.pid(processID); pid > 0 {
			return syscall.Kill(-pid, syscall.SIGKILL) == nil
		}
	}
	return false
}

// pid returns the OS process ID of the instance's process with the given ID, or 0.
func (in *instance) pid(processID string) int {
	in.mu.Lock()
	sup := in.sup
	in.mu.Unlock()
	if sup == nil {
		return 0
	}
	for _, p := range sup.Processes() {
		if p.ID == processID && !p.Terminating {
			return p.PID
		}
	}
	return 0
}

// LoseInstance stops a local instance of fleetID as if its host had vanished: every process is
// killed at once (SIGKILL) and the instance is torn down. Call it once the control plane has
// the instance TERMINATING (gamelift.Service.LoseInstance). It reports whether the instance
// runs here.
func (h *Host) LoseInstance(fleetID, instanceID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	in := h.instances[instanceID]
	if in == nil || in.li.FleetID != fleetID {
		return false
	}
	in.requestStop()
	in.mu.Lock()
	sup := in.sup
	in.mu.Unlock()
	if sup != nil {
		for _, p := range sup.Processes() {
			_ = syscall.Kill(-p.PID, syscall.SIGKILL)
		}
	}
	h.Poke()
	return true
}
