package agent

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/internal/clock"
)

// Game session logs: the agent learns a process's LogPaths (NotifyProcessRegistered) and the
// game sessions it activates (NotifyGameSessionActivated); when the process exits it zips the
// files at those paths and uploads the zip for each of those sessions, retrying on failure.

// MaxLogBytes caps the uncompressed files of one upload: files that would take it over are
// left out (GameLift does not save logs over its per-session limit; the server's cap is the
// same, gamelift.MaxGameSessionLogBytes).
const MaxLogBytes = 1 << 30

// Retry schedule of log uploads.
const (
	logRetryMin      = 1 * time.Second
	logRetryMax      = 60 * time.Second
	logAttempts      = 10
	logDrainDeadline = 30 * time.Second // how long a stopping agent waits for uploads
)

// ErrLogRefused: the control plane will not take this log (unknown session, bad upload); the
// upload is not retried.
var ErrLogRefused = errors.New("log refused")

// LogUpload is one game session's log zip on its way to the control plane.
type LogUpload struct {
	FleetID, ComputeName string
	GameSessionID        string
	AuthToken            string
	// Zip is the file holding the zip.
	Zip string
}

// LogUploader is implemented by control planes that take game session logs (Remote does).
type LogUploader interface {
	UploadGameSessionLog(ctx context.Context, u LogUpload) error
}

// processLogs is what the agent knows of one live process's logs.
type processLogs struct {
	dir      string
	paths    []string
	sessions []string
}

// logShipper tracks processes' log paths and game sessions and uploads their logs.
type logShipper struct {
	clk     clock.Clock
	log     *slog.Logger
	up      LogUploader
	compute Compute
	token   func() string
	quit    <-chan struct{} // closed when the agent's Run returns

	mu    sync.Mutex
	procs map[string]*processLogs
	wg    sync.WaitGroup
}

func newLogShipper(clk clock.Clock, log *slog.Logger, up LogUploader, c Compute, token func() string, quit <-chan struct{}) *logShipper {
	return &logShipper{clk: clk, log: log, up: up, compute: c, token: token, quit: quit, procs: map[string]*processLogs{}}
}

// launched starts tracking a process that runs in dir.
func (s *logShipper) launched(id, dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.procs[id] = &processLogs{dir: dir}
}

// observe notes LogPaths and activated game sessions from the control plane's messages.
func (s *logShipper) observe(m Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.procs[m.ProcessID]
	if p == nil {
		return
	}
	switch m.Action {
	case ActionNotifyProcessRegistered:
		p.paths = m.LogPaths
	case ActionNotifyGameSessionActivated:
		if m.GameSessionID != "" {
			p.sessions = append(p.sessions, m.GameSessionID)
		}
	}
}

// exited stops tracking a process and, if it hosted game sessions and has log paths, zips
// and uploads its logs in the background.
func (s *logShipper) exited(id string) {
	s.mu.Lock()
	p := s.procs[id]
	delete(s.procs, id)
	s.mu.Unlock()
	if p == nil || len(p.sessions) == 0 || len(p.paths) == 0 {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.ship(id, p)
	}()
}

func (s *logShipper) ship(id string, p *processLogs) {
	zipFile, n, err := zipLogs(p.dir, p.paths, MaxLogBytes, s.log)
	if err != nil {
		s.log.Error("zip server process logs", "id", id, "err", err)
		return
	}
	defer os.Remove(zipFile)
	if n == 0 {
		s.log.Info("server process left no log files", "id", id, "log_paths", p.paths)
		return
	}
	for _, gs := range p.sessions {
		s.uploadWithRetry(LogUpload{FleetID: s.compute.FleetID, ComputeName: s.compute.ComputeName,
			GameSessionID: gs, Zip: zipFile})
	}
}

// uploadWithRetry uploads u, retrying failures other than ErrLogRefused with backoff, at most
// logAttempts times, and gives up when the agent stops.
func (s *logShipper) uploadWithRetry(u LogUpload) {
	delay := logRetryMin
	for attempt := 1; ; attempt++ {
		u.AuthToken = s.token()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		err := s.up.UploadGameSessionLog(ctx, u)
		cancel()
		if err == nil {
			s.log.Info("game session log uploaded", "game_session", u.GameSessionID)
			return
		}
		if errors.Is(err, ErrLogRefused) || attempt >= logAttempts {
			s.log.Error("game session log upload failed; giving up", "game_session", u.GameSessionID, "attempts", attempt, "err", err)
			return
		}
		s.log.Warn("game session log upload failed", "game_session", u.GameSessionID, "err", err, "retry_in", delay)
		select {
		case <-s.clk.After(delay):
		case <-s.quit:
			return
		}
		delay = min(2*delay, logRetryMax)
	}
}

// drain waits until the uploads under way finish, or logDrainDeadline passes.
func (s *logShipper) drain() {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-s.clk.After(logDrainDeadline):
		s.log.Warn("stopping with game session log uploads unfinished")
	}
}

// zipLogs writes the files at paths (relative ones resolved against dir; directories taken
// whole; missing ones skipped) into a temporary zip and returns its name and how many files
// it holds. Files that would take the total over limit bytes are left out.
func zipLogs(dir string, paths []string, limit int64, log *slog.Logger) (string, int, error) {
	f, err := os.CreateTemp("", "hoist-logs-*.zip")
	if err != nil {
		return "", 0, err
	}
	zw := zip.NewWriter(f)
	z := &zipper{zw: zw, dir: dir, left: limit, log: log, seen: map[string]bool{}}
	for _, p := range paths {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err = z.addPath(filepath.Clean(p)); err != nil {
			break
		}
	}
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return f.Name(), z.files, nil
}

type zipper struct {
	zw    *zip.Writer
	dir   string
	left  int64
	files int
	log   *slog.Logger
	seen  map[string]bool
}

func (z *zipper) addPath(p string) error {
	return filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			z.log.Warn("log path unreadable", "path", path, "err", err)
			return nil
		}
		if !d.Type().IsRegular() || z.seen[path] {
			return nil
		}
		z.seen[path] = true
		return z.addFile(path)
	})
}

func (z *zipper) addFile(path string) error {
	src, err := os.Open(path)
	if err != nil {
		z.log.Warn("log file unreadable", "path", path, "err", err)
		return nil
	}
	defer src.Close()
	st, err := src.Stat()
	if err != nil {
		return nil
	}
	if st.Size() > z.left {
		z.log.Warn("log file left out: over the size limit", "path", path, "size", st.Size())
		return nil
	}
	w, err := z.zw.CreateHeader(&zip.FileHeader{Name: z.entryName(path), Method: zip.Deflate, Modified: st.ModTime()})
	if err != nil {
		return err
	}
	n, err := io.Copy(w, io.LimitReader(src, z.left)) // a file still growing stops at the limit
	z.left -= n
	z.files++
	return err
}

// entryName is a file's name in the zip: relative to the working directory when inside it,
// else its absolute path without the leading separator.
func (z *zipper) entryName(path string) string {
	if rel, err := filepath.Rel(z.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return strings.TrimPrefix(filepath.ToSlash(path), "/")
}

// UploadGameSessionLog PUTs the zip to <Endpoint>/hoist/logs/ with the compute auth token,
// on the node that answered last, moving on while nodes do not answer.
func (r *Remote) UploadGameSessionLog(ctx context.Context, u LogUpload) error {
	var err error
	for _, i := range r.rot.order() {
		var answered bool
		if answered, err = uploadLog(ctx, strings.TrimSuffix(r.endpoints[i], "/"), u); answered {
			r.rot.worked(i)
			return err
		}
		r.log.Warn("log upload: server did not answer; trying the next", "server", r.endpoints[i], "err", err)
	}
	return err
}

// uploadLog PUTs the zip to one node; answered reports whether the node answered (with a
// status below 500).
func uploadLog(ctx context.Context, base string, u LogUpload) (answered bool, err error) {
	f, err := os.Open(u.Zip)
	if err != nil {
		return true, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return true, err
	}
	q := url.Values{"FleetId": {u.FleetID}, "ComputeName": {u.ComputeName}, "GameSessionId": {u.GameSessionID}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, base+"/hoist/logs/?"+q.Encode(), f)
	if err != nil {
		return true, err
	}
	req.ContentLength = st.Size()
	req.Header.Set("Authorization", u.AuthToken)
	req.Header.Set("Content-Type", "application/zip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ctx.Err() != nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch {
	case resp.StatusCode < 300:
		return true, nil
	case resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized:
		return true, fmt.Errorf("%w: %s", ErrUnauthorized, strings.TrimSpace(string(msg)))
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		return true, fmt.Errorf("%w: HTTP %d: %s", ErrLogRefused, resp.StatusCode, strings.TrimSpace(string(msg)))
	}
	return false, fmt.Errorf("log upload: HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(msg)))
}

// logTap is the ControlPlane with the link's messages shown to the log shipper first.
type logTap struct {
	ControlPlane
	logs *logShipper
}

// Connect opens the link, passing every message to the log shipper before onMessage.
func (t logTap) Connect(ctx context.Context, p LinkParams, onMessage func(Message)) (Link, error) {
	return t.ControlPlane.Connect(ctx, p, func(m Message) {
		t.logs.observe(m)
		onMessage(m)
	})
}

// hooks returns h with the shipper tracking each launch (its working directory) and exit.
func (s *logShipper) hooks(h supervisor.Hooks) supervisor.Hooks {
	env, exited := h.Env, h.Exited
	h.Env = func(l *supervisor.Launch) []string {
		s.launched(l.ID, l.Dir)
		if env == nil {
			return nil
		}
		return env(l)
	}
	h.Exited = func(e supervisor.Exit) {
		if exited != nil {
			exited(e)
		}
		s.exited(e.ID)
	}
	return h
}
