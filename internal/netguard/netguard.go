// Package netguard restricts the addresses and ports the processes of a cgroup may bind and
// the packets their sockets receive, with cgroup BPF programs (the hooks
// BPF_CGROUP_INET4_BIND, BPF_CGROUP_INET6_BIND, BPF_CGROUP_INET4_CONNECT and
// BPF_CGROUP_INET_INGRESS), written with github.com/cilium/ebpf/asm: no compiler step.
//
// A managed-fleet instance is an address on the host (127.0.x.y, or an address in its own
// network namespace). Attached to the instance's cgroup2 directory, the guard makes that
// address the only one its processes can bind:
//
//   - a bind to the wildcard (0.0.0.0, ::, ::ffff:0.0.0.0) is rewritten to the instance
//     address, so a game that listens on all addresses works and ends up on its own;
//   - a bind to the instance address (or its IPv4-mapped IPv6 form) is allowed;
//   - any other address, the server's 127.0.0.1 and every IPv6 address (::1 included) among
//     them, is refused with EPERM;
//   - with Rules.Ports, only ports in those ranges (and port 0, an ephemeral port) may be
//     bound;
//   - a socket that was never bound gets no packets unless it is connected (listen() and
//     sendto() bind the wildcard without the bind hook), and with Rules.EnforceInbound the
//     fleet's inbound permissions decide what reaches the instance's listeners;
//   - a connection to a loopback address leaves from the instance address.
//
// The programs stay attached until Close or until the cgroup is removed, also when the
// process that attached them exits: a guard fails closed. See docs/isolation-network.md for
// what is and is not enforced. The host wiring (hostd, cmd/hoist) imports this package.
package netguard

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// Protocol selects the sockets a port range applies to.
type Protocol int

// Protocols of a port range; the values are the IP protocol numbers the kernel reports.
const (
	AnyProtocol Protocol = 0
	TCP         Protocol = 6
	UDP         Protocol = 17
)

// PortRange is an inclusive range of ports, for one protocol or for both.
type PortRange struct {
	From, To uint16
	Protocol Protocol
}

// Rules say what the processes of a cgroup may bind and what their sockets receive.
type Rules struct {
	// Addr is the instance's IPv4 address: the one address they may bind.
	Addr netip.Addr
	// Ports, when not empty, are the only ports they may bind (port 0 always passes:
	// the kernel picks an ephemeral port). Empty means every port.
	Ports []PortRange
	// EnforceInbound makes Inbound decide which packets reach the instance's sockets that
	// are not connected (listeners, unconnected UDP sockets); packets from the instance
	// address itself always do. Without it, every packet to the instance address does.
	EnforceInbound bool
	// Inbound are the fleet's EC2InboundPermissions (at most MaxPortRanges).
	Inbound []Permission
}

// Permission is one inbound permission: packets of Ports.Protocol (TCP, UDP or both) to a
// port in Ports from an address in Source.
type Permission struct {
	Ports  PortRange
	Source netip.Prefix
}

// MaxPortRanges bounds Rules.Ports and Rules.Inbound (a fleet has at most 50 inbound
// permissions).
const MaxPortRanges = 64

// serverAddr is the address `hoist server` listens on by default; no instance may own it.
var serverAddr = netip.MustParseAddr("127.0.0.1")

// allowMulti is BPF_F_ALLOW_MULTI: programs of ancestor cgroups keep running too.
const allowMulti = 1 << 1

// Validate reports what is wrong with r, in one line.
func (r Rules) Validate() error {
	switch {
	case !r.Addr.Is4():
		return fmt.Errorf("netguard: instance address %v is not an IPv4 address", r.Addr)
	case r.Addr.IsUnspecified() || r.Addr == serverAddr:
		return fmt.Errorf("netguard: instance address %v is not an instance's own", r.Addr)
	case len(r.Ports) > MaxPortRanges || len(r.Inbound) > MaxPortRanges:
		return fmt.Errorf("netguard: more than %d port ranges or permissions", MaxPortRanges)
	}
	for _, p := range r.Ports {
		if err := p.validate(); err != nil {
			return err
		}
	}
	for _, p := range r.Inbound {
		if !p.Source.IsValid() || !p.Source.Addr().Is4() {
			return fmt.Errorf("netguard: permission source %v is not an IPv4 prefix", p.Source)
		}
		if err := p.Ports.validate(); err != nil {
			return err
		}
	}
	return nil
}

// validate reports what is wrong with p, in one line.
func (p PortRange) validate() error {
	if p.From > p.To || p.From == 0 {
		return fmt.Errorf("netguard: port range %d-%d is not valid", p.From, p.To)
	}
	if p.Protocol != AnyProtocol && p.Protocol != TCP && p.Protocol != UDP {
		return fmt.Errorf("netguard: protocol %d is neither TCP nor UDP", p.Protocol)
	}
	return nil
}

// guard is an attached pair of programs.
type guard struct {
	dir      *os.File
	attached []attachment
}

type attachment struct {
	prog *ebpf.Program
	typ  ebpf.AttachType
}

// Attach loads the bind, ingress and connect programs for r and attaches them to cgroupDir, a cgroup2
// directory; they apply to every process in it and in its descendants, and to the sockets
// those processes create. Close detaches them.
func Attach(cgroupDir string, r Rules) (io.Closer, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	var fs unix.Statfs_t
	if err := unix.Statfs(cgroupDir, &fs); err != nil {
		return nil, fmt.Errorf("netguard: %w", err)
	}
	if fs.Type != unix.CGROUP2_SUPER_MAGIC {
		return nil, fmt.Errorf("netguard: %s is not a cgroup2 directory", cgroupDir)
	}
	dir, err := os.Open(cgroupDir)
	if err != nil {
		return nil, fmt.Errorf("netguard: %w", err)
	}
	g := &guard{dir: dir}
	for _, p := range []struct {
		typ   ebpf.AttachType
		insns asm.Instructions
	}{
		{ebpf.AttachCGroupInet4Bind, bind4(r)},
		{ebpf.AttachCGroupInet6Bind, bind6(r)},
		{ebpf.AttachCGroupInetIngress, ingress(r)},
		{ebpf.AttachCGroupInet4Connect, connect4(r)},
	} {
		if err := g.attach(p.typ, p.insns); err != nil {
			return nil, errors.Join(err, g.Close())
		}
	}
	return g, nil
}

// attach loads one program and attaches it to g's cgroup.
func (g *guard) attach(typ ebpf.AttachType, insns asm.Instructions) error {
	prog, err := load(typ, insns)
	if err != nil {
		return err
	}
	err = link.RawAttachProgram(link.RawAttachProgramOptions{
		Target: int(g.dir.Fd()), Program: prog, Attach: typ, Flags: allowMulti})
	if err != nil {
		prog.Close()
		return fmt.Errorf("netguard: attaching %v to %s: %w", typ, g.dir.Name(), err)
	}
	g.attached = append(g.attached, attachment{prog, typ})
	return nil
}

// load loads a program for a cgroup hook: sock_addr for the bind hooks, skb for ingress.
func load(typ ebpf.AttachType, insns asm.Instructions) (*ebpf.Program, error) {
	progType, name := ebpf.CGroupSockAddr, "hoist_sockaddr"
	if typ == ebpf.AttachCGroupInetIngress {
		progType, name = ebpf.CGroupSKB, "hoist_ingress"
	}
	prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name: name, Type: progType, AttachType: typ,
		Instructions: insns, License: "Apache-2.0",
	})
	if err != nil {
		return nil, fmt.Errorf("netguard: loading the %v program: %w", typ, err)
	}
	return prog, nil
}

// Close detaches the programs. A cgroup already removed has nothing left to detach; a
// second Close does nothing.
func (g *guard) Close() error {
	if g.dir == nil {
		return nil
	}
	var errs []error
	for _, a := range g.attached {
		err := link.RawDetachProgram(link.RawDetachProgramOptions{
			Target: int(g.dir.Fd()), Program: a.prog, Attach: a.typ})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("netguard: detaching %v: %w", a.typ, err))
		}
		a.prog.Close()
	}
	g.attached = nil
	errs = append(errs, g.dir.Close())
	g.dir = nil
	return errors.Join(errs...)
}

// ParsePermission turns one of a fleet's EC2InboundPermissions (FromPort, ToPort, Protocol
// "TCP" or "UDP", IpRange in CIDR notation) into a Permission.
func ParsePermission(from, to int32, protocol, ipRange string) (Permission, error) {
	p := Permission{Ports: PortRange{From: uint16(from), To: uint16(to)}}
	switch protocol {
	case "TCP":
		p.Ports.Protocol = TCP
	case "UDP":
		p.Ports.Protocol = UDP
	default:
		return Permission{}, fmt.Errorf("netguard: protocol %q is neither TCP nor UDP", protocol)
	}
	if from < 1 || to > 65535 || from > to {
		return Permission{}, fmt.Errorf("netguard: port range %d-%d is not valid", from, to)
	}
	src, err := netip.ParsePrefix(ipRange)
	if err != nil || !src.Addr().Is4() {
		return Permission{}, fmt.Errorf("netguard: IP range %q is not an IPv4 CIDR block", ipRange)
	}
	p.Source = src.Masked()
	return p, nil
}
