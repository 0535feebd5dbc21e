package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/internal/clock"
)

// The test binary doubles as a game server: "hoist-helper sleep DIR" writes its GAMELIFT_SDK_*
// environment to DIR/<pid>.env and waits; "hoist-helper exit CODE" exits with CODE.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "hoist-helper" {
		if os.Args[2] == "exit" {
			code, _ := strconv.Atoi(os.Args[3])
			os.Exit(code)
		}
		var env []string
		for _, kv := range os.Environ() {
			if strings.HasPrefix(kv, "GAMELIFT_SDK_") {
				env = append(env, kv)
			}
		}
		name := filepath.Join(os.Args[3], strconv.Itoa(os.Getpid())+".env")
		_ = os.WriteFile(name+".tmp", []byte(strings.Join(env, "\n")), 0o644)
		_ = os.Rename(name+".tmp", name)
		select {}
	}
	os.Exit(m.Run())
}

// agentServer is a tiny agent-websocket endpoint: it checks the query, records every frame
// and lets the test push frames to the newest connection.
type agentServer struct {
	t      *testing.T
	srv    *httptest.Server
	frames chan map[string]any

	mu      sync.Mutex
	valid   map[string]bool // accepted tokens; nil accepts any
	conn    *websocket.Conn
	queries []string
}

func newAgentServer(t *testing.T) *agentServer {
	s := &agentServer{t: t, frames: make(chan map[string]any, 256)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *agentServer) url() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/agent" }

func (s *agentServer) serve(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	s.queries = append(s.queries, r.URL.RawQuery)
	ok := s.valid == nil || s.valid[q.Get("Authorization")]
	s.mu.Unlock()
	if !ok || q.Get("FleetId") != "fleet-1" || q.Get("ComputeName") != "host-1" {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
	for {
		_, b, err := c.Read(context.Background())
		if err != nil {
			return
		}
		var f map[string]any
		if json.Unmarshal(b, &f) == nil {
			s.frames <- f
		}
	}
}

func (s *agentServer) push(m map[string]any) {
	s.t.Helper()
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	b, _ := json.Marshal(m)
	if err := c.Write(context.Background(), websocket.MessageText, b); err != nil {
		s.t.Fatal(err)
	}
}

// drop closes the current connection abnormally, as a crashing server would.
func (s *agentServer) drop() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	c.CloseNow()
}

func (s *agentServer) connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queries)
}

// agentHarness runs an Agent on a fake clock against a fake control plane and the test's
// websocket server.
type agentHarness struct {
	t    *testing.T
	fc   *clock.Fake
	cp   *fakeControlPlane
	ws   *agentServer
	a    *Agent
	dir  string
	bin  string
	stop context.CancelFunc
	ran  chan error
}

func startAgent(t *testing.T, specs func(bin, dir string) []supervisor.ServerProcess) *agentHarness {
	h := &agentHarness{t: t, fc: clock.NewFake(epoch), ws: newAgentServer(t), dir: t.TempDir()}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	h.bin = bin
	h.cp = &fakeControlPlane{clk: h.fc, agentEndpoint: h.ws.url(), config: specs(bin, h.dir)}
	h.a, err = New(Config{
		Compute:      Compute{FleetID: "fleet-1", ComputeName: "host-1", Location: "custom-home", IPAddress: "127.0.0.1"},
		ControlPlane: h.cp, Clock: h.fc, Deregister: true,
		Supervisor: supervisor.Config{GracePeriod: time.Minute, Rand: func() float64 { return 0 }},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h.stop, h.ran = cancel, make(chan error, 1)
	go func() { h.ran <- h.a.Run(ctx) }()
	t.Cleanup(h.shutdown)
	return h
}

func sleepers(n int) func(bin, dir string) []supervisor.ServerProcess {
	return func(bin, dir string) []supervisor.ServerProcess {
		return []supervisor.ServerProcess{{LaunchPath: bin, Parameters: "hoist-helper sleep " + dir, ConcurrentExecutions: n}}
	}
}

// shutdown cancels the agent and lets its grace period pass on the fake clock.
func (h *agentHarness) shutdown() {
	h.stop()
	if err := h.waitRun(10*time.Second, "the agent stopping"); err != nil {
		h.t.Errorf("Run: %v", err)
	}
}

// waitRun advances the fake clock by step between polls until Run returns, and returns its
// error, putting it back so that a later call sees it too.
func (h *agentHarness) waitRun(step time.Duration, what string) error {
	h.t.Helper()
	var err error
	testwait.Until(h.t, 20*time.Second, 2*time.Millisecond, what, func() bool {
		select {
		case err = <-h.ran:
			h.ran <- err
			return true
		default:
			h.fc.Advance(step)
			return false
		}
	})
	return err
}

// next waits for the next frame with the given action, advancing the fake clock meanwhile;
// frames with other actions are dropped.
func (h *agentHarness) next(action string, step time.Duration) map[string]any {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case f := <-h.ws.frames:
			if f["Action"] == action {
				return f
			}
			continue
		case <-time.After(2 * time.Millisecond):
		}
		h.fc.Advance(step)
	}
	h.t.Fatalf("no %s frame", action)
	return nil
}

func (h *agentHarness) live(t *testing.T, n int) []supervisor.Info {
	t.Helper()
	var ps []supervisor.Info
	testwait.Until(t, 20*time.Second, 2*time.Millisecond, fmt.Sprintf("%d live processes", n), func() bool {
		if ps = h.a.Supervisor().Processes(); len(ps) == n {
			return true
		}
		h.fc.Advance(500 * time.Millisecond)
		return false
	})
	return ps
}

func ids(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
