package supervisor

import (
	"context"
	"time"
)

// Step runs one pass of the supervisor loop at the clock's current time: it reports processes
// that ended, SIGKILLs those whose grace period ran out, retires surplus processes and launches
// at most one missing process (launches are staggered). It returns how long to wait before the
// next pass (idle: only an event can make work), and finished once a shutdown has completed.
// Run calls it; tests may call it directly instead of Run to step the supervisor by hand.
func (s *Supervisor) Step(ctx context.Context) (wait time.Duration, idle, finished bool) {
	now := s.cfg.Clock.Now()
	s.report(s.takeExited())
	s.mu.Lock()
	s.enforceGraceLocked(now)
	if !s.stopping {
		s.retireSurplusLocked(now)
	}
	launch := s.nextLaunchLocked(now)
	s.mu.Unlock()
	if launch != nil {
		s.start(ctx, launch, now)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping && len(s.procs) == 0 && len(s.exited) == 0 {
		return 0, true, true
	}
	if len(s.exited) > 0 {
		return 0, false, false
	}
	return s.nextWakeLocked(now)
}

// want counts the processes the configuration asks for, per entry, capped at Max in total.
func (s *Supervisor) wantLocked() map[ServerProcess]int {
	want := map[ServerProcess]int{}
	total := 0
	for _, sp := range s.desired {
		n := min(sp.ConcurrentExecutions, s.cfg.Max-total)
		if n <= 0 || sp.LaunchPath == "" {
			continue
		}
		key := ServerProcess{LaunchPath: sp.LaunchPath, Parameters: sp.Parameters}
		want[key] += n
		total += n
	}
	return want
}

// activeLocked returns the live, not terminating processes per configuration entry, newest
// first.
func (s *Supervisor) activeLocked() map[ServerProcess][]*proc {
	active := map[ServerProcess][]*proc{}
	for _, p := range s.procs {
		if !p.info.Terminating {
			active[p.key()] = append(active[p.key()], p)
		}
	}
	for _, ps := range active {
		sortNewestFirst(ps)
	}
	return active
}

// retireSurplusLocked terminates the newest processes of every entry that has too many.
func (s *Supervisor) retireSurplusLocked(now time.Time) {
	want := s.wantLocked()
	for key, ps := range s.activeLocked() {
		for i := 0; i < len(ps)-want[key]; i++ {
			s.terminateLocked(ps[i], ReasonRetired, now)
		}
	}
}

// nextLaunchLocked picks the next missing process if a launch is due, in configuration order.
func (s *Supervisor) nextLaunchLocked(now time.Time) *Launch {
	if s.stopping || now.Before(s.nextLaunch) {
		return nil
	}
	key, ok := s.missingLocked()
	if !ok {
		return nil
	}
	s.nextLaunch = now.Add(s.stagger())
	l := &Launch{ID: s.cfg.NewID(), Spec: key}
	for _, sp := range s.desired {
		if sp.LaunchPath == key.LaunchPath && sp.Parameters == key.Parameters {
			l.Spec = sp
			break
		}
	}
	return l
}

// missingLocked returns the first configuration entry with fewer processes than it wants.
func (s *Supervisor) missingLocked() (ServerProcess, bool) {
	want := s.wantLocked()
	active := s.activeLocked()
	total := 0
	for _, ps := range active {
		total += len(ps)
	}
	if total >= s.cfg.Max {
		return ServerProcess{}, false
	}
	for _, sp := range s.desired {
		key := ServerProcess{LaunchPath: sp.LaunchPath, Parameters: sp.Parameters}
		if len(active[key]) < want[key] {
			return key, true
		}
	}
	return ServerProcess{}, false
}

func (s *Supervisor) stagger() time.Duration {
	span := s.cfg.StaggerMax - s.cfg.StaggerMin
	return s.cfg.StaggerMin + time.Duration(float64(span)*s.cfg.Rand())
}

// nextWakeLocked is the earliest of the next due launch and the next grace-period deadline.
func (s *Supervisor) nextWakeLocked(now time.Time) (time.Duration, bool, bool) {
	var next time.Time
	if _, missing := s.missingLocked(); missing && !s.stopping {
		next = s.nextLaunch
	}
	for _, p := range s.procs {
		if p.info.Terminating && !p.killed && (next.IsZero() || p.killAt.Before(next)) {
			next = p.killAt
		}
	}
	if next.IsZero() {
		return 0, true, false
	}
	return next.Sub(now), false, false
}

func (s *Supervisor) stopLocked() {
	if s.stopping {
		return
	}
	s.stopping = true
	now := s.cfg.Clock.Now()
	for _, p := range s.procs {
		if !p.info.Terminating {
			s.terminateLocked(p, ReasonShutdown, now)
		}
	}
}

func (s *Supervisor) terminateLocked(p *proc, reason string, now time.Time) {
	p.info.Terminating = true
	p.reason = reason
	p.killAt = now.Add(s.cfg.GracePeriod)
	s.cfg.Logger.Info("terminating server process", "id", p.info.ID, "pid", p.info.PID, "reason", reason)
	p.signalGroup(sigTerm)
}

func (s *Supervisor) enforceGraceLocked(now time.Time) {
	for _, p := range s.procs {
		if p.info.Terminating && !p.killed && !now.Before(p.killAt) {
			p.killed = true
			s.cfg.Logger.Warn("grace period over, killing server process", "id", p.info.ID, "pid", p.info.PID)
			p.signalGroup(sigKill)
		}
	}
}

// takeExited removes the processes whose exit the waiters recorded.
func (s *Supervisor) takeExited() []Exit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Exit
	for _, p := range s.exited {
		delete(s.procs, p.info.ID)
		out = append(out, p.exit)
	}
	s.exited = nil
	return out
}

func (s *Supervisor) report(exits []Exit) {
	for _, e := range exits {
		s.cfg.Logger.Info("server process ended", "id", e.ID, "pid", e.PID, "code", e.Code,
			"signal", e.Signal, "reason", e.Reason, "killed", e.Killed, "launch_error", e.LaunchErr)
		if s.cfg.Hooks.Exited != nil {
			s.cfg.Hooks.Exited(e)
		}
	}
}
