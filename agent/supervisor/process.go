package supervisor

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// proc is one launched server process.
type proc struct {
	info   Info
	cmd    *exec.Cmd
	reason string    // why it is terminating
	killAt time.Time // end of its grace period
	killed bool      // SIGKILL sent
	exit   Exit      // filled in by the waiter
}

func (p *proc) key() ServerProcess {
	return ServerProcess{LaunchPath: p.info.Spec.LaunchPath, Parameters: p.info.Spec.Parameters}
}

// signalGroup signals the process group the process leads, so its children get it too.
func (p *proc) signalGroup(sig syscall.Signal) {
	if p.info.PID > 0 {
		_ = syscall.Kill(-p.info.PID, sig)
	}
}

func sortNewestFirst(ps []*proc) {
	sort.Slice(ps, func(i, j int) bool {
		if !ps[i].info.StartedAt.Equal(ps[j].info.StartedAt) {
			return ps[i].info.StartedAt.After(ps[j].info.StartedAt)
		}
		return ps[i].info.ID > ps[j].info.ID
	})
}

// start runs the hooks and starts the process; a failure is reported as an Exit.
func (s *Supervisor) start(ctx context.Context, l *Launch, now time.Time) {
	l.Path = s.resolve(l.Spec.LaunchPath)
	l.Args = strings.Fields(l.Spec.Parameters)
	l.Dir = filepath.Dir(l.Path)
	if !filepath.IsAbs(l.Path) {
		l.Dir = s.cfg.WorkDir
	}
	cmd, err := s.prepare(ctx, l)
	if err == nil {
		err = cmd.Start()
		if h := s.cfg.Hooks.AfterStart; h != nil {
			h(cmd)
		}
	}
	info := Info{ID: l.ID, Spec: l.Spec, StartedAt: now}
	if err != nil {
		s.cfg.Logger.Error("server process failed to launch", "id", l.ID, "path", l.Path, "err", err)
		s.report([]Exit{{Info: info, EndedAt: now, Code: -1, LaunchErr: err}})
		return
	}
	info.PID = cmd.Process.Pid
	p := &proc{info: info, cmd: cmd}
	s.mu.Lock()
	s.procs[l.ID] = p
	if s.stopping { // Stop raced with this launch
		s.terminateLocked(p, ReasonShutdown, now)
	}
	s.mu.Unlock()
	s.cfg.Logger.Info("server process started", "id", l.ID, "pid", info.PID, "path", l.Path)
	go s.wait(p)
	if s.cfg.Hooks.Started != nil {
		s.cfg.Hooks.Started(info)
	}
}

// resolve makes a relative launch path absolute against WorkDir; a bare name is looked up in
// PATH.
func (s *Supervisor) resolve(path string) string {
	if filepath.IsAbs(path) || !strings.ContainsAny(path, `/\`) {
		return path
	}
	dir := s.cfg.WorkDir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return filepath.Join(dir, path)
}

// prepare runs Prestart and Env and builds the command in its own process group.
func (s *Supervisor) prepare(ctx context.Context, l *Launch) (*exec.Cmd, error) {
	if h := s.cfg.Hooks.Prestart; h != nil {
		if err := h(ctx, l); err != nil {
			return nil, fmt.Errorf("prestart: %w", err)
		}
	}
	if h := s.cfg.Hooks.Env; h != nil {
		l.Env = append(l.Env, h(l)...)
	}
	if l.Path == "" {
		return nil, errors.New("empty launch path")
	}
	cmd := exec.Command(l.Path, l.Args...)
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	cmd.Dir = l.Dir
	cmd.Env = append(os.Environ(), l.Env...)
	cmd.Stdout, cmd.Stderr = s.cfg.Stdout, s.cfg.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.cfg.DieWithParent {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
	if h := s.cfg.Hooks.Command; h != nil {
		if err := h(l, cmd); err != nil {
			return nil, err
		}
	}
	return cmd, nil
}

// wait blocks until the process ends, records how, and wakes the loop. Whatever the process
// left behind in its process group is killed, so no child outlives its server process.
func (s *Supervisor) wait(p *proc) {
	err := p.cmd.Wait()
	p.signalGroup(sigKill)
	s.mu.Lock()
	e := Exit{Info: p.info, EndedAt: s.cfg.Clock.Now(), Code: -1, Reason: p.reason, Killed: p.killed}
	if st := p.cmd.ProcessState; st != nil {
		e.Code = st.ExitCode()
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			e.Signal = ws.Signal().String()
		}
	} else if err != nil {
		e.LaunchErr = err
	}
	p.exit = e
	s.exited = append(s.exited, p)
	s.mu.Unlock()
	s.poke()
}
