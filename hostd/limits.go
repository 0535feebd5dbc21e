package hostd

import (
	"fmt"
	"hash/fnv"
	"io"
	"net/netip"
	"path/filepath"
	"reflect"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/netguard"
)

// Limits of contained instances beyond their user and file system view: the resources of
// their instance type (Resources, internal/cgroup) and the one address their processes may
// bind (internal/netguard). Both apply only to contained instances, since a process joins its
// group and guard through the contain init; an unisolated instance gets neither and says so
// in a fleet event (reportUnisolated).

// limits is the host-wide part: the instances' control groups and whether guards work.
type limits struct {
	res *Resources
	// guard says whether netguard can restrict binds on this host; why not otherwise.
	guard   bool
	noGuard string
}

// newLimits sets up the limits of a host's contained instances, logging once what is not
// available, and removes the groups an earlier run of this data directory left behind.
func newLimits(cfg Config) *limits {
	if !cfg.Isolation.Available {
		return &limits{}
	}
	removeNamespaces(cfg)
	l := &limits{res: NewResources(ResourcesConfig{Parent: cgroupParent(cfg.Dir), Logger: cfg.Logger})}
	if _, err := l.res.Sweep(nil); err != nil {
		cfg.Logger.Warn("cannot remove the control groups of an earlier run", "err", err)
	}
	l.guard, l.noGuard = netguard.Supported()
	if l.guard && !l.res.Limited() {
		l.guard, l.noGuard = false, "no control group to attach the guard to: "+l.res.Reason()
	}
	if !l.guard {
		cfg.Logger.Warn("local instances may bind any address of this host", "reason", l.noGuard)
	}
	return l
}

// cgroupParent names the parent group of a host's instance groups after its instances'
// directory, so that several servers on one machine (or tests in parallel) never sweep each
// other's groups.
func cgroupParent(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	h := fnv.New64a()
	h.Write([]byte(abs))
	return fmt.Sprintf("hoist-%016x", h.Sum64())
}

// removeNamespaces removes the network namespaces an earlier run left behind: at start, no
// instance of this host has one yet.
func removeNamespaces(cfg Config) {
	if cfg.Network == nil {
		return
	}
	names, err := cfg.Network.List()
	for _, name := range names {
		if err == nil {
			err = cfg.Network.Remove(name)
		}
	}
	if err != nil {
		cfg.Logger.Warn("cannot remove the network namespaces of an earlier run", "err", err)
	}
}

// join gives a contained instance its network namespace when the host has a Network.
func (in *instance) join() error {
	n := in.h.cfg.Network
	if n == nil || !in.contained() {
		return nil
	}
	addr, err := netip.ParseAddr(in.li.IPAddress)
	if err != nil {
		return fmt.Errorf("instance address %q: %w", in.li.IPAddress, err)
	}
	path, err := n.Create(in.li.InstanceID, addr)
	if err != nil {
		return err
	}
	in.mu.Lock()
	in.netns = path
	in.mu.Unlock()
	return nil
}

// limit puts the instance in its control group and attaches its bind guard, before anything
// of the build runs; the contain init joins the group through in.cgroups.
func (in *instance) limit() error {
	l := in.h.limits
	if err := in.join(); err != nil || !in.contained() || l.res == nil {
		return err
	}
	g, err := l.res.Create(in.li)
	if err != nil {
		return err
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	in.group, in.cgroups = g, g.Cgroups()
	if !l.guard || g.UnifiedDir() == "" {
		return nil
	}
	in.inbound = in.li.Inbound
	in.guard, err = in.attachGuard(in.inbound)
	return err
}

// attachGuard attaches a bind guard for the instance's address to its group, with the
// fleet's inbound permissions when the host enforces them.
func (in *instance) attachGuard(inbound []api.IpPermission) (io.Closer, error) {
	addr, err := netip.ParseAddr(in.li.IPAddress)
	if err != nil {
		return nil, fmt.Errorf("instance address %q: %w", in.li.IPAddress, err)
	}
	rules := netguard.Rules{Addr: addr, EnforceInbound: in.h.cfg.EnforceInbound}
	if rules.EnforceInbound {
		for _, p := range inbound {
			perm, err := netguard.ParsePermission(api.Deref(p.FromPort), api.Deref(p.ToPort), string(api.Deref(p.Protocol)), api.Deref(p.IpRange))
			if err != nil {
				return nil, fmt.Errorf("inbound permission: %w", err)
			}
			rules.Inbound = append(rules.Inbound, perm)
		}
	}
	return netguard.Attach(in.group.UnifiedDir(), rules)
}

// setInbound applies changed inbound permissions (UpdateFleetPortSettings) to a guarded
// instance that enforces them: the new guard is attached before the old one goes, so no
// packet slips through between them.
func (in *instance) setInbound(inbound []api.IpPermission) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.guard == nil || !in.h.cfg.EnforceInbound || reflect.DeepEqual(inbound, in.inbound) {
		return
	}
	next, err := in.attachGuard(inbound)
	if err != nil {
		in.h.cfg.Logger.Warn("cannot apply an instance's new inbound permissions", "instance", in.li.InstanceID, "err", err)
		return
	}
	old := in.guard
	in.guard, in.inbound = next, inbound
	if err := old.Close(); err != nil {
		in.h.cfg.Logger.Warn("cannot detach an instance's old bind guard", "instance", in.li.InstanceID, "err", err)
	}
}

// unlimit detaches the guard and removes the group, killing whatever still runs in it: at
// teardown, once the processes are stopped.
func (in *instance) unlimit() {
	in.mu.Lock()
	defer in.mu.Unlock()
	log := in.h.cfg.Logger.With("instance", in.li.InstanceID)
	if in.guard != nil {
		if err := in.guard.Close(); err != nil {
			log.Warn("cannot detach an instance's bind guard", "err", err)
		}
	}
	if err := in.group.Close(); err != nil { // nil-safe
		log.Warn("cannot remove an instance's control group", "err", err)
	}
	if n := in.h.cfg.Network; n != nil && in.netns != "" {
		if err := n.Remove(in.li.InstanceID); err != nil {
			log.Warn("cannot remove an instance's network namespace", "err", err)
		}
	}
	in.guard, in.group, in.cgroups, in.netns = nil, nil, nil, ""
}
