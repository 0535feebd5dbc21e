package supervisor

import (
	"context"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// The test binary doubles as the game server: run with first argument "hoist-helper" it acts
// out the mode named by the second argument instead of running tests.
//
//	hoist-helper sleep DIR        write DIR/<pid>.ready, then wait to be signalled
//	hoist-helper ignore-term DIR  ignore SIGTERM, write DIR/<pid>.ready, wait
//	hoist-helper exit CODE        exit at once with CODE
//	hoist-helper child DIR        start a child that ignores SIGTERM, write DIR/<pid>.child
//	                              with its PID, then write DIR/<pid>.ready and wait
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "hoist-helper" {
		os.Exit(helper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

func helper(mode string, args []string) int {
	switch mode {
	case "exit":
		code, _ := strconv.Atoi(args[0])
		return code
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "child":
		signal.Ignore(syscall.SIGTERM)
		c := exec.Command(os.Args[0], "hoist-helper", "ignore-term", args[0])
		if err := c.Start(); err != nil {
			return 3
		}
		writeFile(args[0], ".child", strconv.Itoa(c.Process.Pid))
	}
	writeFile(args[0], ".ready", os.Getenv("HOIST_TEST_VALUE"))
	select {}
}

func writeFile(dir, suffix, body string) {
	name := filepath.Join(dir, strconv.Itoa(os.Getpid())+suffix)
	_ = os.WriteFile(name+".tmp", []byte(body), 0o644)
	_ = os.Rename(name+".tmp", name)
}

// self is the path of the test binary.
func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// recorder collects what the hooks see.
type recorder struct {
	mu      sync.Mutex
	started []Info
	exits   []Exit
}

func (r *recorder) hooks() Hooks {
	return Hooks{
		Started: func(i Info) { r.mu.Lock(); r.started = append(r.started, i); r.mu.Unlock() },
		Exited:  func(e Exit) { r.mu.Lock(); r.exits = append(r.exits, e); r.mu.Unlock() },
	}
}

func (r *recorder) snapshot() ([]Info, []Exit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Info(nil), r.started...), append([]Exit(nil), r.exits...)
}

// eventually polls cond until it holds or a real-time deadline passes (it waits on real OS
// processes, not on the supervisor's clock).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 20*time.Second, 5*time.Millisecond, what, cond)
}

// advanceUntil moves the fake clock forward in steps until cond holds, giving the supervisor
// goroutine and the OS processes real time to react between steps.
func advanceUntil(t *testing.T, fc *clock.Fake, step time.Duration, what string, cond func() bool) {
	t.Helper()
	testwait.Until(t, 20*time.Second, 2*time.Millisecond, what, func() bool {
		if cond() {
			return true
		}
		fc.Advance(step)
		return false
	})
}

// alive reports whether pid is a running (not zombie) process.
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no procfs: trust kill(0)
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func ready(dir string, pid int) bool {
	_, err := os.Stat(filepath.Join(dir, strconv.Itoa(pid)+".ready"))
	return err == nil
}

// harness runs a supervisor on a fake clock and stops it at the end of the test, checking
// that nothing it started is left running.
type harness struct {
	t   *testing.T
	fc  *clock.Fake
	rec *recorder
	sup *Supervisor
	dir string
	bin string
	ran chan error
}

func newHarness(t *testing.T, tweak func(*Config)) *harness {
	h := &harness{t: t, fc: clock.NewFake(epoch), rec: &recorder{}, dir: t.TempDir(), bin: self(t)}
	cfg := Config{Clock: h.fc, Hooks: h.rec.hooks(), Rand: func() float64 { return 0.5 }}
	if tweak != nil {
		tweak(&cfg)
	}
	h.sup = New(cfg)
	t.Cleanup(h.close)
	return h
}

func (h *harness) run() {
	h.ran = make(chan error, 1)
	go func() { h.ran <- h.sup.Run(context.Background()) }()
}

// spec is a RuntimeConfiguration entry running the helper in mode.
func (h *harness) spec(mode string, n int) ServerProcess {
	return ServerProcess{LaunchPath: h.bin, Parameters: "hoist-helper " + mode + " " + h.dir, ConcurrentExecutions: n}
}

func (h *harness) live() []Info { return h.sup.Processes() }

// close stops the supervisor, lets any grace period pass, and fails if a process survived.
func (h *harness) close() {
	h.sup.Stop()
	if h.ran == nil {
		h.run()
	}
	advanceUntil(h.t, h.fc, time.Minute, "supervisor shutdown", func() bool {
		select {
		case <-h.sup.Done():
			return true
		default:
			return false
		}
	})
	started, _ := h.rec.snapshot()
	for _, i := range started {
		if i.PID > 0 && alive(i.PID) {
			_ = syscall.Kill(-i.PID, syscall.SIGKILL)
			h.t.Errorf("process %d (%s) still running after shutdown", i.PID, i.ID)
		}
	}
}
