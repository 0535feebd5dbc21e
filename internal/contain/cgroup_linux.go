package contain

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// startIn makes cmd start in the cgroup2 group of groups, when there is one and the kernel
// can (clone3 with CLONE_INTO_CGROUP), through a descriptor of its directory that Started
// closes. It returns the groups the init is still to join.
func startIn(cmd *exec.Cmd, groups []Cgroup) ([]Cgroup, error) {
	i := slices.IndexFunc(groups, func(g Cgroup) bool { return g.V2 })
	if i < 0 {
		return groups, nil
	}
	fd, err := unix.Open(groups[i].Dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("contain: cgroup %s: %w", groups[i].Dir, err)
	}
	if !cloneIntoCgroup(fd) {
		unix.Close(fd)
		return groups, nil
	}
	cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
	return slices.Delete(slices.Clone(groups), i, i+1), nil
}

// Started closes what Wrap opened for starting cmd (the directory of the cgroup2 group it
// starts in): call it once cmd.Start has returned, whether or not the start succeeded. It
// does nothing for a command Wrap did not prepare, nor a second time.
func Started(cmd *exec.Cmd) {
	a := cmd.SysProcAttr
	if a == nil || !a.UseCgroupFD || len(cmd.Args) == 0 || cmd.Args[0] != initArg0 {
		return
	}
	unix.Close(a.CgroupFD)
	a.UseCgroupFD, a.CgroupFD = false, 0
}

// ownCgroup reports whether cmd asks to start in a cgroup itself.
func ownCgroup(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.UseCgroupFD
}

// Whether clone3 can start a process in a cgroup2 group here: unknown until the first try.
const (
	cloneUnknown = iota
	cloneWorks
	cloneRefused
)

var cloneState atomic.Int32

// cloneIntoCgroup reports whether clone3 can start processes in cgroup2 groups here, trying
// it in the group of fd the first time.
func cloneIntoCgroup(fd int) bool {
	if s := cloneState.Load(); s != cloneUnknown {
		return s == cloneWorks
	}
	ok, final := cloneVerdict(tryClone(fd))
	if final && ok {
		cloneState.Store(cloneWorks)
	} else if final {
		cloneState.Store(cloneRefused)
	}
	return ok
}

// tryClone starts, in the group of fd, a child that fails at once: it execs "/", a directory.
func tryClone(fd int) error {
	attr := &syscall.ProcAttr{Sys: &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}}
	_, err := syscall.ForkExec("/", []string{initArg0}, attr)
	return err
}

// cloneVerdict reads tryClone's error. The exec's EACCES means the child was cloned into the
// group; ENOSYS (no clone3, or a seccomp filter), EINVAL (no CLONE_INTO_CGROUP: before Linux
// 5.7) and EPERM (a seccomp filter) mean it never will be. Other errors (out of processes,
// say) settle nothing: final is false.
func cloneVerdict(err error) (ok, final bool) {
	switch {
	case errors.Is(err, syscall.EACCES):
		return true, true
	case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.EPERM):
		return false, true
	}
	return false, false
}

// joinCgroups makes this process a member of groups. This thread, the one that execs the
// program, joins each v1 group alone through its tasks file ("0": the writing thread), which
// since Linux 6.1 does not take the kernel's global lock for moving processes; the program
// keeps its groups, and the other threads end at the exec. A cgroup2 group (when clone3 could
// not start the process in it) is joined through cgroup.procs: a thread alone cannot join a
// domain group there.
func joinCgroups(groups []Cgroup) error {
	for _, g := range groups {
		file, id := filepath.Join(g.Dir, "tasks"), "0"
		if g.V2 {
			file, id = filepath.Join(g.Dir, "cgroup.procs"), strconv.Itoa(os.Getpid())
		}
		if err := writeOnThisThread(file, id); err != nil {
			return fmt.Errorf("joining cgroup: %w", err)
		}
	}
	return nil
}

// writeOnThisThread writes s to the file at path with system calls made by the calling
// thread (the goroutine must be locked to it).
func writeOnThisThread(path, s string) error {
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte(s)); err != nil {
		return &os.PathError{Op: "write", Path: path, Err: err}
	}
	return nil
}
