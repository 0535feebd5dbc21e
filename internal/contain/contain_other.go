//go:build !linux

package contain

import (
	"errors"
	"os/exec"
)

// namespaces fails: only Linux has the namespaces containment needs.
func namespaces(*exec.Cmd) error {
	return errors.New("contain: processes can only be contained on Linux")
}

func pdeathsig(*exec.Cmd) int { return 0 }

func ownCredential(*exec.Cmd) bool { return false }

func ownCgroup(*exec.Cmd) bool { return false }

// startIn leaves every group to the init (which cannot run here).
func startIn(_ *exec.Cmd, groups []Cgroup) ([]Cgroup, error) { return groups, nil }

// Started does nothing: Wrap opens nothing here.
func Started(*exec.Cmd) {}

// runInit fails: there is no init mode outside Linux.
func runInit(launch) error { return errors.New("contained processes need Linux") }

// Probe reports that processes cannot be contained on this system.
func Probe() Support {
	return Support{Reason: "containing processes needs Linux (user IDs, mount namespaces); this system runs them as Hoist's own user"}
}
