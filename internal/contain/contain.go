// Package contain runs an untrusted program (a build's install script, a game server process)
// contained: as an unprivileged user with no supplementary groups and no way to gain
// privileges, in a private mount namespace whose root is a fresh, read-only tmpfs holding the
// host's base system (read-only), a minimal /dev, /proc, a private /tmp and the instance's
// sandbox at /local. Hoist's data directory and other instances' sandboxes are not in that
// view at all.
//
// It works by re-executing the current binary: Spec.Wrap rewrites a prepared *exec.Cmd so that
// it starts this binary in "init mode" (a marker in the environment) inside new mount and IPC
// namespaces; Main, called first thing in main() (and in TestMain of tests that launch
// contained processes), notices the marker, joins the cgroups (it was started in the cgroup2
// one) and network namespace of the Spec, builds the file system view, pivots into it, drops
// to Spec.UID/GID and execs the real program, which therefore keeps the PID, the process group
// and the parent-death signal the caller set up. A failure during that set-up is written to
// stderr and ends the process with ExitSetupFailed, before any of the program runs.
//
// No PID namespace is used: the program would be PID 1 in it, which the kernel shields from
// every signal it has no handler for (a game server relying on SIGTERM's default action would
// no longer stop on the supervisor's SIGTERM) and which would have to reap orphans; keeping an
// init in front of it would break "the PID the caller sees is the program". Other processes
// stay visible in /proc (mounted with hidepid=invisible where the kernel allows a private
// option, Linux 5.8+), but their environment, files and memory are protected by the ordinary
// user checks, since each instance has its own user.
//
// Anything in Hoist may import it; only Linux contains, elsewhere Probe reports why not.
package contain

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
)

// ExitSetupFailed is the exit status of a contained process whose set-up failed before the
// program was started (the reason is on its stderr, prefixed "hoist contain: ").
const ExitSetupFailed = 121

// DefaultTmpBytes bounds the private /tmp (and /dev/shm) of a contained process when
// Spec.TmpBytes is zero.
const DefaultTmpBytes = 256 << 20

// envInit carries the encoded launch into the re-executed binary; initArg0 is its argv[0].
const (
	envInit  = "HOIST_CONTAIN_INIT"
	initArg0 = "hoist-contain-init"
)

// Spec says how to contain a process.
type Spec struct {
	// UID and GID are the user and group the program runs as; both must be non-zero.
	UID, GID int
	// Root is the instance's sandbox on the host: Root/local appears read-write at /local.
	Root string
	// Cgroups are the control groups the process joins before anything else, one per
	// cgroup hierarchy.
	Cgroups []Cgroup
	// NetNS, when set, is the path of a network namespace (e.g. /run/netns/NAME) to join.
	NetNS string
	// TmpBytes bounds the size of /tmp and of /dev/shm (DefaultTmpBytes when zero).
	TmpBytes int64
}

// Cgroup is a control group, in one hierarchy, that a contained process joins.
//
// A cgroup2 group is joined at birth: the init is started in it (clone3 with
// CLONE_INTO_CGROUP, Linux 5.7+), or, where the kernel or a seccomp filter refuses that,
// writes its PID into the group's cgroup.procs. A v1 group is joined by the one thread of the
// init that later execs the program, through the group's tasks file; the program keeps that
// thread's groups. Neither way takes the kernel's global lock for moving whole processes
// (since Linux 6.1 for the thread), whose every use waits for an RCU grace period unless the
// host's cgroups are mounted with favordynmods; the cgroup.procs fallback does.
type Cgroup struct {
	// Dir is the group's directory.
	Dir string
	// V2 is true when Dir is on cgroup2 (the unified hierarchy), false on a v1 hierarchy.
	V2 bool
}

// Support tells whether this host can contain processes.
type Support struct {
	// Available is true when Wrap's commands run contained here.
	Available bool
	// Reason says, for people, why not (empty when Available).
	Reason string
}

// launch is what the init needs to build the view and start the program.
type launch struct {
	Spec      Spec     // its Cgroups: those the init joins (not the one it was started in)
	Path      string   // the program, as a path inside the namespace
	Args      []string // its argv
	Dir       string   // its working directory inside the namespace
	Pdeathsig int      // re-armed after the change of user (which clears it)
}

// installed is set by Main: only a binary whose main calls Main can run as the init.
var installed atomic.Bool

// Installed reports whether Main was called in this binary.
func Installed() bool { return installed.Load() }

// Wrap rewrites cmd, prepared as for an uncontained start, to run contained as s says. The
// command's Path, Args and Dir are taken as paths inside the namespace (/local/game/...). Its
// Env is kept (os.Environ() when nil); Stdin, Stdout, Stderr, ExtraFiles, Setpgid and
// Pdeathsig work as usual. Wrap fails when Main was not called in this binary, when s is
// incomplete, or when cmd sets its own Credential or cgroup.
//
// When s has a cgroup2 group the command starts in it, through a descriptor of its directory
// that Wrap opens: call Started once cmd.Start has returned to close it.
func (s Spec) Wrap(cmd *exec.Cmd) error {
	if err := s.check(cmd); err != nil {
		return err
	}
	l, err := s.launchOf(cmd)
	if err != nil {
		return err
	}
	if err := namespaces(cmd); err != nil {
		return err
	}
	if l.Spec.Cgroups, err = startIn(cmd, s.Cgroups); err != nil {
		return err
	}
	b, err := json.Marshal(l)
	if err != nil {
		Started(cmd)
		return fmt.Errorf("contain: %w", err)
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, envInit+"="+string(b))
	cmd.Path, cmd.Args, cmd.Dir = "/proc/self/exe", []string{initArg0}, "/"
	return nil
}

// launchOf is what the init needs to run cmd as s says.
func (s Spec) launchOf(cmd *exec.Cmd) (launch, error) {
	// The init finds the sandbox under the host's tree moved aside, where an absolute
	// symbolic link on the way would no longer lead to it: resolve them here.
	root, err := filepath.EvalSymlinks(s.Root)
	if err != nil {
		return launch{}, fmt.Errorf("contain: sandbox root: %w", err)
	}
	s.Root = root
	l := launch{Spec: s, Path: cmd.Path, Args: cmd.Args, Dir: cmd.Dir, Pdeathsig: pdeathsig(cmd)}
	if l.Dir == "" {
		l.Dir = "/local"
	}
	return l, nil
}

// check validates s and cmd for Wrap.
func (s Spec) check(cmd *exec.Cmd) error {
	switch {
	case !Installed():
		return errors.New("contain: Main was not called in this binary's main (or TestMain)")
	case cmd.Err != nil:
		return cmd.Err
	case s.UID <= 0 || s.GID <= 0:
		return fmt.Errorf("contain: refusing to run as uid %d gid %d (want an unprivileged user)", s.UID, s.GID)
	case !filepath.IsAbs(s.Root):
		return fmt.Errorf("contain: sandbox root %q is not an absolute path", s.Root)
	case !filepath.IsAbs(cmd.Path):
		return fmt.Errorf("contain: program %q is not an absolute path inside the sandbox", cmd.Path)
	case ownCredential(cmd):
		return errors.New("contain: the command sets its own credentials")
	case ownCgroup(cmd):
		return errors.New("contain: the command sets its own cgroup")
	}
	return nil
}

// Main must be the first call of main() in a binary that contains processes (and of TestMain
// in tests that do): it installs the init mode, without which Wrap refuses. Started as the
// init of a contained process, the binary sets the process up and execs the program, never
// returning; otherwise Main returns at once.
//
// The init mode itself runs from this package's init function, before the packages a binary
// like hoist imports for its other roles are initialized (Go initializes a package as soon as
// its imports are, in import path order): that makes every contained start a few
// milliseconds faster. Only a command prepared by Wrap in the same binary, which needs Main,
// starts it.
func Main() {
	installed.Store(true)
	initMode()
}

func init() { initMode() }

// initMode runs the init of a contained process when this process is one.
func initMode() {
	v, ok := os.LookupEnv(envInit)
	if !ok || len(os.Args) == 0 || os.Args[0] != initArg0 {
		return
	}
	var l launch
	if err := json.Unmarshal([]byte(v), &l); err != nil {
		fail(fmt.Errorf("bad launch: %w", err))
	}
	fail(runInit(l)) // returns only on failure
}

// fail reports a set-up failure and exits with ExitSetupFailed.
func fail(err error) {
	fmt.Fprintf(os.Stderr, "hoist contain: %v\n", err)
	os.Exit(ExitSetupFailed)
}

// programEnv is the environment of the program: the init's own without the launch.
func programEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if len(kv) > len(envInit) && kv[:len(envInit)+1] == envInit+"=" {
			continue
		}
		env = append(env, kv)
	}
	return env
}
