// Package netns gives managed-fleet instances their own network namespaces, the option
// `--instance-network netns` (docs/isolation-network.md).
//
// A Network is a bridge on the host that owns the first address of a private subnet
// (10.201.0.1 in 10.201.0.0/16 by default): the gateway. Each instance gets a named network
// namespace (a file bind-mounted under Network.Dir, the form `ip netns` uses) holding its
// own lo and an eth0 with the instance's address in the subnet, joined to the bridge by a
// veth pair, and a default route through the gateway. The host reaches every instance
// over the bridge; an instance reaches the host (the Server SDK endpoint must listen on the
// gateway address) and the other instances of the subnet, nothing of the host's loopback.
// The host wiring (hostd, cmd/hoist) imports this package; processes join a namespace through
// internal/contain (Spec.NetNS).
package netns

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Config describes the host side of the instances' networks.
type Config struct {
	// Bridge is the name of the host's bridge (at most 15 bytes), created when missing.
	Bridge string
	// Prefix is the private IPv4 subnet of the instances; its first address is the gateway.
	Prefix netip.Prefix
	// Dir is where the namespaces' files are mounted (created when missing).
	Dir string
}

// DefaultConfig is the configuration `--instance-network netns` uses unless told otherwise.
var DefaultConfig = Config{
	Bridge: "hoist0",
	Prefix: netip.MustParsePrefix("10.201.0.0/16"),
	Dir:    "/run/hoist/netns",
}

// Network is a bridge and the namespaces of the instances attached to it.
type Network struct {
	cfg    Config
	bridge netlink.Link
}

// Gateway returns the host's address on the instances' subnet: the address an instance
// reaches the host (and the Server SDK endpoint) on.
func (c Config) Gateway() netip.Addr {
	return c.Prefix.Masked().Addr().Next()
}

// Addr returns the address of the n-th instance slot (from 0): the addresses after the
// gateway, in order, short of the subnet's broadcast address.
func (c Config) Addr(n int) (netip.Addr, error) {
	base := binary.BigEndian.Uint32(c.Prefix.Masked().Addr().AsSlice())
	size := uint64(1) << (32 - c.Prefix.Bits())
	if n < 0 || uint64(n)+3 >= size {
		return netip.Addr{}, fmt.Errorf("netns: subnet %v has no instance slot %d", c.Prefix, n)
	}
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], base+2+uint32(n))
	return netip.AddrFrom4(b), nil
}

// Validate reports what is wrong with c, in one line.
func (c Config) Validate() error {
	switch {
	case c.Bridge == "" || len(c.Bridge) > 15:
		return fmt.Errorf("netns: bridge name %q is not 1 to 15 bytes", c.Bridge)
	case !c.Prefix.IsValid() || !c.Prefix.Addr().Is4() || c.Prefix.Bits() > 29:
		return fmt.Errorf("netns: subnet %v is not an IPv4 prefix of /29 or wider", c.Prefix)
	case !filepath.IsAbs(c.Dir):
		return fmt.Errorf("netns: namespace directory %q is not an absolute path", c.Dir)
	}
	return nil
}

// Open makes sure the bridge exists, is up and owns the gateway address.
func Open(cfg Config) (*Network, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	br, err := ensureBridge(cfg)
	if err != nil {
		return nil, err
	}
	return &Network{cfg: cfg, bridge: br}, nil
}

// ensureBridge creates the bridge when missing and gives it the gateway address.
func ensureBridge(cfg Config) (netlink.Link, error) {
	br, err := netlink.LinkByName(cfg.Bridge)
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		la := netlink.NewLinkAttrs()
		la.Name = cfg.Bridge
		if err := netlink.LinkAdd(&netlink.Bridge{LinkAttrs: la}); err != nil {
			return nil, fmt.Errorf("netns: creating bridge %s: %w", cfg.Bridge, err)
		}
		br, err = netlink.LinkByName(cfg.Bridge)
	}
	if err != nil {
		return nil, fmt.Errorf("netns: bridge %s: %w", cfg.Bridge, err)
	}
	gw := &netlink.Addr{IPNet: ipNet(cfg.Gateway(), cfg.Prefix.Bits())}
	if err := netlink.AddrReplace(br, gw); err != nil {
		return nil, fmt.Errorf("netns: giving %s the gateway address: %w", cfg.Bridge, err)
	}
	if err := netlink.LinkSetUp(br); err != nil {
		return nil, fmt.Errorf("netns: bringing %s up: %w", cfg.Bridge, err)
	}
	return br, nil
}

// ipNet is addr/bits as netlink wants it.
func ipNet(addr netip.Addr, bits int) *net.IPNet {
	return &net.IPNet{IP: addr.AsSlice(), Mask: net.CIDRMask(bits, 32)}
}

// Path returns the file of the namespace called name.
func (n *Network) Path(name string) string {
	return filepath.Join(n.cfg.Dir, name)
}

// Close releases nothing on the host: the bridge stays for the next start (DeleteBridge
// removes it).
func (n *Network) Close() error { return nil }

// DeleteBridge removes the bridge. Namespaces still attached lose their link to the host.
func (n *Network) DeleteBridge() error {
	if err := netlink.LinkDel(n.bridge); err != nil {
		return fmt.Errorf("netns: deleting bridge %s: %w", n.cfg.Bridge, err)
	}
	return nil
}

// hostVeth is the host-side name of the veth pair of the instance with address addr:
// unique per address and within the 15 bytes of an interface name.
func hostVeth(addr netip.Addr) string {
	b := addr.As4()
	return fmt.Sprintf("hv%02x%02x%02x%02x", b[0], b[1], b[2], b[3])
}

// newNamed creates a network namespace and bind-mounts it on path. The calling goroutine's
// thread enters the new namespace to create it and returns to its own; a thread that
// cannot return is left locked, so the runtime ends it instead of reusing it.
func newNamed(path string) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDONLY, 0o444)
	if err != nil {
		return fmt.Errorf("netns: %w", err)
	}
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	runtime.LockOSThread()
	orig, err := vns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: %w", err)
	}
	defer orig.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return fmt.Errorf("netns: creating a network namespace: %w", err)
	}
	self := fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid())
	mountErr := unix.Mount(self, path, "", unix.MS_BIND, "")
	if err := vns.Set(orig); err != nil {
		return fmt.Errorf("netns: returning to the host's network namespace: %w", err)
	}
	runtime.UnlockOSThread()
	if mountErr != nil {
		return fmt.Errorf("netns: mounting the namespace on %s: %w", path, mountErr)
	}
	return nil
}
