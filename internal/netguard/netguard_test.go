package netguard

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/testwait"
)

// helperEnv makes the test binary a helper process that binds what its arguments say.
const helperEnv = "HOIST_NETGUARD_HELPER"

func TestMain(m *testing.M) {
	if path := os.Getenv(netnsEnv); path != "" {
		enterNetNS(path)
	}
	switch os.Getenv(helperEnv) {
	case "bind":
		bindHelper(os.Args[1:])
		os.Exit(0)
	case "sockets":
		socketsHelper(os.Args[1:])
		os.Exit(0)
	case "serve":
		serveHelper()
		os.Exit(0)
	case "supported":
		ok, why := Supported()
		fmt.Println(ok, why)
		os.Exit(0)
	case "dial":
		dialHelper(os.Args[1], os.Args[2])
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// bindHelper takes pairs "network address", binds each and prints one line per pair:
// "ok <local address>" or "err <EPERM or the error>".
func bindHelper(args []string) {
	for i := 0; i+1 < len(args); i += 2 {
		addr, err := bind(args[i], args[i+1])
		switch {
		case errors.Is(err, syscall.EPERM):
			fmt.Println("err EPERM")
		case errors.Is(err, syscall.EINVAL):
			fmt.Println("err EINVAL")
		case err != nil:
			fmt.Println("err", err)
		default:
			fmt.Println("ok", addr)
		}
	}
}

// bind binds one socket and returns its local address as getsockname reports it.
func bind(network, addr string) (string, error) {
	if strings.HasPrefix(network, "udp") {
		c, err := net.ListenPacket(network, addr)
		if err != nil {
			return "", err
		}
		defer c.Close()
		return c.LocalAddr().String(), nil
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// serveHelper is a game server in miniature: it listens on 0.0.0.0, prints its address
// and answers one connection's line with "echo: <line>".
func serveHelper() {
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		fmt.Println("err", err)
		return
	}
	fmt.Println("ok", l.Addr())
	c, err := l.Accept()
	if err != nil {
		return
	}
	defer c.Close()
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Fprintf(c, "echo: %s", line)
}

// dialHelper is a game server's side of the SDK connection in miniature: it connects to
// addr (outside the instance), sends a line and prints the reply, or the error.
func dialHelper(network, addr string) {
	c, err := net.DialTimeout(network, addr, 10*time.Second)
	if err != nil {
		fmt.Println("err", err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintln(c, "ping")
	buf := make([]byte, 100)
	n, err := c.Read(buf)
	if err != nil {
		fmt.Println("err", err)
		return
	}
	fmt.Print("ok ", string(buf[:n]))
}

// needGuard skips a test on a host where guards cannot be attached.
func needGuard(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("netguard: needs root to create cgroups and attach BPF programs")
	}
	if ok, why := Supported(); !ok {
		t.Skip(why)
	}
}

// testCgroup creates a cgroup2 directory for the test and removes it at the end.
func testCgroup(t *testing.T) string {
	t.Helper()
	mount, err := Cgroup2Mount()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(mount, fmt.Sprintf("hoist-netguard-test-%d-%s", os.Getpid(), t.Name()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		testwait.Until(t, 10*time.Second, 10*time.Millisecond, "removing "+dir, func() bool {
			return os.Remove(dir) == nil
		})
	})
	return dir
}

// inCgroup runs the test binary as a helper in mode inside cgroup dir: the shell moves
// itself into the cgroup and then becomes the helper, so every socket is the cgroup's.
func inCgroup(dir, mode string, args ...string) *exec.Cmd {
	script := `echo $$ > "$HOIST_CGROUP/cgroup.procs" && exec "$@"`
	cmd := exec.Command("sh", append([]string{"-c", script, "sh", os.Args[0]}, args...)...)
	cmd.Env = append(os.Environ(), helperEnv+"="+mode, "HOIST_CGROUP="+dir)
	cmd.Stderr = os.Stderr
	return cmd
}

// binds runs the bind helper in dir's cgroup and returns its lines, one per pair.
func binds(t *testing.T, dir string, pairs ...string) []string {
	t.Helper()
	out, err := inCgroup(dir, "bind", pairs...).Output()
	if err != nil {
		t.Fatalf("bind helper: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pairs)/2 {
		t.Fatalf("bind helper printed %q for %q", lines, pairs)
	}
	return lines
}

// bindCase is a bind and the outcome the guard must give it.
type bindCase struct {
	network, addr string
	want          string // "EPERM", "EINVAL", or the local address without the port, or host:port
}

// checkBinds runs the cases in one helper process and compares the outcomes.
func checkBinds(t *testing.T, dir string, cases []bindCase) {
	t.Helper()
	var pairs []string
	for _, c := range cases {
		pairs = append(pairs, c.network, c.addr)
	}
	for i, line := range binds(t, dir, pairs...) {
		if got := outcome(line, cases[i].want); got != cases[i].want {
			t.Errorf("bind %s %s: got %q, want %s", cases[i].network, cases[i].addr, line, cases[i].want)
		}
	}
}

// outcome reduces a helper line to what a case compares: EPERM, host:port when want has a
// port, otherwise the host.
func outcome(line, want string) string {
	if e, ok := strings.CutPrefix(line, "err "); ok && (e == "EPERM" || e == "EINVAL") {
		return e
	}
	addr, ok := strings.CutPrefix(line, "ok ")
	if !ok {
		return line
	}
	if _, _, err := net.SplitHostPort(want); err == nil {
		return addr
	}
	host, _, _ := net.SplitHostPort(addr)
	return host
}

// hasIPv6 reports whether the host has IPv6 (and so dual-stack sockets).
func hasIPv6() bool {
	b, err := os.ReadFile("/proc/net/if_inet6")
	return err == nil && len(b) > 0
}

func TestBindAddresses(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.1")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cases := []bindCase{
		{"tcp4", "0.0.0.0:0", "127.0.99.1"},
		{"tcp4", "127.0.99.1:0", "127.0.99.1"},
		{"tcp4", "127.0.0.1:0", "EPERM"},
		{"tcp4", "127.0.99.2:0", "EPERM"},
		{"udp4", "0.0.0.0:0", "127.0.99.1"},
		{"udp4", "127.0.99.1:0", "127.0.99.1"},
		{"udp4", "127.0.0.1:0", "EPERM"},
	}
	if hasIPv6() {
		cases = append(cases,
			bindCase{"tcp", ":0", "127.0.99.1"}, // Go's dual-stack [::] socket
			bindCase{"udp", ":0", "127.0.99.1"},
			bindCase{"tcp6", "[::1]:0", "EPERM"},
			bindCase{"udp6", "[::1]:0", "EPERM"},
			bindCase{"tcp", "[::ffff:127.0.0.1]:0", "EPERM"},
			bindCase{"tcp", "[::ffff:127.0.99.1]:0", "127.0.99.1"},
			bindCase{"tcp6", "[::]:0", "EINVAL"}, // IPv6-only: no IPv4 address to rewrite to
		)
	}
	checkBinds(t, dir, cases)

	// The guard covers the cgroup only: this test process binds 127.0.0.1 as before.
	if _, err := bind("tcp4", "127.0.0.1:0"); err != nil {
		t.Errorf("outside the cgroup: %v", err)
	}
	// Detached, the cgroup's processes bind what they like again.
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	checkBinds(t, dir, []bindCase{{"tcp4", "127.0.0.1:0", "127.0.0.1"}, {"tcp4", "0.0.0.0:0", "0.0.0.0"}})
}

func TestBindPorts(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.3"), Ports: []PortRange{
		{From: 17000, To: 17010, Protocol: TCP}, {From: 18000, To: 18000, Protocol: UDP},
		{From: 19000, To: 19001},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if hasIPv6() {
		checkBinds(t, dir, []bindCase{
			{"tcp", ":17004", "127.0.99.3:17004"}, // dual-stack: the bind6 program's port checks
			{"tcp", ":17011", "EPERM"},
			{"udp", ":18000", "127.0.99.3:18000"},
			{"udp", ":17004", "EPERM"},
		})
	}
	checkBinds(t, dir, []bindCase{
		{"tcp4", "0.0.0.0:17005", "127.0.99.3:17005"},
		{"tcp4", "127.0.99.3:17010", "127.0.99.3:17010"},
		{"tcp4", "0.0.0.0:16999", "EPERM"},
		{"tcp4", "0.0.0.0:17011", "EPERM"},
		{"udp4", "0.0.0.0:17005", "EPERM"}, // the range is TCP's
		{"udp4", "0.0.0.0:18000", "127.0.99.3:18000"},
		{"tcp4", "0.0.0.0:18000", "EPERM"},
		{"tcp4", "0.0.0.0:19001", "127.0.99.3:19001"},
		{"udp4", "0.0.0.0:19000", "127.0.99.3:19000"},
		{"tcp4", "0.0.0.0:0", "127.0.99.3"}, // ephemeral
		{"tcp4", "127.0.0.1:17005", "EPERM"},
	})
}

// TestGameServerReachable: a server that listens on 0.0.0.0 inside the guard is reached on
// its instance address.
func TestGameServerReachable(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.4")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	cmd := inCgroup(dir, "serve")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	r := bufio.NewReader(out)
	line, err := r.ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "ok ")
	if err != nil || !ok || !strings.HasPrefix(addr, "127.0.99.4:") {
		t.Fatalf("server said %q (%v), want ok 127.0.99.4:port", line, err)
	}
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintln(c, "hello")
	reply, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || reply != "echo: hello\n" {
		t.Fatalf("reply %q (%v)", reply, err)
	}
}

// TestManyRanges: the verifier accepts the largest programs Rules allow.
func TestManyRanges(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	var ports []PortRange
	var perms []Permission
	for i := range MaxPortRanges {
		ports = append(ports, PortRange{From: uint16(20000 + 2*i), To: uint16(20000 + 2*i), Protocol: UDP})
		perms = append(perms, Permission{ports[i], netip.MustParsePrefix("127.0.0.0/8")})
	}
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.5"), Ports: ports,
		EnforceInbound: true, Inbound: perms})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	last := fmt.Sprintf("0.0.0.0:%d", 20000+2*(MaxPortRanges-1))
	checkBinds(t, dir, []bindCase{
		{"udp4", last, "127.0.99.5:" + last[len("0.0.0.0:"):]},
		{"udp4", "0.0.0.0:20001", "EPERM"},
	})
}

func TestAttachErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    Rules
	}{
		{"no address", Rules{}},
		{"IPv6", Rules{Addr: netip.MustParseAddr("::1")}},
		{"wildcard", Rules{Addr: netip.MustParseAddr("0.0.0.0")}},
		{"server's", Rules{Addr: netip.MustParseAddr("127.0.0.1")}},
		{"reversed range", Rules{Addr: netip.MustParseAddr("127.0.9.9"), Ports: []PortRange{{From: 9, To: 8}}}},
		{"port 0", Rules{Addr: netip.MustParseAddr("127.0.9.9"), Ports: []PortRange{{From: 0, To: 8}}}},
		{"protocol", Rules{Addr: netip.MustParseAddr("127.0.9.9"), Ports: []PortRange{{From: 1, To: 8, Protocol: 1}}}},
		{"too many", Rules{Addr: netip.MustParseAddr("127.0.9.9"), Ports: make([]PortRange, MaxPortRanges+1)}},
	} {
		if _, err := Attach(t.TempDir(), tc.r); err == nil {
			t.Errorf("%s: Attach accepted %+v", tc.name, tc.r)
		}
	}
	if _, err := Attach(filepath.Join(t.TempDir(), "missing"), Rules{Addr: netip.MustParseAddr("127.0.9.9")}); err == nil {
		t.Error("Attach to a missing directory succeeded")
	}
	dir := t.TempDir()
	_, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.9.9")})
	if want := "netguard: " + dir + " is not a cgroup2 directory"; err == nil || err.Error() != want {
		t.Errorf("Attach to a plain directory: %v, want %s", err, want)
	}
}

func TestCgroup2Line(t *testing.T) {
	line := "35 25 0:30 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw"
	if dir, ok := cgroup2Line(line); !ok || dir != "/sys/fs/cgroup/unified" {
		t.Errorf("cgroup2Line = %q, %v", dir, ok)
	}
	other := "36 25 0:31 / /sys/fs/cgroup/cpu rw,nosuid shared:11 - cgroup cgroup rw,cpu"
	if _, ok := cgroup2Line(other); ok {
		t.Error("a cgroup v1 line read as cgroup2")
	}
}

// TestOutboundConnections: connections the instance opens get their replies, also with
// inbound permissions enforced and none granted; that is how the SDK connection works. To
// loopback destinations they leave from the instance address.
func TestOutboundConnections(t *testing.T) {
	needGuard(t)
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.8"), EnforceInbound: true})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			defer c.Close()
			line, _ := bufio.NewReader(c).ReadString('\n')
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			fmt.Fprintf(c, "pong from %s to %s", host, line)
		}
	}()
	u, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	go func() {
		buf := make([]byte, 100)
		if n, from, err := u.ReadFrom(buf); err == nil {
			host, _, _ := net.SplitHostPort(from.String())
			u.WriteTo(fmt.Appendf(nil, "pong from %s to %s", host, buf[:n]), from)
		}
	}()
	for _, c := range []struct{ network, addr string }{{"tcp4", l.Addr().String()}, {"udp4", u.LocalAddr().String()}} {
		out, err := inCgroup(dir, "dial", c.network, c.addr).Output()
		// The connection leaves from the instance address, not from 127.0.0.1.
		if err != nil || string(out) != "ok pong from 127.0.99.8 to ping\n" {
			t.Errorf("%s to %s from the instance: %q (%v)", c.network, c.addr, out, err)
		}
	}
}

// BenchmarkAttach measures what the guard adds to starting an instance: loading and
// attaching its three programs, and detaching them.
func BenchmarkAttach(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("netguard: needs root")
	}
	if ok, why := Supported(); !ok {
		b.Skip(why)
	}
	mount, err := Cgroup2Mount()
	if err != nil {
		b.Fatal(err)
	}
	dir := filepath.Join(mount, fmt.Sprintf("hoist-netguard-bench-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	defer os.Remove(dir)
	r := Rules{Addr: netip.MustParseAddr("127.0.99.9"), EnforceInbound: true,
		Inbound: []Permission{{PortRange{7000, 8000, UDP}, netip.MustParsePrefix("0.0.0.0/0")}}}
	for b.Loop() {
		g, err := Attach(dir, r)
		if err != nil {
			b.Fatal(err)
		}
		if err := g.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// TestUnprivileged: a process without the privilege to load BPF programs learns that the
// guard is unavailable, and why, instead of running unguarded without knowing it.
func TestUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		ok, why := Supported()
		if ok || why == "" {
			t.Fatalf("Supported() = %v, %q for uid %d", ok, why, os.Geteuid())
		}
		return
	}
	dir, err := os.MkdirTemp("", "netguard-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "helper")
	if err := copyExecutable(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), helperEnv+"=supported")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	got := strings.TrimSpace(string(out))
	if err != nil || got != "false netguard: not allowed to load BPF programs (needs root, or CAP_BPF and CAP_NET_ADMIN)" {
		t.Fatalf("as nobody: %q (%v)", got, err)
	}
}

// copyExecutable copies the test binary where an unprivileged user can run it.
func copyExecutable(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// TestConnectElsewhere: a connection to an address that is not loopback is left to the
// kernel's routing (an instance address on lo could not reach another machine).
func TestConnectElsewhere(t *testing.T) {
	needGuard(t)
	host := hostAddress()
	if !host.IsValid() {
		t.Skip("the host has no IPv4 address but loopback")
	}
	dir := testCgroup(t)
	g, err := Attach(dir, Rules{Addr: netip.MustParseAddr("127.0.99.10")})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l, err := net.Listen("tcp4", netip.AddrPortFrom(host, 0).String())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		if c, err := l.Accept(); err == nil {
			defer c.Close()
			bufio.NewReader(c).ReadString('\n')
			from, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			fmt.Fprintf(c, "from %s\n", from)
		}
	}()
	out, err := inCgroup(dir, "dial", "tcp4", l.Addr().String()).Output()
	if want := "ok from " + host.String() + "\n"; err != nil || string(out) != want {
		t.Errorf("instance to %v: %q (%v), want %q", l.Addr(), out, err, want)
	}
}

// hostAddress returns an IPv4 address of the host outside 127.0.0.0/8, if it has one.
func hostAddress() netip.Addr {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() && !p.Addr().IsLoopback() {
			return p.Addr()
		}
	}
	return netip.Addr{}
}

func TestParsePermission(t *testing.T) {
	p, err := ParsePermission(7000, 7100, "UDP", "10.1.2.3/16")
	want := Permission{PortRange{7000, 7100, UDP}, netip.MustParsePrefix("10.1.0.0/16")}
	if err != nil || p != want {
		t.Errorf("ParsePermission = %+v, %v; want %+v", p, err, want)
	}
	for _, bad := range []struct {
		from, to       int32
		protocol, cidr string
	}{
		{1, 2, "ICMP", "0.0.0.0/0"}, {0, 2, "TCP", "0.0.0.0/0"}, {3, 2, "TCP", "0.0.0.0/0"},
		{1, 70000, "TCP", "0.0.0.0/0"}, {1, 2, "TCP", "0.0.0.0"}, {1, 2, "TCP", "::/0"},
	} {
		if p, err := ParsePermission(bad.from, bad.to, bad.protocol, bad.cidr); err == nil {
			t.Errorf("ParsePermission(%v) = %+v, want an error", bad, p)
		}
	}
}

func TestCheckKernel(t *testing.T) {
	for release, ok := range map[string]bool{
		"6.18.44-fc-v669": true, "5.15.0-91-generic": true, "7.0": true,
		"5.14.21": false, "4.19.0-26-amd64": false, "unknown": false,
	} {
		if err := checkKernel(release); (err == nil) != ok {
			t.Errorf("checkKernel(%q) = %v", release, err)
		}
	}
}
