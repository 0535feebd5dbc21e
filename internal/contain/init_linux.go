package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// namespaces makes cmd start in new mount and IPC namespaces.
func namespaces(cmd *exec.Cmd) error {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC
	return nil
}

// pdeathsig is the parent-death signal cmd asks for.
func pdeathsig(cmd *exec.Cmd) int {
	if cmd.SysProcAttr == nil {
		return 0
	}
	return int(cmd.SysProcAttr.Pdeathsig)
}

// ownCredential reports whether cmd asks to run as another user itself.
func ownCredential(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Credential != nil
}

// runInit sets up the contained process and execs the program; it returns only on failure.
func runInit(l launch) error {
	runtime.LockOSThread() // joining v1 cgroups, setns and exec act on this thread
	parent := os.Getppid()
	if err := joinCgroups(l.Spec.Cgroups); err != nil {
		return err
	}
	if err := joinNetNS(l.Spec.NetNS); err != nil {
		return err
	}
	if err := buildRoot(l.Spec); err != nil {
		return err
	}
	if err := dropPrivileges(l.Spec.UID, l.Spec.GID, l.Pdeathsig, parent); err != nil {
		return err
	}
	if err := os.Chdir(l.Dir); err != nil {
		return fmt.Errorf("working directory: %w", err)
	}
	path := l.Path
	if err := syscall.Exec(path, l.Args, programEnv()); err != nil {
		return fmt.Errorf("exec %s: %w", path, err)
	}
	return nil
}

// joinNetNS moves this thread (the one that execs) into the network namespace at path.
func joinNetNS(path string) error {
	if path == "" {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("network namespace: %w", err)
	}
	defer f.Close()
	if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("joining network namespace %s: %w", path, err)
	}
	return nil
}

// dropPrivileges becomes uid/gid with no supplementary groups (which clears every
// capability), forbids gaining privileges again, and re-arms the parent-death signal that the
// change of user cleared, exiting if the parent is already gone.
func dropPrivileges(uid, gid, pdeathsig, parent int) error {
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("setgroups: %w", err)
	}
	if err := syscall.Setresgid(gid, gid, gid); err != nil {
		return fmt.Errorf("setgid %d: %w", gid, err)
	}
	if err := syscall.Setresuid(uid, uid, uid); err != nil {
		return fmt.Errorf("setuid %d: %w", uid, err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if pdeathsig == 0 {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(pdeathsig), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	if os.Getppid() != parent {
		return errors.New("the parent exited during set-up")
	}
	return nil
}

// base lists the host's directories every contained process sees read-only: the base system
// a dynamically linked game and /bin/sh need. Missing ones are skipped, symbolic links (a
// merged /usr) are recreated as links.
var base = []string{"usr", "bin", "sbin", "lib", "lib32", "lib64", "libx32", "etc"}

// devices are the host's device nodes bound into the minimal /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}
