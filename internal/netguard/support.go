package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"golang.org/x/sys/unix"
)

var probe = sync.OnceValue(probeHost)

// Supported reports whether Attach can work on this host; when it cannot, the string says
// why in one line (for the log and an instance's status reason). The answer is computed
// once per process.
func Supported() (bool, string) {
	err := probe()
	if err != nil {
		return false, err.Error()
	}
	return true, ""
}

// probeHost loads (and drops) a program that allows every bind: it needs a cgroup2 mount,
// a kernel with cgroup sock_addr programs and the privilege to load them.
func probeHost() error {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return fmt.Errorf("netguard: %w", err)
	}
	if err := checkKernel(unix.ByteSliceToString(uts.Release[:])); err != nil {
		return err
	}
	if _, err := Cgroup2Mount(); err != nil {
		return err
	}
	prog, err := load(ebpf.AttachCGroupInet4Bind, asm.Instructions{
		asm.Mov.Imm(asm.R0, verdictAllow),
		asm.Return(),
	})
	if err != nil {
		if errors.Is(err, os.ErrPermission) {
			return errors.New("netguard: not allowed to load BPF programs (needs root, or CAP_BPF and CAP_NET_ADMIN)")
		}
		return err
	}
	return prog.Close()
}

// checkKernel refuses a kernel release older than 5.15: before it, activating the cgroup v1
// net_cls or net_prio controller stops matching sockets to cgroup2 programs, and a guard
// would silently stop applying.
func checkKernel(release string) error {
	var major, minor int
	if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err != nil {
		return fmt.Errorf("netguard: cannot read the kernel release %q", release)
	}
	if major < 5 || major == 5 && minor < 15 {
		return fmt.Errorf("netguard: Linux 5.15 or later is needed, this is %d.%d", major, minor)
	}
	return nil
}

// Cgroup2Mount returns where the cgroup2 (unified) hierarchy is mounted: /sys/fs/cgroup on
// a pure v2 host, /sys/fs/cgroup/unified on a hybrid one.
func Cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("netguard: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if dir, ok := cgroup2Line(sc.Text()); ok {
			return dir, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("netguard: reading mountinfo: %w", err)
	}
	return "", errors.New("netguard: no cgroup2 file system is mounted")
}

// cgroup2Line returns the mount point of a mountinfo line whose file system type is cgroup2.
// The fields are: id parent major:minor root mountpoint options [optional...] - fstype ...
func cgroup2Line(line string) (string, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	if !ok || !strings.HasPrefix(post, "cgroup2 ") {
		return "", false
	}
	fields := strings.Fields(pre)
	if len(fields) < 5 {
		return "", false
	}
	return strings.ReplaceAll(fields[4], `\040`, " "), true
}
