package agent

import (
	"archive/zip"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readZip returns the entries of a zip file by name.
func readZip(t *testing.T, file string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		out[f.Name] = string(b)
	}
	return out
}

func TestZipLogsResolvesSkipsAndCaps(t *testing.T) {
	work, other := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(work, "game.log"), "relative")
	writeFile(t, filepath.Join(work, "logs", "a.log"), "in a directory")
	writeFile(t, filepath.Join(work, "logs", "b.log"), "also")
	writeFile(t, filepath.Join(other, "abs.log"), "absolute")
	writeFile(t, filepath.Join(work, "huge.log"), strings.Repeat("x", 200))
	paths := []string{"game.log", "logs", filepath.Join(other, "abs.log"), "missing.log", "huge.log", "game.log"}

	file, n, err := zipLogs(work, paths, 100, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(file)
	got := readZip(t, file)
	names := make([]string, 0, len(got))
	for k := range got {
		names = append(names, k)
	}
	sort.Strings(names)
	absName := strings.TrimPrefix(filepath.ToSlash(filepath.Join(other, "abs.log")), "/")
	want := []string{absName, "game.log", "logs/a.log", "logs/b.log"}
	sort.Strings(want)
	if n != 4 || strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("zip holds %d files %v, want %v (missing skipped, huge over the cap left out, duplicates once)", n, names, want)
	}
	if got["game.log"] != "relative" || got["logs/a.log"] != "in a directory" || got[absName] != "absolute" {
		t.Errorf("contents: %v", got)
	}
}

// fakeUploader records uploads (with the zip's entries) and answers from a script of errors.
type fakeUploader struct {
	errs  []error
	calls chan LogUpload
	zips  chan map[string]string
	t     *testing.T
}

func (f *fakeUploader) UploadGameSessionLog(_ context.Context, u LogUpload) error {
	f.zips <- readZip(f.t, u.Zip)
	f.calls <- u
	if len(f.errs) == 0 {
		return nil
	}
	err := f.errs[0]
	f.errs = f.errs[1:]
	return err
}

func newTestShipper(t *testing.T, up *fakeUploader, clk clock.Clock) (*logShipper, string) {
	quit := make(chan struct{})
	t.Cleanup(func() { close(quit) })
	s := newLogShipper(clk, slog.New(slog.DiscardHandler), up, Compute{FleetID: "fleet-1", ComputeName: "host-1"},
		func() string { return "token-1" }, quit)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "gameserver.log"), "session log line")
	s.launched("proc-1", dir)
	s.observe(Message{Action: ActionNotifyProcessRegistered, ProcessID: "proc-1", LogPaths: []string{"gameserver.log"}})
	s.observe(Message{Action: ActionNotifyGameSessionActivated, ProcessID: "proc-1", GameSessionID: "arn:gs-1"})
	return s, dir
}

// nextCall waits for the next upload, advancing the fake clock so that backoff waits end.
func nextCall(t *testing.T, up *fakeUploader, clk *clock.Fake) LogUpload {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case u := <-up.calls:
			return u
		case <-deadline:
			t.Fatal("no upload")
		case <-time.After(5 * time.Millisecond):
			clk.Advance(500 * time.Millisecond)
		}
	}
}

func TestLogShipperUploadsOnExitAndRetries(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	up := &fakeUploader{t: t, errs: []error{errors.New("connection refused"), errors.New("HTTP 500")},
		calls: make(chan LogUpload, 10), zips: make(chan map[string]string, 10)}
	s, _ := newTestShipper(t, up, clk)
	s.exited("proc-1")
	start := clk.Now()
	for i := 0; i < 3; i++ {
		u := nextCall(t, up, clk)
		if u.GameSessionID != "arn:gs-1" || u.FleetID != "fleet-1" || u.ComputeName != "host-1" || u.AuthToken != "token-1" {
			t.Fatalf("upload %d: %+v", i, u)
		}
		if z := <-up.zips; z["gameserver.log"] != "session log line" {
			t.Fatalf("upload %d zip: %v", i, z)
		}
	}
	s.wg.Wait()
	if waited := clk.Now().Sub(start); waited < logRetryMin+2*logRetryMin {
		t.Errorf("three attempts after %v of fake time, want backoff of at least 3s", waited)
	}
	select {
	case u := <-up.calls:
		t.Errorf("an upload after success: %+v", u)
	default:
	}
}

func TestLogShipperGivesUpOnRefusalAndSkipsSessionlessProcesses(t *testing.T) {
	clk := clock.NewFake(time.Unix(1_000_000, 0))
	up := &fakeUploader{t: t, errs: []error{ErrLogRefused}, calls: make(chan LogUpload, 10), zips: make(chan map[string]string, 10)}
	s, dir := newTestShipper(t, up, clk)
	s.launched("proc-2", dir) // never hosts a game session
	s.observe(Message{Action: ActionNotifyProcessRegistered, ProcessID: "proc-2", LogPaths: []string{"gameserver.log"}})
	s.exited("proc-2")
	s.exited("proc-1")
	s.wg.Wait()
	if len(up.calls) != 1 {
		t.Fatalf("%d uploads, want 1 (refused uploads are not retried; processes without sessions upload nothing)", len(up.calls))
	}
	if len(s.procs) != 0 {
		t.Errorf("processes still tracked after exit: %v", s.procs)
	}
}
