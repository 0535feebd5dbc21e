package server

import (
	"archive/zip"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// LogsPath is where game session logs are uploaded (PUT LogsPath, by agents) and downloaded
// (GET LogsPath<fleet>/<name>.zip with a pre-signed query) on the API listener.
const LogsPath = "/hoist/logs/"

// logsDir is the directory under the data directory where uploads are checked before they
// go to the store. Before logs were blobs, it held them (<fleet>/<name>.zip); newLogFiles
// moves such files into the store.
const logsDir = "logs"

// logBlobPrefix prefixes the blob keys of game session logs: the blob of a log is
// logBlobPrefix + its Name ("<fleet>/<name>.zip").
const logBlobPrefix = "log/"

// logFiles keeps uploaded game session logs in the store's blobs and serves them through
// pre-signed URLs: an HMAC-SHA256 of the path and the expiry with a key kept in the store, so
// that any node serves a URL any node signed. The records are the domain's
// (gamelift.AcceptGameSessionLog).
type logFiles struct {
	svc   *gamelift.Service
	blobs store.Blobs
	dir   string
	key   []byte
	clk   clock.Clock
	base  string // the API's URL, e.g. http://127.0.0.1:9080
	log   *slog.Logger
}

// newLogFiles opens the log directory and reads (or creates) the cluster's URL signing key.
func newLogFiles(ctx context.Context, svc *gamelift.Service, st store.Store, dataDir, base string, clk clock.Clock, log *slog.Logger) (*logFiles, error) {
	blobs, ok := st.(store.Blobs)
	if !ok {
		return nil, errors.New("the store keeps no blobs, where game session logs go")
	}
	dir := filepath.Join(dataDir, logsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	key, err := sharedSecret(ctx, st, "log-url-key")
	if err != nil {
		return nil, err
	}
	l := &logFiles{svc: svc, blobs: blobs, dir: dir, key: key, clk: clk, base: base, log: log}
	if err := l.migrate(ctx); err != nil {
		return nil, fmt.Errorf("move the game session logs of %s into the store: %w", dir, err)
	}
	return l, nil
}

// oldLogURLKeyFile is where the log URL key was kept before it was the cluster's.
const oldLogURLKeyFile = "url-signing.key"

// migrate moves the logs kept as files before logs were blobs (<data>/logs/<fleet>/<name>.zip,
// whose name is their Name) into the store's blobs, and removes the files and the old URL key.
// A log whose blob already exists (a move interrupted after the put) keeps its blob. Running
// it again finds nothing to move.
func (l *logFiles) migrate(ctx context.Context) error {
	fleets, err := os.ReadDir(l.dir)
	if err != nil {
		return err
	}
	moved := 0
	for _, fleet := range fleets {
		if !fleet.IsDir() {
			continue
		}
		n, err := l.migrateFleet(ctx, fleet.Name())
		moved += n
		if err != nil {
			return err
		}
	}
	if moved > 0 {
		l.log.Info("moved game session logs from the data directory into the store", "logs", moved)
	}
	if err := os.Remove(filepath.Join(l.dir, oldLogURLKeyFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// migrateFleet moves one fleet's old log files and then its emptied directory; it returns how
// many logs it moved. Files that are not logs are left.
func (l *logFiles) migrateFleet(ctx context.Context, fleet string) (int, error) {
	files, err := os.ReadDir(filepath.Join(l.dir, fleet))
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, f := range files {
		name := fleet + "/" + f.Name()
		if !f.Type().IsRegular() || !validLogName(name) {
			continue
		}
		if err := l.migrateLog(ctx, name); err != nil {
			return moved, err
		}
		l.log.Info("game session log moved into the store", "name", name)
		moved++
	}
	_ = os.Remove(filepath.Join(l.dir, fleet)) // only when empty
	return moved, nil
}

// migrateLog puts the old file of the log name in the blobs, unless its blob exists, and
// removes the file.
func (l *logFiles) migrateLog(ctx context.Context, name string) error {
	file := filepath.Join(l.dir, filepath.FromSlash(name))
	body, _, err := l.blobs.OpenBlob(ctx, logBlobPrefix+name)
	if err == nil {
		body.Close()
		return os.Remove(file)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := l.blobs.PutBlob(ctx, logBlobPrefix+name, f); err != nil {
		return err
	}
	return os.Remove(file)
}

// wrap makes GetGameSessionLogUrl answer pre-signed URLs, and purge expired logs on the way.
func (l *logFiles) wrap(h *api.Handlers) {
	handler := l.svc.GameSessionLogURLHandler(l.sign)
	h.GetGameSessionLogUrl = func(ctx context.Context, in *api.GetGameSessionLogUrlInput) (*api.GetGameSessionLogUrlOutput, error) {
		l.purge(ctx)
		return handler(ctx, in)
	}
}

// route sends requests under LogsPath to the log endpoints and the rest to next.
func (l *logFiles) route(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case !strings.HasPrefix(r.URL.Path, LogsPath):
			next.ServeHTTP(w, r)
		case r.Method == http.MethodPut && r.URL.Path == LogsPath:
			l.upload(w, r)
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			l.download(w, r)
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		}
	})
}

// sign returns the pre-signed URL of a stored log, valid for GameSessionLogURLLifetime.
func (l *logFiles) sign(g gamelift.GameSessionLog) (string, error) {
	p := LogsPath + g.Name
	expires := strconv.FormatInt(l.clk.Now().Add(gamelift.GameSessionLogURLLifetime).Unix(), 10)
	q := url.Values{"Expires": {expires}, "Signature": {l.mac(p, expires)}}
	return l.base + p + "?" + q.Encode(), nil
}

func (l *logFiles) mac(path, expires string) string {
	m := hmac.New(sha256.New, l.key)
	m.Write([]byte(path + "\n" + expires))
	return hex.EncodeToString(m.Sum(nil))
}

// verify reports whether r carries a valid, unexpired signature for its path.
func (l *logFiles) verify(r *http.Request) bool {
	expires, sig := r.URL.Query().Get("Expires"), r.URL.Query().Get("Signature")
	at, err := strconv.ParseInt(expires, 10, 64)
	if err != nil || l.clk.Now().Unix() >= at {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(l.mac(r.URL.Path, expires)))
}

// download serves a log zip to a request with a valid signature; anything else is 403.
func (l *logFiles) download(w http.ResponseWriter, r *http.Request) {
	if !l.verify(r) {
		http.Error(w, "bad or expired signature", http.StatusForbidden)
		return
	}
	name := strings.TrimPrefix(r.URL.Path, LogsPath)
	if !validLogName(name) {
		http.NotFound(w, r)
		return
	}
	body, size, err := l.blobs.OpenBlob(r.Context(), logBlobPrefix+name)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			l.log.Error("game session log download", "name", name, "err", err)
		}
		http.NotFound(w, r)
		return
	}
	defer body.Close()
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	if r.Method == http.MethodHead {
		return
	}
	io.Copy(w, body)
}

// validLogName accepts only "<fleet>/<name>.zip" of plain characters.
func validLogName(name string) bool {
	parts := strings.Split(name, "/")
	return len(parts) == 2 && plain(parts[0]) && plain(parts[1]) && strings.HasSuffix(parts[1], ".zip")
}

func plain(s string) bool {
	if s == "" || strings.HasPrefix(s, ".") {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// upload accepts an agent's log zip: PUT LogsPath?FleetId=&ComputeName=&GameSessionId= with
// the compute auth token in the Authorization header.
func (l *logFiles) upload(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	up := gamelift.GameSessionLogUpload{FleetID: q.Get("FleetId"), ComputeName: q.Get("ComputeName"),
		GameSessionID: q.Get("GameSessionId")}
	ctx := r.Context()
	if err := l.svc.AuthenticateCompute(ctx, up.FleetID, up.ComputeName, r.Header.Get("Authorization")); err != nil {
		writeLogError(w, l.log, err)
		return
	}
	_, err := l.svc.AcceptGameSessionLog(ctx, up, func(g gamelift.GameSessionLog) (int64, error) {
		return l.save(ctx, g, r.Body)
	})
	if err != nil {
		writeLogError(w, l.log, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
	l.purge(ctx)
}

// save checks an upload (at most MaxGameSessionLogBytes, a zip) in a temporary file and puts
// it in the store's blobs.
func (l *logFiles) save(ctx context.Context, g gamelift.GameSessionLog, body io.Reader) (int64, error) {
	if !validLogName(g.Name) {
		return 0, errors.New("bad log name " + g.Name)
	}
	tmp, err := os.CreateTemp(l.dir, ".upload-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	n, err := io.Copy(tmp, io.LimitReader(body, gamelift.MaxGameSessionLogBytes+1))
	if err != nil || n > gamelift.MaxGameSessionLogBytes {
		return n, err
	}
	if _, err := zip.NewReader(tmp, n); err != nil {
		return 0, api.Errorf(api.InvalidRequestException, "The log upload is not a zip file: %v", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, err
	}
	return l.blobs.PutBlob(ctx, logBlobPrefix+g.Name, tmp)
}

// purge removes the logs past their retention (best effort: a failure is logged).
func (l *logFiles) purge(ctx context.Context) {
	_, err := l.svc.PurgeGameSessionLogs(ctx, func(g gamelift.GameSessionLog) error {
		if !validLogName(g.Name) {
			return nil
		}
		return l.blobs.DeleteBlob(ctx, logBlobPrefix+g.Name)
	})
	if err != nil {
		l.log.Warn("purge game session logs", "err", err)
	}
}

// writeLogError answers a domain error with its HTTP status and message.
func writeLogError(w http.ResponseWriter, log *slog.Logger, err error) {
	var e *api.Error
	if !errors.As(err, &e) {
		log.Error("game session log upload", "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	status := http.StatusBadRequest
	switch e.Code {
	case api.UnauthorizedException:
		status = http.StatusForbidden
	case api.NotFoundException:
		status = http.StatusNotFound
	}
	http.Error(w, e.Message, status)
}
