// Package supervisor launches and watches game server processes on one host, as a GameLift
// RuntimeConfiguration describes them: so many copies of each LaunchPath + Parameters, launched
// a few seconds apart, restarted when they exit, retired when the configuration shrinks, and
// terminated with a grace period (SIGTERM to the process group, then SIGKILL).
//
// It is pure process management: it knows nothing of fleets, tokens or the control plane.
// Whoever embeds it (the hoist agent, later the server's local instances) adds that through
// Hooks. Anything in Hoist may import it.
//
// Lifecycle of one process:
//
//	desired ─▶ Prestart hook ─▶ Env hook ─▶ start ─▶ Started hook ─▶ running
//	running ─(exits on its own)──────────────────────────────────▶ Exited hook ─▶ restart if still desired
//	running ─(Terminate/retire/Stop)─▶ SIGTERM ─(grace)─▶ SIGKILL ─▶ Exited hook
package supervisor

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"sort"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/internal/clock"
)

// MaxProcesses is GameLift's limit on concurrent server processes per compute: a runtime
// configuration asking for more is cut to this many.
const MaxProcesses = 50

// Defaults for Config fields left zero.
const (
	DefaultGracePeriod = 5 * time.Minute
	DefaultStaggerMin  = 1 * time.Second
	DefaultStaggerMax  = 3 * time.Second
)

// Termination reasons the supervisor itself uses; callers of Terminate choose their own.
const (
	ReasonRetired  = "retired"  // the runtime configuration no longer wants the process
	ReasonShutdown = "shutdown" // Stop or the Run context ended
)

// ServerProcess is one entry of a RuntimeConfiguration: run ConcurrentExecutions copies of
// LaunchPath with Parameters (split on spaces).
type ServerProcess struct {
	LaunchPath           string
	Parameters           string
	ConcurrentExecutions int
}

// Info describes a live process.
type Info struct {
	ID        string        // the process ID the supervisor gave it (a UUID)
	Spec      ServerProcess // the entry it was launched for
	PID       int           // OS process ID (also its process group ID)
	StartedAt time.Time
	// Terminating is true once the supervisor has sent SIGTERM.
	Terminating bool
}

// Exit describes a process that ended, or never started.
type Exit struct {
	Info
	EndedAt time.Time
	// Code is the exit status, or -1 when a signal ended the process or it never started.
	Code int
	// Signal names the signal that ended the process ("terminated", "killed"), if one did.
	Signal string
	// LaunchErr is set when the process could not be started (bad path, Prestart failed).
	LaunchErr error
	// Reason is empty when the process ended on its own, else the reason given to Terminate
	// (ReasonRetired, ReasonShutdown or the caller's).
	Reason string
	// Killed is true when the grace period ran out and the process group got SIGKILL.
	Killed bool
}

// Launch is a process about to start. Prestart hooks may change any field.
type Launch struct {
	ID   string
	Spec ServerProcess
	Path string   // executable
	Args []string // Parameters split on spaces
	Dir  string   // working directory
	Env  []string // KEY=VALUE pairs added to the agent's own environment
}

// Hooks let the embedder take part in every process's lifecycle. All are optional; they run
// on the supervisor's goroutine, so they must not block for long.
type Hooks struct {
	// Prestart runs before each launch and may adjust it; an error fails the launch (the
	// Exited hook then sees LaunchErr).
	Prestart func(ctx context.Context, l *Launch) error
	// Env returns environment variables (KEY=VALUE) to add for the launch.
	Env func(l *Launch) []string
	// Started runs after a process started.
	Started func(Info)
	// Exited runs after a process ended or failed to launch.
	Exited func(Exit)
	// Command runs once the command of a launch is built, just before it starts, and may
	// change it (to run it contained, or as another user); an error fails the launch.
	Command func(l *Launch, cmd *exec.Cmd) error
	// AfterStart runs once the command has started, or failed to, to release what Command
	// needed only for the start.
	AfterStart func(cmd *exec.Cmd)
}

// Config configures a Supervisor. Zero values take the defaults above.
type Config struct {
	Clock clock.Clock
	Hooks Hooks
	// GracePeriod is how long a terminated process has between SIGTERM and SIGKILL.
	GracePeriod time.Duration
	// StaggerMin and StaggerMax bound the random pause between two launches.
	StaggerMin, StaggerMax time.Duration
	// Max caps the number of processes (default and ceiling MaxProcesses).
	Max int
	// WorkDir resolves relative launch paths (default: the current directory).
	WorkDir string
	// Stdout and Stderr receive the processes' output (default: discarded).
	Stdout, Stderr *os.File
	// DieWithParent makes the kernel kill each process when the program that launched it dies
	// (Linux's parent-death signal), so that a server node's local instances end with it. (The
	// signal follows the launching thread; Go keeps its threads for the program's life.)
	DieWithParent bool
	Logger        *slog.Logger
	// NewID makes process IDs (default: random UUIDs). Rand returns [0,1) for the stagger.
	NewID func() string
	Rand  func() float64
}

// Supervisor keeps the desired set of server processes running. Create it with New, feed it
// configurations with SetConfig, and drive it with Run.
type Supervisor struct {
	cfg  Config
	wake chan struct{}
	done chan struct{}

	mu         sync.Mutex
	desired    []ServerProcess
	procs      map[string]*proc
	exited     []*proc // ended, not yet reported
	nextLaunch time.Time
	stopping   bool
}

// New returns a Supervisor with the defaults filled in. It launches nothing until Run.
func New(cfg Config) *Supervisor {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = DefaultGracePeriod
	}
	if cfg.StaggerMin <= 0 && cfg.StaggerMax <= 0 {
		cfg.StaggerMin, cfg.StaggerMax = DefaultStaggerMin, DefaultStaggerMax
	}
	if cfg.StaggerMax < cfg.StaggerMin {
		cfg.StaggerMax = cfg.StaggerMin
	}
	if cfg.Max <= 0 || cfg.Max > MaxProcesses {
		cfg.Max = MaxProcesses
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.NewString() }
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.Float64
	}
	return &Supervisor{
		cfg:   cfg,
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		procs: map[string]*proc{},
	}
}

// SetConfig replaces the desired set. Missing processes are launched (staggered); surplus
// ones are retired gracefully. Entries beyond a total of Max processes are ignored.
func (s *Supervisor) SetConfig(procs []ServerProcess) {
	s.mu.Lock()
	s.desired = append([]ServerProcess(nil), procs...)
	s.mu.Unlock()
	s.poke()
}

// Terminate asks the process with the given ID to stop: SIGTERM to its process group now,
// SIGKILL when the grace period ends. It reports false if no such live process exists or it
// is already terminating. If the configuration still wants the process, a replacement is
// launched once it has exited.
func (s *Supervisor) Terminate(id, reason string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[id]
	if p == nil || p.info.Terminating {
		return false
	}
	s.terminateLocked(p, reason, s.cfg.Clock.Now())
	s.poke()
	return true
}

// Stop begins shutdown: every process is terminated with ReasonShutdown and nothing new is
// launched. Run returns once all have ended.
func (s *Supervisor) Stop() {
	s.mu.Lock()
	s.stopLocked()
	s.mu.Unlock()
	s.poke()
}

// Done is closed when Run has returned.
func (s *Supervisor) Done() <-chan struct{} { return s.done }

// Processes returns the live processes, oldest first.
func (s *Supervisor) Processes() []Info {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Info, 0, len(s.procs))
	for _, p := range s.procs {
		out = append(out, p.info)
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].StartedAt.Equal(out[j].StartedAt) {
			return out[i].StartedAt.Before(out[j].StartedAt)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Run launches, watches and restarts processes until Stop is called or ctx ends; either way it
// then terminates every process (SIGTERM, grace period, SIGKILL) and returns when none is
// left. Run must be called once.
func (s *Supervisor) Run(ctx context.Context) error {
	defer close(s.done)
	cancelled := ctx.Done()
	for {
		wait, idle, finished := s.Step(ctx)
		if finished {
			return nil
		}
		var timer <-chan time.Time
		if !idle {
			if wait <= 0 {
				continue
			}
			timer = s.cfg.Clock.After(wait)
		}
		select {
		case <-s.wake:
		case <-timer:
		case <-cancelled:
			cancelled = nil
			s.Stop()
		}
	}
}

func (s *Supervisor) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
