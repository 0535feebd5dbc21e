package contain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/cgroup"
	"github.com/hoist-gg/hoist/internal/testwait"
	"golang.org/x/sys/unix"
)

// The test binary doubles as the init (Main); with first argument "contain-probe" it prints
// what Probe says; with first argument "contain-helper" it acts as a
// parent that starts a contained "sleep" with a parent-death signal, waits until it runs,
// prints its PID and exits.
func TestMain(m *testing.M) {
	Main()
	if len(os.Args) > 2 && os.Args[1] == "contain-helper" {
		os.Exit(helper(os.Args[2]))
	}
	if len(os.Args) > 1 && os.Args[1] == "contain-probe" {
		s := Probe()
		fmt.Printf("%v %s\n", s.Available, s.Reason)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func helper(root string) int {
	cmd := exec.Command("/bin/sh", "-c", "touch /local/started; exec sleep 600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := (Spec{UID: testUID, GID: testUID, Root: root}).Wrap(cmd); err != nil || cmd.Start() != nil {
		return 1
	}
	// exit only once the program runs, after the init changed the user (a real process:
	// polled, with a deadline)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(filepath.Join(root, "local", "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return 1
		}
	}
	os.Stdout.WriteString(strconv.Itoa(cmd.Process.Pid) + "\n")
	return 0
}

const testUID = 2000000123

func needRoot(t *testing.T) {
	t.Helper()
	if !Probe().Available {
		t.Skip("cannot contain here: " + Probe().Reason)
	}
}

// sandbox makes a sandbox directory with local/game, as hostd lays one out.
func sandbox(t testing.TB, uid int) string {
	t.Helper()
	root := t.TempDir()
	game := filepath.Join(root, "local", "game")
	if err := os.MkdirAll(game, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(root, "local"), uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(game, uid, uid); err != nil {
		t.Fatal(err)
	}
	return root
}

// run runs a shell script contained in root and returns its output lines as a set.
func run(t *testing.T, s Spec, script string) map[string]bool {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = "/local/game"
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := s.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	Started(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	lines := map[string]bool{}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		lines[sc.Text()] = true
	}
	return lines
}

// A contained process runs as its user with no groups, sees its sandbox at /local and the
// base system read-only, and cannot see Hoist's data or another sandbox, even files anyone
// could read, nor write anywhere but /local and /tmp.
func TestContainedView(t *testing.T) {
	needRoot(t)
	data := t.TempDir()
	secret := filepath.Join(data, "credentials.json")
	os.WriteFile(secret, []byte("secret"), 0o644)
	other := sandbox(t, testUID+1)
	os.WriteFile(filepath.Join(other, "local", "game", "other.txt"), []byte("other"), 0o644)
	root := sandbox(t, testUID)
	script := `
id -u; id -G; pwd
cat ` + secret + ` && echo LEAK-data
cat ` + other + `/local/game/other.txt && echo LEAK-other
ls ` + filepath.Dir(root) + ` && echo LEAK-tmp
for p in /x /etc/x /usr/x /dev/x /proc/x; do touch $p 2>/dev/null && echo wrote $p; done
touch /local/game/ok /tmp/ok /dev/shm/ok && echo wrote-ok
test -c /dev/null && echo devnull
ls / | tr '\n' ' '; echo
`
	got := run(t, Spec{UID: testUID, GID: testUID, Root: root}, script)
	for _, want := range []string{strconv.Itoa(testUID), "/local/game", "wrote-ok", "devnull"} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	if got["0"] || !got[strconv.Itoa(testUID)] {
		t.Errorf("groups or user wrong: %v", got)
	}
	for line := range got {
		if strings.HasPrefix(line, "LEAK") || strings.HasPrefix(line, "wrote /") {
			t.Errorf("contained process: %s", line)
		}
	}
	if !got["bin dev etc lib lib64 local proc sbin tmp usr "] && !got["bin dev etc lib local proc sbin tmp usr "] {
		t.Errorf("root holds more than the base system: %v", got)
	}
	if _, err := os.Stat(filepath.Join(root, "local", "game", "ok")); err != nil {
		t.Errorf("write to /local/game did not reach the sandbox: %v", err)
	}
}

// A sandbox reached through an absolute symbolic link works (the init resolves nothing
// itself: the host's tree is moved aside when it binds the sandbox).
func TestRootThroughSymlink(t *testing.T) {
	needRoot(t)
	root := sandbox(t, testUID)
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(root, link); err != nil {
		t.Fatal(err)
	}
	if got := run(t, Spec{UID: testUID, GID: testUID, Root: link}, "pwd"); !got["/local/game"] {
		t.Fatalf("through a link: %v", got)
	}
}

// A set-up failure (here: no local directory in the sandbox) ends the process with
// ExitSetupFailed and says why on stderr, before the program runs.
func TestSetupFailure(t *testing.T) {
	needRoot(t)
	cmd := exec.Command("/bin/sh", "-c", "echo ran")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := (Spec{UID: testUID, GID: testUID, Root: t.TempDir()}).Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != ExitSetupFailed || !strings.Contains(out.String(), "hoist contain: ") ||
		strings.Contains(out.String(), "ran") {
		t.Fatalf("err %v, output %q", err, out.String())
	}
}

// Wrap refuses root, relative paths, its own credentials, and binaries without Main.
func TestWrapRefuses(t *testing.T) {
	root := t.TempDir()
	cases := map[string]func() (Spec, *exec.Cmd){
		"uid 0":    func() (Spec, *exec.Cmd) { return Spec{UID: 0, GID: 1, Root: root}, exec.Command("/bin/true") },
		"relative": func() (Spec, *exec.Cmd) { return Spec{UID: 5, GID: 5, Root: "sb"}, exec.Command("/bin/true") },
		"credential": func() (Spec, *exec.Cmd) {
			c := exec.Command("/bin/true")
			c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 5}}
			return Spec{UID: 5, GID: 5, Root: root}, c
		},
		"cgroup": func() (Spec, *exec.Cmd) {
			c := exec.Command("/bin/true")
			c.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: 99}
			return Spec{UID: 5, GID: 5, Root: root}, c
		},
	}
	for name, mk := range cases {
		s, c := mk()
		if err := s.Wrap(c); err == nil {
			t.Errorf("%s: Wrap accepted", name)
		}
	}
	installed.Store(false)
	defer installed.Store(true)
	if err := (Spec{UID: 5, GID: 5, Root: root}).Wrap(exec.Command("/bin/true")); err == nil || !strings.Contains(err.Error(), "Main") {
		t.Errorf("Wrap without Main: %v", err)
	}
}

// The program is the process the caller started (same PID, leading its process group), so
// signalling the group reaches it; when its parent dies, the parent-death signal still
// fires although the user changed.
func TestSignals(t *testing.T) {
	needRoot(t)
	root := sandbox(t, testUID)
	cmd := exec.Command("/bin/sh", "-c", "echo started > /local/game/started; exec sleep 600")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := (Spec{UID: testUID, GID: testUID, Root: root}).Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, "the program runs", func() bool {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		return strings.HasPrefix(string(b), "sleep\x00600")
	})
	syscall.Kill(-pid, syscall.SIGTERM)
	if err := cmd.Wait(); err == nil || cmd.ProcessState.ExitCode() != -1 {
		t.Fatalf("after SIGTERM to the group: %v", err)
	}

	out, err := exec.Command(os.Args[0], "contain-helper", root).Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	orphan, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	testwait.Until(t, 10*time.Second, 10*time.Millisecond, "the orphan dies with its parent", func() bool {
		return orphan > 0 && !alive(orphan)
	})
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// A contained process joins the network namespace of its Spec.
func TestNetNS(t *testing.T) {
	needRoot(t)
	ns := exec.Command("/bin/sleep", "600")
	ns.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if err := ns.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { ns.Process.Kill(); ns.Wait() }()
	nsPath := "/proc/" + strconv.Itoa(ns.Process.Pid) + "/ns/net"
	want, _ := os.Readlink(nsPath)
	got := run(t, Spec{UID: testUID, GID: testUID, Root: sandbox(t, testUID), NetNS: nsPath}, "readlink /proc/self/ns/net")
	if !got[want] {
		t.Errorf("network namespace: want %s, got %v", want, got)
	}
}

// testGroup makes a control group in every hierarchy of the host (internal/cgroup's way),
// with a memory limit of 32 MiB, removed at the end of the test.
func testGroup(t testing.TB) *cgroup.Group {
	t.Helper()
	m, err := cgroup.New(cgroup.Config{Parent: "hoist-contain-test-" + strconv.Itoa(os.Getpid())})
	if err != nil {
		t.Skip("no cgroups here: ", err)
	}
	t.Cleanup(func() { m.Remove() })
	g, err := m.Create("i-test", cgroup.Limits{MemoryBytes: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// cgroups is what a Spec says of g.
func cgroups(g *cgroup.Group) []Cgroup {
	var out []Cgroup
	for _, d := range g.Dirs() {
		out = append(out, Cgroup{Dir: d.Path, V2: d.V2})
	}
	return out
}

// A contained process is in its group in every hierarchy of the host (v1 ones and cgroup2)
// when it runs the program, whether clone3 started it in the cgroup2 group or the init
// joined it itself; and the group's memory limit holds it.
func TestCgroups(t *testing.T) {
	needRoot(t)
	g := testGroup(t)
	t.Run("clone", func(t *testing.T) { checkCgroups(t, g) })
	t.Run("fallback", func(t *testing.T) {
		defer cloneState.Store(cloneState.Swap(cloneRefused)) // as where clone3 cannot
		checkCgroups(t, g)
	})
}

// checkCgroups runs a contained program in g and checks its /proc/self/cgroup, then that a
// program filling memory is killed at the limit, and counted.
func checkCgroups(t *testing.T, g *cgroup.Group) {
	s := Spec{UID: testUID, GID: testUID, Root: sandbox(t, testUID), Cgroups: cgroups(g)}
	got := run(t, s, "cat /proc/self/cgroup")
	suffix := "/" + filepath.Base(filepath.Dir(s.Cgroups[0].Dir)) + "/" + g.Name()
	in := map[bool]int{} // by "is the cgroup2 line"
	for line := range got {
		if strings.HasSuffix(line, suffix) {
			in[strings.HasPrefix(line, "0::")]++
		}
	}
	if in[false]+in[true] != len(s.Cgroups) || (in[true] == 1) != (g.UnifiedDir() != "") {
		// fatal: outside its memory group tail would fill the host's memory
		t.Fatalf("in %d of %d groups (cgroup2 %q): %v", in[false]+in[true], len(s.Cgroups), g.UnifiedDir(), got)
	}
	before, _ := g.OOMKills()
	cmd := exec.Command("/usr/bin/tail", "/dev/zero") // keeps its one endless line in memory
	if err := s.Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	err := cmd.Run()
	Started(cmd)
	if cmd.ProcessState == nil {
		t.Fatal(err)
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("tail past the memory limit: %v", err)
	}
	if n, err := g.OOMKills(); err != nil || n != before+1 {
		t.Errorf("OOM kills %d, %v; want %d", n, err, before+1)
	}
}

// With a cgroup2 group, Wrap has the command cloned into it (the init joins only the others)
// through a descriptor that Started closes.
func TestWrapStartsInCgroup2(t *testing.T) {
	needRoot(t)
	g := testGroup(t)
	if g.UnifiedDir() == "" {
		t.Skip("no cgroup2 here")
	}
	cmd := exec.Command("/bin/true")
	if err := (Spec{UID: testUID, GID: testUID, Root: t.TempDir(), Cgroups: cgroups(g)}).Wrap(cmd); err != nil {
		t.Fatal(err)
	}
	a := cmd.SysProcAttr
	if !a.UseCgroupFD && cloneState.Load() == cloneRefused {
		t.Skip("clone3 cannot start processes in cgroups here")
	}
	if !a.UseCgroupFD {
		t.Fatal("not cloned into the cgroup2 group")
	}
	fd := a.CgroupFD
	var l launch
	if err := json.Unmarshal([]byte(strings.TrimPrefix(cmd.Env[len(cmd.Env)-1], envInit+"=")), &l); err != nil {
		t.Fatal(err)
	}
	want := slices.DeleteFunc(cgroups(g), func(c Cgroup) bool { return c.V2 })
	if !slices.Equal(l.Spec.Cgroups, want) {
		t.Errorf("the init joins %v, want %v", l.Spec.Cgroups, want)
	}
	Started(cmd)
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != unix.EBADF || a.UseCgroupFD {
		t.Errorf("after Started: descriptor %d: %v; UseCgroupFD %v", fd, err, a.UseCgroupFD)
	}
}

// cloneVerdict settles on the errors that say whether clone3 can start a process in a group.
func TestCloneVerdict(t *testing.T) {
	for _, c := range []struct {
		err       error
		ok, final bool
	}{{syscall.EACCES, true, true}, {syscall.ENOSYS, false, true}, {syscall.EINVAL, false, true},
		{syscall.EPERM, false, true}, {syscall.EAGAIN, false, false}} {
		if ok, final := cloneVerdict(c.err); ok != c.ok || final != c.final {
			t.Errorf("%v: ok %v final %v", c.err, ok, final)
		}
	}
}

// Run as an ordinary user, Probe reports that processes cannot be contained, and why.
func TestProbeWithoutRoot(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Chmod(filepath.Dir(dir), 0o755) // the test's own temporary directory
	bin := filepath.Join(dir, "contain.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil || os.WriteFile(bin, b, 0o755) != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "contain-probe")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testUID, Gid: testUID, Groups: []uint32{}}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "false ") || !strings.Contains(string(out), "root") {
		t.Fatalf("Probe as uid %d: %v %s", testUID, err, out)
	}
}
