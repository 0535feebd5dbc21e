package server

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/internal/netns"
)

// Networks of local instances (Config.InstanceNetwork; docs/isolation-network.md).
const (
	// InstanceNetworkLoopback gives each instance a loopback address, 127.0.0.2 onwards.
	InstanceNetworkLoopback = "loopback"
	// InstanceNetworkNetns gives each isolated instance a network namespace of its own, with an
	// address of a private subnet on a bridge of the host.
	InstanceNetworkNetns = "netns"
)

// instanceNetwork sets up per-instance network namespaces when Config.InstanceNetwork asks
// for them: the bridge, and a listener on its gateway address that serves the API to the
// instances (their 127.0.0.1 is their own), on the API's port. It returns nil for loopback
// addresses.
func (s *Server) instanceNetwork(sup contain.Support) (*netns.Network, error) {
	switch s.cfg.InstanceNetwork {
	case "", InstanceNetworkLoopback:
		return nil, nil
	case InstanceNetworkNetns:
	default:
		return nil, fmt.Errorf("instance network %q: want loopback or netns", s.cfg.InstanceNetwork)
	}
	if !sup.Available {
		return nil, fmt.Errorf("instance network netns needs isolated instances: %s", sup.Reason)
	}
	cfg := netns.DefaultConfig
	if s.cfg.NetnsConfig != nil {
		cfg = *s.cfg.NetnsConfig
	}
	n, err := netns.Open(cfg)
	if err != nil {
		return nil, err
	}
	_, port, _ := net.SplitHostPort(s.ln.Addr().String())
	if s.gwLn, err = net.Listen("tcp", net.JoinHostPort(cfg.Gateway().String(), port)); err != nil {
		return nil, fmt.Errorf("instance network: the API on the gateway: %w", err)
	}
	s.instanceAddr = func(i int) string {
		a, err := cfg.Addr(i)
		if err != nil {
			return ""
		}
		return a.String()
	}
	return n, nil
}

// instanceSDKEndpoint is the Server SDK URL local instances get: the one computes get, or,
// with network namespaces, the API on the gateway.
func (s *Server) instanceSDKEndpoint() string {
	if s.gwLn == nil {
		return s.SDKEndpoint()
	}
	ap := netip.MustParseAddrPort(s.gwLn.Addr().String())
	return "ws://" + net.JoinHostPort(ap.Addr().String(), strconv.Itoa(int(ap.Port()))) + SDKPath
}
