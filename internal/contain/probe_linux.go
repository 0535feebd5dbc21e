package contain

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// probeUID is the user the trial run of Probe runs as ("nobody" on most systems).
const probeUID = 65534

var probed struct {
	once sync.Once
	s    Support
}

// Probe tells whether processes can be contained here: Hoist must run as root (with
// CAP_SYS_ADMIN, outside a user namespace that lacks it), Main must be installed, and a trial
// contained run of /bin/sh must succeed (a seccomp filter or a read-only /tmp can still forbid
// what the checks allow). The answer is computed once per process.
func Probe() Support {
	probed.once.Do(func() { probed.s = probe() })
	return probed.s
}

func probe() Support {
	if os.Geteuid() != 0 {
		return Support{Reason: "Hoist does not run as root, which containing processes needs (other users, mount namespaces)"}
	}
	if !hasSysAdmin() {
		return Support{Reason: "Hoist runs without CAP_SYS_ADMIN (an unprivileged container?), which mount namespaces need"}
	}
	if !Installed() {
		return Support{Reason: "this binary does not call contain.Main"}
	}
	if err := trial(); err != nil {
		return Support{Reason: "a trial contained run failed: " + err.Error()}
	}
	return Support{Available: true}
}

// hasSysAdmin reports whether CAP_SYS_ADMIN is in this process's effective set.
func hasSysAdmin() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return err == nil && caps&(1<<21) != 0
		}
	}
	return false
}

// trial runs /bin/sh contained in a throw-away sandbox and checks it ran as the probe user.
func trial() error {
	root, err := os.MkdirTemp("", "hoist-contain-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(root)
	local := filepath.Join(root, "local")
	if err := os.Mkdir(local, 0o700); err != nil {
		return err
	}
	if err := os.Chown(local, probeUID, probeUID); err != nil {
		return err
	}
	cmd := exec.Command("/bin/sh", "-c", "id -u")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := (Spec{UID: probeUID, GID: probeUID, Root: root}).Wrap(cmd); err != nil {
		return err
	}
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(out.String()))
	}
	if got := strings.TrimSpace(out.String()); got != strconv.Itoa(probeUID) {
		return fmt.Errorf("ran as uid %q", got)
	}
	return nil
}
