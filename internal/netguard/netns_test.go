package netguard

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/netns"
	vns "github.com/vishvananda/netns"
)

// netnsEnv makes a helper join a network namespace first, as internal/contain does for a
// process whose Spec.NetNS is set.
const netnsEnv = "HOIST_NETGUARD_NETNS"

// enterNetNS moves the helper's main thread, on which it opens its sockets, into the
// namespace at path.
func enterNetNS(path string) {
	runtime.LockOSThread()
	ns, err := vns.GetFromPath(path)
	if err == nil {
		err = vns.Set(ns)
	}
	if err != nil {
		fmt.Println("err", err)
		os.Exit(1)
	}
}

// TestGuardInNamespace: an instance with its own network namespace and the guard on its
// address (the `--instance-network netns` option): a server on 0.0.0.0 lands on the
// instance's address and the host reaches it; the SDK endpoint on the gateway is reachable;
// the namespace's own 127.0.0.1 is refused like the host's.
func TestGuardInNamespace(t *testing.T) {
	needGuard(t)
	cfg := netns.Config{
		Bridge: fmt.Sprintf("hng%d", os.Getpid()%1000000),
		Prefix: netip.MustParsePrefix("10.252.0.0/24"), Dir: t.TempDir(),
	}
	n, err := netns.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer n.DeleteBridge()
	addr, _ := cfg.Addr(0)
	path, err := n.Create("i-guarded", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Remove("i-guarded")
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: addr, EnforceInbound: true, Inbound: []Permission{
		{PortRange{1, 60000, TCP}, netip.MustParsePrefix("0.0.0.0/0")}}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	t.Setenv(netnsEnv, path)

	checkBinds(t, dir, []bindCase{
		{"tcp4", "127.0.0.1:0", "EPERM"},
		{"tcp4", addr.String() + ":0", addr.String()},
		{"udp4", "0.0.0.0:0", addr.String()},
	})
	gateway, err := net.Listen("tcp4", cfg.Gateway().String()+":0")
	if err != nil {
		t.Fatal(err)
	}
	defer gateway.Close()
	go func() {
		if c, err := gateway.Accept(); err == nil {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			fmt.Fprintf(c, "pong to %s", line)
		}
	}()
	if out, err := inCgroup(dir, "dial", "tcp4", gateway.Addr().String()).Output(); string(out) != "ok pong to ping\n" {
		t.Errorf("instance to the SDK endpoint on the gateway: %q (%v)", out, err)
	}
	serveInNamespace(t, dir, addr)
}

// serveInNamespace runs the echo helper in the guarded namespace and talks to it from the host.
func serveInNamespace(t *testing.T, dir string, addr netip.Addr) {
	cmd := inCgroup(dir, "serve")
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	got, ok := strings.CutPrefix(strings.TrimSpace(line), "ok ")
	if err != nil || !ok || !strings.HasPrefix(got, addr.String()+":") {
		t.Fatalf("server in the namespace said %q (%v), want ok %v:port", line, err, addr)
	}
	c, err := net.DialTimeout("tcp4", got, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintln(c, "hello")
	if reply, err := bufio.NewReader(c).ReadString('\n'); reply != "echo: hello\n" {
		t.Fatalf("reply %q (%v)", reply, err)
	}
}
