package agent

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"syscall"

	"github.com/hoist-gg/hoist/agent/supervisor"
)

// runAs is the user `hoist agent --run-as` starts server processes as.
type runAs struct {
	name     string
	uid, gid uint32
}

// lookupRunAs resolves --run-as (a user name or a numeric user ID) to the user's IDs. The
// agent must run as root to switch users, and the user must not be root.
func lookupRunAs(name string) (runAs, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if u, err = user.LookupId(name); err != nil {
			return runAs{}, fmt.Errorf("--run-as %s: no such user", name)
		}
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	switch {
	case err1 != nil || err2 != nil:
		return runAs{}, fmt.Errorf("--run-as %s: user and group IDs %s:%s are not numbers", name, u.Uid, u.Gid)
	case uid == 0:
		return runAs{}, fmt.Errorf("--run-as %s: that is root; name an unprivileged user", name)
	case os.Geteuid() != 0:
		return runAs{}, errors.New("--run-as needs the agent to run as root (to start processes as another user)")
	}
	return runAs{name: name, uid: uint32(uid), gid: uint32(gid)}, nil
}

// hook makes every server process run as the user with its primary group only (no
// supplementary groups), chained before next.
func (r runAs) hook(next func(*supervisor.Launch, *exec.Cmd) error) func(*supervisor.Launch, *exec.Cmd) error {
	return func(l *supervisor.Launch, cmd *exec.Cmd) error {
		if cmd.SysProcAttr == nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{}
		}
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: r.uid, Gid: r.gid, Groups: []uint32{}}
		if next != nil {
			return next(l, cmd)
		}
		return nil
	}
}
