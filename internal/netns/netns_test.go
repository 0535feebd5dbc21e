package netns

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	vns "github.com/vishvananda/netns"
)

// testNetwork opens a Network with a bridge and subnet of the test's own, removed at the end.
func testNetwork(t *testing.T) *Network {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netns: needs root to create bridges and network namespaces")
	}
	cfg := Config{
		Bridge: fmt.Sprintf("hnt%d", os.Getpid()%1000000),
		Prefix: netip.MustParsePrefix("10.251.0.0/24"),
		Dir:    t.TempDir(),
	}
	n, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.DeleteBridge(); err != nil {
			t.Error(err)
		}
	})
	return n
}

// createNS creates a namespace for the test and removes it at the end.
func createNS(t *testing.T, n *Network, name string, addr string) string {
	t.Helper()
	path, err := n.Create(name, netip.MustParseAddr(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Remove(name); err != nil {
			t.Error(err)
		}
	})
	return path
}

// inNS runs f on a thread inside the namespace at path: the sockets f opens are the
// namespace's, as those of a process that joined it.
func inNS(t *testing.T, path string, f func()) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	orig, err := vns.Get()
	if err != nil {
		t.Fatal(err)
	}
	defer orig.Close()
	ns, err := vns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	if err := vns.Set(ns); err != nil {
		t.Fatal(err)
	}
	f()
	if err := vns.Set(orig); err != nil {
		panic("netns test: cannot return to the host namespace: " + err.Error())
	}
}

// echo answers every connection of l with "echo: <first line>".
func echo(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			fmt.Fprintf(c, "echo: %s", line)
		}()
	}
}

// roundTrip sends a line over c and returns the reply.
func roundTrip(c net.Conn) (string, error) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(c, "hi")
	return bufio.NewReader(c).ReadString('\n')
}

// listen starts an echo listener on addr for the test.
func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go echo(l)
	return l
}

func TestNamespaces(t *testing.T) {
	n := testNetwork(t)
	a := createNS(t, n, "i-a", "10.251.0.2")
	b := createNS(t, n, "i-b", "10.251.0.3")
	hostLoopback := listen(t, "127.0.0.1:0")
	gateway := listen(t, n.cfg.Gateway().String()+":0")

	// A game server in a listens on all its addresses; the host and b reach it on 10.251.0.2.
	var game net.Listener
	inNS(t, a, func() { game = listen(t, "0.0.0.0:0") })
	_, port, _ := net.SplitHostPort(game.Addr().String())
	gameAddr := net.JoinHostPort("10.251.0.2", port)
	checkDial(t, "host to the instance", "", gameAddr, true)
	checkDial(t, "another instance to the instance", b, gameAddr, true)
	// From a, the server's SDK endpoint is on the gateway; the host's loopback is not there.
	checkDial(t, "instance to the gateway", a, gateway.Addr().String(), true)
	checkDial(t, "instance to the host's loopback", a, hostLoopback.Addr().String(), false)
	checkLinks(t, a, "10.251.0.2/24")
}

// checkDial dials to from the namespace at from ("" for the host) and checks that the echo
// answers, or that the connection is refused.
func checkDial(t *testing.T, what, from, to string, works bool) {
	t.Helper()
	var c net.Conn
	var err error
	dial := func() { c, err = net.DialTimeout("tcp4", to, 10*time.Second) }
	if from == "" {
		dial()
	} else {
		inNS(t, from, dial)
	}
	if !works {
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("%s (%s): got %v, want connection refused", what, to, err)
		}
		if err == nil {
			c.Close()
		}
		return
	}
	if err != nil {
		t.Fatalf("%s (%s): %v", what, to, err)
	}
	if reply, err := roundTrip(c); reply != "echo: hi\n" {
		t.Errorf("%s (%s): reply %q (%v)", what, to, reply, err)
	}
}

// checkLinks: the namespace holds lo and eth0 with the instance's address, nothing else.
func checkLinks(t *testing.T, path, addr string) {
	t.Helper()
	ns, err := vns.GetFromPath(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, l := range links {
		names = append(names, l.Attrs().Name)
	}
	if fmt.Sprint(names) != "[lo eth0]" {
		t.Errorf("links in the namespace: %v, want [lo eth0]", names)
	}
	eth0, _ := h.LinkByName("eth0")
	addrs, err := h.AddrList(eth0, netlink.FAMILY_V4)
	if err != nil || len(addrs) != 1 || addrs[0].IPNet.String() != addr {
		t.Errorf("eth0 addresses %v (%v), want %s", addrs, err, addr)
	}
}

func TestRemove(t *testing.T) {
	n := testNetwork(t)
	path := createNS(t, n, "i-gone", "10.251.0.9")
	veth := hostVeth(netip.MustParseAddr("10.251.0.9"))
	if _, err := netlink.LinkByName(veth); err != nil {
		t.Fatalf("host veth %s: %v", veth, err)
	}
	if names, err := n.List(); err != nil || fmt.Sprint(names) != "[i-gone]" {
		t.Errorf("List = %v, %v; want [i-gone]", names, err)
	}
	if err := n.Remove("i-gone"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("namespace file after Remove: %v", err)
	}
	if _, err := netlink.LinkByName(veth); err == nil {
		t.Errorf("host veth %s still there after Remove", veth)
	}
	if err := n.Remove("i-gone"); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if names, err := n.List(); err != nil || len(names) != 0 {
		t.Errorf("List after Remove = %v, %v", names, err)
	}
	// The address can be used again.
	createNS(t, n, "i-again", "10.251.0.9")
}

func TestCreateErrors(t *testing.T) {
	n := testNetwork(t)
	for _, addr := range []string{"10.251.0.0", "10.251.0.1", "10.252.0.2"} {
		if _, err := n.Create("i-bad", netip.MustParseAddr(addr)); err == nil {
			t.Errorf("Create accepted %s", addr)
		}
	}
	createNS(t, n, "i-one", "10.251.0.4")
	if _, err := n.Create("i-one", netip.MustParseAddr("10.251.0.5")); err == nil {
		t.Error("Create accepted a name in use")
	}
	if _, err := n.Create("i-two", netip.MustParseAddr("10.251.0.4")); err == nil {
		t.Error("Create accepted an address in use")
	}
	if _, err := os.Stat(n.Path("i-two")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a failed Create left %s: %v", n.Path("i-two"), err)
	}
}

func TestConfig(t *testing.T) {
	c := DefaultConfig
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Gateway().String() != "10.201.0.1" {
		t.Errorf("gateway %v", c.Gateway())
	}
	for n, want := range map[int]string{0: "10.201.0.2", 253: "10.201.0.255", 254: "10.201.1.0", 65532: "10.201.255.254"} {
		if a, err := c.Addr(n); err != nil || a.String() != want {
			t.Errorf("Addr(%d) = %v, %v; want %s", n, a, err, want)
		}
	}
	for _, n := range []int{-1, 65533} {
		if a, err := c.Addr(n); err == nil {
			t.Errorf("Addr(%d) = %v, want an error", n, a)
		}
	}
	for _, bad := range []Config{
		{Bridge: "", Prefix: c.Prefix, Dir: c.Dir},
		{Bridge: "a-very-long-bridge", Prefix: c.Prefix, Dir: c.Dir},
		{Bridge: "b", Prefix: netip.MustParsePrefix("fd00::/64"), Dir: c.Dir},
		{Bridge: "b", Prefix: netip.MustParsePrefix("10.0.0.0/30"), Dir: c.Dir},
		{Bridge: "b", Prefix: c.Prefix, Dir: "relative"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("Validate accepted %+v", bad)
		}
	}
}

// BenchmarkCreate measures what a namespace adds to starting and stopping an instance.
func BenchmarkCreate(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("netns: needs root")
	}
	cfg := Config{Bridge: fmt.Sprintf("hnb%d", os.Getpid()%1000000),
		Prefix: netip.MustParsePrefix("10.253.0.0/24"), Dir: b.TempDir()}
	n, err := Open(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer n.DeleteBridge()
	addr, _ := cfg.Addr(0)
	for b.Loop() {
		if _, err := n.Create("i-bench", addr); err != nil {
			b.Fatal(err)
		}
		if err := n.Remove("i-bench"); err != nil {
			b.Fatal(err)
		}
	}
}
