package supervisor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStaggeredLaunchPerConfig steps the supervisor by hand on the fake clock: three processes
// are wanted, the first starts at once and the others 2 s apart (the stagger is 1-3 s and the
// test's random source gives its midpoint), each with its own ID and the Env hook's variables.
func TestStaggeredLaunchPerConfig(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Hooks.Env = func(l *Launch) []string { return []string{"HOIST_TEST_VALUE=" + l.ID} }
	})
	h.sup.SetConfig([]ServerProcess{h.spec("sleep", 3)})
	ctx := context.Background()
	step := func(wantLive int, wantWait time.Duration) {
		t.Helper()
		wait, idle, _ := h.sup.Step(ctx)
		if n := len(h.live()); n != wantLive {
			t.Fatalf("at +%v: %d processes, want %d", h.fc.Now().Sub(epoch), n, wantLive)
		}
		if wantWait == 0 && !idle || wantWait != 0 && (idle || wait != wantWait) {
			t.Fatalf("at +%v: wait %v idle %v, want %v", h.fc.Now().Sub(epoch), wait, idle, wantWait)
		}
	}
	step(1, 2*time.Second)
	h.fc.Advance(1900 * time.Millisecond)
	step(1, 100*time.Millisecond)
	h.fc.Advance(100 * time.Millisecond)
	step(2, 2*time.Second)
	h.fc.Advance(2 * time.Second)
	step(3, 0) // all wanted processes run: nothing to wait for
	seen := map[string]bool{}
	for _, p := range h.live() {
		eventually(t, "process ready", func() bool { return ready(h.dir, p.PID) })
		body, _ := os.ReadFile(filepath.Join(h.dir, strconv.Itoa(p.PID)+".ready"))
		if string(body) != p.ID || seen[p.ID] || len(p.ID) != 36 {
			t.Errorf("process %d: ID %q, environment saw %q", p.PID, p.ID, body)
		}
		seen[p.ID] = true
	}
}

// TestExitIsReportedAndRestarted: a process exiting with code 3 is reported with that code and
// launched again once the stagger allows.
func TestExitIsReportedAndRestarted(t *testing.T) {
	h := newHarness(t, nil)
	h.sup.SetConfig([]ServerProcess{h.spec("exit 3", 1)})
	ctx := context.Background()
	h.sup.Step(ctx)
	eventually(t, "the exit", func() bool {
		h.sup.Step(ctx)
		_, exits := h.rec.snapshot()
		return len(exits) == 1
	})
	_, exits := h.rec.snapshot()
	if e := exits[0]; e.Code != 3 || e.Reason != "" || e.Signal != "" || e.LaunchErr != nil {
		t.Fatalf("exit = %+v, want code 3 on its own", e)
	}
	h.sup.Step(ctx)
	if started, _ := h.rec.snapshot(); len(started) != 1 {
		t.Fatalf("relaunched before the stagger: %d launches", len(started))
	}
	h.fc.Advance(2 * time.Second)
	h.sup.Step(ctx)
	if started, _ := h.rec.snapshot(); len(started) != 2 || started[1].ID == started[0].ID {
		t.Fatalf("launches after the stagger: %+v", started)
	}
}

// TestLaunchFailureIsReported: a launch path that does not exist is an Exit with LaunchErr.
func TestLaunchFailureIsReported(t *testing.T) {
	h := newHarness(t, nil)
	h.sup.SetConfig([]ServerProcess{{LaunchPath: filepath.Join(h.dir, "missing"), ConcurrentExecutions: 1}})
	h.sup.Step(context.Background())
	_, exits := h.rec.snapshot()
	if len(exits) != 1 || exits[0].LaunchErr == nil || exits[0].Code != -1 {
		t.Fatalf("exits = %+v, want one launch failure", exits)
	}
	if n := len(h.live()); n != 0 {
		t.Fatalf("%d live processes", n)
	}
}

// TestAfterStartSeesEveryStart: the AfterStart hook gets the command once its start returned,
// whether it started (a process) or not (a missing launch path).
func TestAfterStartSeesEveryStart(t *testing.T) {
	var started []bool
	h := newHarness(t, func(c *Config) {
		c.Hooks.AfterStart = func(cmd *exec.Cmd) { started = append(started, cmd.Process != nil) }
	})
	h.sup.SetConfig([]ServerProcess{h.spec("sleep", 1), {LaunchPath: filepath.Join(h.dir, "missing"), ConcurrentExecutions: 1}})
	h.sup.Step(context.Background())
	h.fc.Advance(2 * time.Second) // the stagger
	h.sup.Step(context.Background())
	if !slices.Equal(started, []bool{true, false}) {
		t.Fatalf("AfterStart saw started %v, want [true false]", started)
	}
}

// TestKilledProcessIsRestarted kills a running process from outside; the supervisor reports
// the signal and starts a replacement with a new ID.
func TestKilledProcessIsRestarted(t *testing.T) {
	h := newHarness(t, nil)
	h.sup.SetConfig([]ServerProcess{h.spec("sleep", 2)})
	h.run()
	advanceUntil(t, h.fc, 500*time.Millisecond, "two processes", func() bool { return len(h.live()) == 2 })
	victim := h.live()[0]
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	advanceUntil(t, h.fc, 500*time.Millisecond, "a replacement", func() bool {
		live := h.live()
		return len(live) == 2 && live[0].ID != victim.ID && live[1].ID != victim.ID
	})
	_, exits := h.rec.snapshot()
	if len(exits) != 1 || exits[0].ID != victim.ID || exits[0].Signal != "killed" || exits[0].Reason != "" {
		t.Fatalf("exits = %+v, want the victim killed by a signal", exits)
	}
}

// TestConfigChangeAddsAndRetires shrinks one entry and adds another: the surplus process is
// retired with SIGTERM, the new entry's processes are launched.
func TestConfigChangeAddsAndRetires(t *testing.T) {
	h := newHarness(t, nil)
	a := h.spec("sleep", 2)
	h.sup.SetConfig([]ServerProcess{a})
	h.run()
	advanceUntil(t, h.fc, 500*time.Millisecond, "two A processes", func() bool { return len(h.live()) == 2 })
	b := h.spec("sleep", 2)
	b.Parameters += " b"
	a.ConcurrentExecutions = 1
	h.sup.SetConfig([]ServerProcess{a, b})
	count := func() (na, nb int) {
		for _, p := range h.live() {
			if strings.HasSuffix(p.Spec.Parameters, " b") {
				nb++
			} else {
				na++
			}
		}
		return
	}
	advanceUntil(t, h.fc, 500*time.Millisecond, "one A and two B", func() bool {
		na, nb := count()
		return na == 1 && nb == 2
	})
	_, exits := h.rec.snapshot()
	if len(exits) != 1 || exits[0].Reason != ReasonRetired || exits[0].Signal != "terminated" || exits[0].Killed {
		t.Fatalf("exits = %+v, want one A retired by SIGTERM", exits)
	}
}

// TestShutdownGracePeriod: Stop sends SIGTERM; a process that honours it ends at once, one that
// ignores it is SIGKILLed when the grace period has passed on the clock, not before.
func TestShutdownGracePeriod(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GracePeriod = 5 * time.Minute })
	h.sup.SetConfig([]ServerProcess{h.spec("sleep", 1), h.spec("ignore-term", 1)})
	h.run()
	advanceUntil(t, h.fc, 500*time.Millisecond, "both processes", func() bool { return len(h.live()) == 2 })
	for _, p := range h.live() {
		eventually(t, "process ready", func() bool { return ready(h.dir, p.PID) })
	}
	stopAt := h.fc.Now()
	h.sup.Stop()
	eventually(t, "the polite process to end", func() bool { _, e := h.rec.snapshot(); return len(e) == 1 })
	_, exits := h.rec.snapshot()
	if e := exits[0]; e.Reason != ReasonShutdown || e.Signal != "terminated" || e.Killed {
		t.Fatalf("first exit = %+v, want SIGTERM on shutdown", e)
	}
	stubborn := h.live()
	if len(stubborn) != 1 || !alive(stubborn[0].PID) || !stubborn[0].Terminating {
		t.Fatalf("the SIGTERM-ignoring process should still run, terminating: %+v", stubborn)
	}
	advanceUntil(t, h.fc, 30*time.Second, "shutdown", func() bool {
		select {
		case <-h.sup.Done():
			return true
		default:
			return false
		}
	})
	_, exits = h.rec.snapshot()
	e := exits[1]
	if !e.Killed || e.Signal != "killed" || e.EndedAt.Sub(stopAt) < 5*time.Minute {
		t.Fatalf("second exit = %+v (after %v), want SIGKILL after the 5 min grace", e, e.EndedAt.Sub(stopAt))
	}
	if alive(e.PID) {
		t.Fatal("killed process still alive")
	}
}

// TestChildrenDieWithTheirServer: the signals go to the process group, so a child process
// that ignores SIGTERM does not outlive shutdown.
func TestChildrenDieWithTheirServer(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.GracePeriod = time.Minute })
	h.sup.SetConfig([]ServerProcess{h.spec("child", 1)})
	h.run()
	advanceUntil(t, h.fc, 500*time.Millisecond, "the process", func() bool { return len(h.live()) == 1 })
	leader := h.live()[0].PID
	eventually(t, "process ready", func() bool { return ready(h.dir, leader) })
	body, err := os.ReadFile(filepath.Join(h.dir, strconv.Itoa(leader)+".child"))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(body))
	if !alive(child) {
		t.Fatalf("child %d not running", child)
	}
	h.close()
	eventually(t, "the child to die", func() bool { return !alive(child) })
}

// TestWantIsCappedAtMax: a configuration asking for more than MaxProcesses gets MaxProcesses.
func TestWantIsCappedAtMax(t *testing.T) {
	s := New(Config{})
	s.SetConfig([]ServerProcess{
		{LaunchPath: "/a", ConcurrentExecutions: 40},
		{LaunchPath: "/b", ConcurrentExecutions: 30},
		{LaunchPath: "/c", ConcurrentExecutions: 5},
	})
	want := s.wantLocked()
	if want[ServerProcess{LaunchPath: "/a"}] != 40 || want[ServerProcess{LaunchPath: "/b"}] != 10 || len(want) != 2 {
		t.Fatalf("want = %v, want a:40 b:10", want)
	}
}
