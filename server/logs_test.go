package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
)

// fakeTimeSigner signs at the fake clock's time, which the server checks signatures against.
type fakeTimeSigner struct{ clk *clock.Fake }

func (s fakeTimeSigner) SignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) error {
	return v4.NewSigner().SignHTTP(ctx, creds, r, payloadHash, service, region, s.clk.Now(), optFns...)
}

func httpGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// zipEntry returns the content of the named entry of a zip.
func zipEntry(t *testing.T, data []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			return string(b)
		}
	}
	t.Fatalf("no %s in the zip", name)
	return ""
}

// TestGameSessionLogsThroughTheAgent runs a real `hoist agent` with the example game server:
// the process hosts a game session, is ended, and the agent uploads its log; the pre-signed
// URL serves the zip, refuses a bad or expired signature, and the log goes after 14 days.
func TestGameSessionLogsThroughTheAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newHostingRig(t, 1)
	r.startAgent("host-1")
	eventually(t, 60*time.Second, "1 ACTIVE process", func() bool { return r.activeProcesses() == 1 })
	ctx := context.Background()
	out, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(r.fleet),
		MaximumPlayerSessionCount: aws.Int32(2), Location: aws.String("custom-hosting-lab")})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	id := out.GameSession.GameSessionId
	eventually(t, 30*time.Second, "the session ACTIVE", func() bool {
		d, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		return err == nil && len(d.GameSessions) == 1 && d.GameSessions[0].Status == types.GameSessionStatusActive
	})
	if _, err := r.gl.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: id}); apiCode(err) != "NotFoundException" {
		t.Fatalf("GetGameSessionLogUrl before any log: %v, want NotFoundException", err)
	}

	// An upload without the compute's token is refused.
	req, _ := http.NewRequest(http.MethodPut, r.srv.URL()+"/hoist/logs/?FleetId="+r.fleet+"&ComputeName=host-1&GameSessionId="+*id,
		strings.NewReader("not a zip"))
	req.Header.Set("Authorization", "wrong-token")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("upload with a wrong token: %v %v, want 403", resp, err)
	}

	// End the process: the agent uploads its log for the session.
	if _, err := r.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: id,
		TerminationMode: types.TerminationModeForceTerminate}); err != nil {
		t.Fatalf("TerminateGameSession: %v", err)
	}
	var url string
	eventually(t, 60*time.Second, "a log URL", func() bool {
		o, err := r.gl.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: id})
		if err != nil {
			return false
		}
		url = aws.ToString(o.PreSignedUrl)
		return true
	})
	if !strings.HasPrefix(url, r.srv.URL()+"/hoist/logs/") {
		t.Fatalf("PreSignedUrl %q is not on the API listener", url)
	}
	status, body := httpGet(t, url)
	if status != http.StatusOK {
		t.Fatalf("GET the log: %d %s", status, body)
	}
	if log := zipEntry(t, body, "gameserver.log"); !strings.Contains(log, *id) {
		t.Fatalf("gameserver.log does not mention the session %s:\n%s", *id, log)
	}

	// A bad signature, a changed path or an expired URL is refused.
	bad := url[:len(url)-1] + "0"
	if strings.HasSuffix(url, "0") {
		bad = url[:len(url)-1] + "1"
	}
	if status, _ := httpGet(t, bad); status != http.StatusForbidden {
		t.Errorf("bad signature: %d, want 403", status)
	}
	if status, _ := httpGet(t, strings.Replace(url, ".zip", "x.zip", 1)); status != http.StatusForbidden {
		t.Errorf("changed path: %d, want 403", status)
	}
	r.clk.Advance(16 * time.Minute)
	if status, _ := httpGet(t, url); status != http.StatusForbidden {
		t.Errorf("expired URL: %d, want 403", status)
	}

	// After 14 days the log is gone, file and all (the embedded store keeps blobs as files,
	// named after their path-escaped keys).
	files := func() int {
		m, _ := filepath.Glob(filepath.Join(r.data, "blobs", "log%2F"+r.fleet+"%2F*.zip"))
		return len(m)
	}
	if files() != 1 {
		t.Fatalf("%d log files stored, want 1", files())
	}
	r.clk.Advance(14 * 24 * time.Hour)
	gl := gamelift.New(gamelift.Options{Region: "us-west-2", BaseEndpoint: aws.String(r.srv.URL()), RetryMaxAttempts: 1,
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, ""), HTTPSignerV4: fakeTimeSigner{r.clk}})
	if _, err := gl.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: id}); apiCode(err) != "NotFoundException" {
		t.Fatalf("GetGameSessionLogUrl after 14 days: %v, want NotFoundException", err)
	}
	if n := files(); n != 0 {
		t.Errorf("%d log files left after the retention", n)
	}
}

// TestOldLogFilesMoveIntoTheStore: a log kept as a file under <data>/logs, as before logs were
// blobs, is moved into the store when the server starts, and its URL then serves it; the old
// files are gone, and a second start finds nothing to move.
func TestOldLogFilesMoveIntoTheStore(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, server.Config{DataDir: data})
	ctx := context.Background()
	gl := client(srv.URL(), testKeyID, testSecret)
	id := sessionWithLog(t, srv, gl, "custom-old-logs", "an old log\n")
	stop(t, srv)

	// Put the log back where it used to be: the embedded store keeps blobs as files named
	// after their path-escaped keys.
	blobs, _ := filepath.Glob(filepath.Join(data, "blobs", "log%2F*"))
	if len(blobs) != 1 {
		t.Fatalf("log blobs: %q", blobs)
	}
	name, _ := url.PathUnescape(strings.TrimPrefix(filepath.Base(blobs[0]), "log%2F"))
	old := filepath.Join(data, "logs", filepath.FromSlash(name))
	os.MkdirAll(filepath.Dir(old), 0o700)
	if err := os.Rename(blobs[0], old); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(data, "logs", "url-signing.key"), []byte("an old key of 32 bytes.........."), 0o600)

	for start := 1; start <= 2; start++ {
		srv = startServer(t, server.Config{DataDir: data})
		u, err := client(srv.URL(), testKeyID, testSecret).GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: &id})
		if err != nil {
			t.Fatal(err)
		}
		if status, body := httpGet(t, aws.ToString(u.PreSignedUrl)); status != http.StatusOK || zipEntry(t, body, "gameserver.log") != "an old log\n" {
			t.Errorf("start %d: GET the old log: %d", start, status)
		}
		if left, _ := os.ReadDir(filepath.Join(data, "logs")); len(left) != 0 {
			t.Errorf("start %d: left in <data>/logs: %v", start, left)
		}
		stop(t, srv)
	}
}

// stop shuts a server down.
func stop(t *testing.T, srv *server.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}
