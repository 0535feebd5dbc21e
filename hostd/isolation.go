package hostd

import (
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/contain"
)

// Instance users: each instance of this host runs as a user ID of its own, from
// Config.UIDBase up (no /etc/passwd entry is needed), with the same number as its group ID.
const (
	// DefaultUIDBase is the first instance user ID when Config.UIDBase is zero: far above
	// the IDs of people, system users and the usual subordinate ID ranges of containers.
	DefaultUIDBase = 2_000_000_000
	// UIDRange is how many user IDs from the base instances may use.
	UIDRange = 1 << 20
)

// uidPool hands out instance user IDs: an instance gets one derived from its ID (so that
// two hosts on one machine rarely pick the same), or the next free one.
type uidPool struct {
	base int

	mu   sync.Mutex
	used map[int]string // uid -> instance ID
}

// get returns the user ID of an instance, allocating one on first use.
func (p *uidPool) get(instanceID string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, id := range p.used {
		if id == instanceID {
			return uid
		}
	}
	h := fnv.New32a()
	h.Write([]byte(instanceID))
	slot := int(h.Sum32() % UIDRange)
	for p.used[p.base+slot] != "" {
		slot = (slot + 1) % UIDRange
	}
	if p.used == nil {
		p.used = map[int]string{}
	}
	p.used[p.base+slot] = instanceID
	return p.base + slot
}

// put frees an instance's user ID.
func (p *uidPool) put(instanceID string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for uid, id := range p.used {
		if id == instanceID {
			delete(p.used, uid)
		}
	}
}

// contained reports whether the instance's processes run contained.
func (in *instance) contained() bool { return in.h.cfg.Isolation.Available }

// spec is how the instance's processes are contained: its user, its view of the file system
// and its control group (limits.go), which also carries its bind guard.
func (in *instance) spec() contain.Spec {
	return contain.Spec{UID: in.uid, GID: in.uid, Root: in.dir, Cgroups: in.cgroups, NetNS: in.netns}
}

// wrap makes cmd run contained: a clean environment (Hoist's own is not the game's
// business) plus env, then contain.Spec.Wrap.
func (in *instance) wrap(cmd *exec.Cmd, env []string) error {
	cmd.Env = append(baseEnv(), env...)
	return in.spec().Wrap(cmd)
}

// baseEnv is the environment every contained process starts from.
func baseEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/local/game", "TMPDIR=/tmp"}
	for _, k := range []string{"LANG", "LC_ALL", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// root is the instance's root as its processes see it: "/" when contained, else the sandbox.
func (in *instance) root() string {
	if in.contained() {
		return "/"
	}
	return in.dir
}

// inside turns a host path in the sandbox into the path the instance's processes use.
func (in *instance) inside(hostPath string) string {
	if !in.contained() {
		return hostPath
	}
	rel, err := filepath.Rel(in.dir, hostPath)
	if err != nil || strings.HasPrefix(rel, "..") {
		return hostPath
	}
	return "/" + filepath.ToSlash(rel)
}

// handOver gives the sandbox's files to the instance's user, once the build and the
// certificate are in place and before the install script runs.
func (in *instance) handOver() error {
	if !in.contained() {
		return nil
	}
	return filepath.WalkDir(filepath.Join(in.dir, "local"), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, in.uid, in.uid)
	})
}

// reportUnisolated adds a GENERIC_EVENT fleet event when the instance runs without
// isolation, so that DescribeFleetEvents shows it (Instance has no status reason).
func (in *instance) reportUnisolated() {
	if in.contained() {
		return
	}
	reason := in.h.cfg.Isolation.Reason
	if reason == "" {
		reason = "isolation is off"
	}
	_ = in.h.cfg.Control.InstanceEvent(in.h.ctx, in.li.FleetID, api.EventCodeGenericEvent, fmt.Sprintf(
		"Instance %s is not isolated: its install script and server processes run as Hoist's own user and can reach Hoist's files (%s).",
		in.li.InstanceID, reason))
}

// killUser kills every process left running as the instance's user (one that left its
// process group, say with setsid): /bin/kill -9 -1, run as that user, signals all of them.
func (in *instance) killUser() {
	if !in.contained() {
		return
	}
	cmd := exec.Command("/bin/kill", "-9", "-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(in.uid), Gid: uint32(in.uid), Groups: []uint32{}}}
	if out, err := cmd.CombinedOutput(); err != nil && len(out) > 0 {
		in.h.cfg.Logger.Debug("killing the instance user's processes", "instance", in.li.InstanceID, "err", err, "output", string(out))
	}
}
