package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Create makes the network namespace called name for an instance with address addr (an
// address of the subnet other than the gateway) and returns its path, the Spec.NetNS of
// the instance's processes. What was made is undone when a step fails.
func (n *Network) Create(name string, addr netip.Addr) (path string, err error) {
	if !n.cfg.Prefix.Contains(addr) || addr == n.cfg.Gateway() || addr == n.cfg.Prefix.Masked().Addr() {
		return "", fmt.Errorf("netns: %v is not an instance address of %v", addr, n.cfg.Prefix)
	}
	path = n.Path(name)
	if err := newNamed(path); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Remove(name))
		}
	}()
	ns, err := vns.GetFromPath(path)
	if err != nil {
		return "", fmt.Errorf("netns: %w", err)
	}
	defer ns.Close()
	if err := n.addVeth(addr, ns); err != nil {
		return "", err
	}
	if err := n.configure(ns, addr); err != nil {
		return "", err
	}
	return path, nil
}

// addVeth creates the veth pair: the host end on the bridge and up, the other end in ns.
func (n *Network) addVeth(addr netip.Addr, ns vns.NsHandle) error {
	la := netlink.NewLinkAttrs()
	la.Name = hostVeth(addr)
	la.MasterIndex = n.bridge.Attrs().Index
	veth := &netlink.Veth{LinkAttrs: la, PeerName: "eth0", PeerNamespace: netlink.NsFd(int(ns))}
	if err := netlink.LinkAdd(veth); err != nil {
		return fmt.Errorf("netns: creating veth %s: %w", la.Name, err)
	}
	if err := netlink.LinkSetUp(veth); err != nil {
		return fmt.Errorf("netns: bringing %s up: %w", la.Name, err)
	}
	return nil
}

// configure sets up the inside of ns: lo up, eth0 up with addr, the default route through
// the gateway.
func (n *Network) configure(ns vns.NsHandle, addr netip.Addr) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netns: %w", err)
	}
	defer h.Close()
	for _, name := range []string{"lo", "eth0"} {
		link, err := h.LinkByName(name)
		if err == nil && name == "eth0" {
			err = h.AddrAdd(link, &netlink.Addr{IPNet: ipNet(addr, n.cfg.Prefix.Bits())})
		}
		if err == nil {
			err = h.LinkSetUp(link)
		}
		if err != nil {
			return fmt.Errorf("netns: setting up %s of %v: %w", name, addr, err)
		}
	}
	route := &netlink.Route{Dst: &net.IPNet{IP: net.IPv4zero, Mask: net.CIDRMask(0, 32)},
		Gw: n.cfg.Gateway().AsSlice()}
	if err := h.RouteAdd(route); err != nil {
		return fmt.Errorf("netns: default route of %v: %w", addr, err)
	}
	return nil
}

// Remove deletes the namespace called name: its veth pair goes with its eth0, its file is
// unmounted and removed. The namespace itself ends with the last process inside. Removing
// a namespace that is not there is not an error.
func (n *Network) Remove(name string) error {
	path := n.Path(name)
	var errs []error
	if ns, err := vns.GetFromPath(path); err == nil {
		errs = append(errs, deleteEth0(ns))
		ns.Close()
	}
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		errs = append(errs, fmt.Errorf("netns: unmounting %s: %w", path, err))
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("netns: %w", err))
	}
	return errors.Join(errs...)
}

// deleteEth0 deletes the namespace's end of the veth pair, and so the host's end too.
func deleteEth0(ns vns.NsHandle) error {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return fmt.Errorf("netns: %w", err)
	}
	defer h.Close()
	link, err := h.LinkByName("eth0")
	if errors.As(err, new(netlink.LinkNotFoundError)) {
		return nil
	}
	if err == nil {
		err = h.LinkDel(link)
	}
	if err != nil {
		return fmt.Errorf("netns: deleting eth0: %w", err)
	}
	return nil
}

// List returns the names of the namespaces under the network's directory, those of a
// previous run included, so the host can Remove the ones no instance owns any more.
func (n *Network) List() ([]string, error) {
	entries, err := os.ReadDir(n.cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.Type().IsRegular() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}
