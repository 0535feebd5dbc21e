package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/hoist-gg/hoist/internal/testwait"
)

// helperSocket is one socket of the sockets helper, with what it received.
type helperSocket struct {
	raw  syscall.RawConn
	recv atomic.Int64
}

// socketsHelper opens the sockets its arguments name, prints "ok <address>" for each, and
// then answers every line on stdin with "recv/drops" for each socket, space-separated.
// tcp-unbound and udp-unbound are sockets that were never bound: a listen(), and a sendto().
func socketsHelper(args []string) {
	var socks []*helperSocket
	for _, spec := range args {
		s, addr, err := openSocket(spec)
		if err != nil {
			fmt.Println("err", err)
			return
		}
		fmt.Println("ok", addr)
		socks = append(socks, s)
	}
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		var stats []string
		for _, s := range socks {
			stats = append(stats, fmt.Sprintf("%d/%d", s.recv.Load(), drops(s.raw)))
		}
		fmt.Println(strings.Join(stats, " "))
	}
}

// openSocket opens one socket of the helper and starts counting what it receives.
func openSocket(spec string) (*helperSocket, string, error) {
	network, addr, _ := strings.Cut(spec, ":")
	switch network {
	case "tcp-unbound", "udp-unbound":
		return unboundSocket(network)
	case "tcp":
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			return nil, "", err
		}
		return countAccepts(l), l.Addr().String(), nil
	default:
		c, err := net.ListenPacket("udp4", addr)
		if err != nil {
			return nil, "", err
		}
		return countPackets(c), c.LocalAddr().String(), nil
	}
}

// unboundSocket makes the kernel bind a socket itself: listen() on a TCP socket, sendto()
// on a UDP one. Neither runs the bind hook.
func unboundSocket(network string) (*helperSocket, string, error) {
	typ := syscall.SOCK_STREAM
	if network == "udp-unbound" {
		typ = syscall.SOCK_DGRAM
	}
	fd, err := syscall.Socket(syscall.AF_INET, typ, 0)
	if err != nil {
		return nil, "", err
	}
	if typ == syscall.SOCK_STREAM {
		err = syscall.Listen(fd, 8)
	} else {
		err = syscall.Sendto(fd, []byte("x"), 0, &syscall.SockaddrInet4{Port: 9, Addr: [4]byte{127, 0, 0, 1}})
	}
	if err != nil {
		return nil, "", err
	}
	f := os.NewFile(uintptr(fd), network)
	if typ == syscall.SOCK_STREAM {
		l, err := net.FileListener(f)
		if err != nil {
			return nil, "", err
		}
		return countAccepts(l), l.Addr().String(), nil
	}
	c, err := net.FilePacketConn(f)
	if err != nil {
		return nil, "", err
	}
	return countPackets(c), c.LocalAddr().String(), nil
}

// countAccepts counts the connections l accepts.
func countAccepts(l net.Listener) *helperSocket {
	s := &helperSocket{}
	s.raw, _ = l.(syscall.Conn).SyscallConn()
	go func() {
		for {
			if _, err := l.Accept(); err != nil {
				return
			}
			s.recv.Add(1)
		}
	}()
	return s
}

// countPackets counts the datagrams c receives.
func countPackets(c net.PacketConn) *helperSocket {
	s := &helperSocket{}
	s.raw, _ = c.(syscall.Conn).SyscallConn()
	go func() {
		buf := make([]byte, 1500)
		for {
			if _, _, err := c.ReadFrom(buf); err != nil {
				return
			}
			s.recv.Add(1)
		}
	}()
	return s
}

// drops returns the socket's drop counter (SO_MEMINFO, SK_MEMINFO_DROPS): packets a filter
// (our ingress program among them) refused. Tests read it for UDP sockets only: for a TCP
// listener the kernel counts a filtered SYN elsewhere.
func drops(raw syscall.RawConn) uint32 {
	const soMeminfo, meminfoDrops = 55, 8
	var info [16]uint32
	size := uint32(unsafe.Sizeof(info))
	raw.Control(func(fd uintptr) {
		syscall.Syscall6(syscall.SYS_GETSOCKOPT, fd, syscall.SOL_SOCKET, soMeminfo,
			uintptr(unsafe.Pointer(&info)), uintptr(unsafe.Pointer(&size)), 0)
	})
	return info[meminfoDrops]
}

// sockets is a running sockets helper.
type sockets struct {
	addrs []string
	in    io.WriteCloser
	out   *bufio.Reader
}

// startSockets runs the sockets helper in dir's cgroup.
func startSockets(t *testing.T, dir string, specs ...string) *sockets {
	t.Helper()
	cmd := inCgroup(dir, "sockets", specs...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Wait() })
	s := &sockets{in: in, out: bufio.NewReader(out)}
	for range specs {
		line, err := s.out.ReadString('\n')
		addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ok ")
		if err != nil || !ok {
			t.Fatalf("sockets helper: %q (%v)", line, err)
		}
		s.addrs = append(s.addrs, addr)
	}
	return s
}

// stats asks the helper for "recv/drops" of each socket.
func (s *sockets) stats(t *testing.T) []string {
	fmt.Fprintln(s.in)
	line, err := s.out.ReadString('\n')
	if err != nil {
		t.Fatalf("sockets helper: %v", err)
	}
	return strings.Fields(line)
}

// waitStats polls the helper until cond accepts its stats.
func (s *sockets) waitStats(t *testing.T, what string, cond func(recv, drops []int) bool) {
	t.Helper()
	var last []string
	defer func() { t.Logf("recv/drops: %v", last) }()
	testwait.Until(t, 20*time.Second, 20*time.Millisecond, what, func() bool {
		last = s.stats(t)
		recv, drops := make([]int, len(last)), make([]int, len(last))
		for i, f := range last {
			fmt.Sscanf(f, "%d/%d", &recv[i], &drops[i])
		}
		return cond(recv, drops)
	})
}

// sendUDP sends one datagram from the test process (outside the cgroup), from local if given.
func sendUDP(t *testing.T, local, to string) {
	t.Helper()
	var laddr *net.UDPAddr
	if local != "" {
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(local), 0))
	}
	raddr, err := net.ResolveUDPAddr("udp4", to)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.DialUDP("udp4", laddr, raddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
}

// dialTCP connects from the test process, from local if given, and reports the outcome.
// The SYN is sent twice at most (TCP_SYNCNT): a SYN the guard drops makes the connection
// time out on the kernel's retransmission timer (about 3 s) instead of being refused.
func dialTCP(t *testing.T, local, to string) <-chan error {
	d := net.Dialer{Control: func(_, _ string, raw syscall.RawConn) error {
		var err error
		raw.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_SYNCNT, 1)
		})
		return err
	}}
	if local != "" {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(local), 0))
	}
	done := make(chan error, 1)
	go func() {
		c, err := d.Dial("tcp4", to)
		if err == nil {
			t.Cleanup(func() { c.Close() })
		}
		done <- err
	}()
	return done
}

// wantDial checks the outcome of a dialTCP: connected, or timed out (dropped).
func wantDial(t *testing.T, what string, done <-chan error, dropped bool) {
	t.Helper()
	err := <-done
	switch {
	case dropped && !errors.Is(err, syscall.ETIMEDOUT):
		t.Errorf("%s: got %v, want a timeout (SYN dropped)", what, err)
	case !dropped && err != nil:
		t.Errorf("%s: %v", what, err)
	}
}

// port returns the port of a helper address.
func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// TestUnboundSockets: a socket the kernel bound itself (listen or sendto without bind) sits
// on the wildcard address, past the bind hook; the ingress program keeps every packet from
// it, while sockets on the instance address get theirs.
func TestUnboundSockets(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.6")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := startSockets(t, dir, "tcp-unbound", "udp-unbound", "tcp:0.0.0.0:0", "udp:0.0.0.0:0")
	for i, want := range []string{"0.0.0.0", "0.0.0.0", "127.0.99.6", "127.0.99.6"} {
		if host, _, _ := net.SplitHostPort(s.addrs[i]); host != want {
			t.Fatalf("socket %d on %s, want %s", i, s.addrs[i], want)
		}
	}
	unbound := dialTCP(t, "", "127.0.0.1:"+port(s.addrs[0]))
	sendUDP(t, "", "127.0.0.1:"+port(s.addrs[1]))
	sendUDP(t, "", "127.0.99.6:"+port(s.addrs[1]))
	bound := dialTCP(t, "", s.addrs[2])
	sendUDP(t, "", s.addrs[3])
	wantDial(t, "TCP to the unbound listener", unbound, true)
	wantDial(t, "TCP to the bound listener", bound, false)
	s.waitStats(t, "drops on the unbound UDP socket, packets on the bound ones", func(recv, drops []int) bool {
		return drops[1] >= 2 && recv[2] == 1 && recv[3] == 1
	})
	if got := s.stats(t); !strings.HasPrefix(got[0], "0/") || !strings.HasPrefix(got[1], "0/") {
		t.Errorf("unbound sockets received something: %v", got)
	}
}

// TestInboundPermissions: with EnforceInbound, only packets a permission covers (protocol,
// port, source) reach the instance's listeners.
func TestInboundPermissions(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.7"), EnforceInbound: true,
		Inbound: []Permission{
			{PortRange{18100, 18100, UDP}, netip.MustParsePrefix("127.0.0.0/8")},
			{PortRange{18101, 18101, TCP}, netip.MustParsePrefix("127.0.0.2/32")},
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	s := startSockets(t, dir, "udp:0.0.0.0:18100", "udp:0.0.0.0:18102", "tcp:0.0.0.0:18101", "tcp:0.0.0.0:18100")
	sendUDP(t, "", s.addrs[0])
	sendUDP(t, "", s.addrs[1])           // no permission for the port
	sendUDP(t, "127.0.99.7", s.addrs[1]) // from the instance itself
	wrongSource := dialTCP(t, "127.0.0.3", s.addrs[2])
	permitted := dialTCP(t, "127.0.0.2", s.addrs[2])
	wrongProtocol := dialTCP(t, "127.0.0.2", s.addrs[3]) // 18100 is permitted for UDP only
	wantDial(t, "TCP from a source outside the permission", wrongSource, true)
	wantDial(t, "TCP from the permitted source", permitted, false)
	wantDial(t, "TCP to a UDP permission's port", wrongProtocol, true)
	s.waitStats(t, "permitted datagrams in, the rest dropped", func(recv, drops []int) bool {
		return recv[0] == 1 && recv[1] == 1 && drops[1] >= 1 && recv[2] == 1 && recv[3] == 0
	})
}
