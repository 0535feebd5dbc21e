package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
)

const wait = 20 * time.Second

// build compiles the game server into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gameserver")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freePort(t *testing.T) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

type world struct {
	hub     *sdkws.Hub
	backend *sdkwstest.Backend
	url     string
}

func newWorld(t *testing.T) *world {
	b := &sdkwstest.Backend{Events: make(chan sdkwstest.Event, 100)}
	hub := sdkws.New(sdkws.Config{Backend: b, GameSessions: b})
	srv := httptest.NewServer(hub)
	t.Cleanup(func() { hub.Close(); srv.Close() })
	return &world{hub: hub, backend: b, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/sdk"}
}

func (w *world) start(t *testing.T, bin, pid string, port int, extra ...string) *exec.Cmd {
	cmd := exec.Command(bin, "-port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(),
		"GAMELIFT_SDK_WEBSOCKET_URL="+w.url, "GAMELIFT_SDK_AUTH_TOKEN=good", "GAMELIFT_SDK_FLEET_ID=fleet-1",
		"GAMELIFT_SDK_HOST_ID=host-1", "GAMELIFT_SDK_PROCESS_ID="+pid)
	cmd.Env = append(cmd.Env, extra...)
	cmd.Dir = t.TempDir() // where it writes gameserver.log
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func (w *world) expect(t *testing.T, method string) sdkwstest.Event {
	t.Helper()
	ev, err := w.backend.Wait(method, wait)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestGameServerAsARealProcess(t *testing.T) {
	bin := build(t)
	w := newWorld(t)
	port := freePort(t)
	cmd := w.start(t, bin, "proc-1", port)
	if a := w.expect(t, "ActivateServerProcess").Request.(message.ActivateServerProcess); a.Port != port {
		t.Errorf("activated with port %d", a.Port)
	}
	if hb := w.expect(t, "Heartbeat"); hb.Request != true {
		t.Errorf("heartbeat %v", hb.Request)
	}
	w.hub.Push(context.Background(), "proc-1", message.CreateGameSession{GameSessionID: "gs-1", MaximumPlayerSessionCount: 2})
	w.expect(t, "ActivateGameSession")

	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), wait)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(wait))
	in := bufio.NewScanner(c)
	fmt.Fprintln(c, "psess-1")
	if !in.Scan() || !strings.HasPrefix(in.Text(), "WELCOME") {
		t.Fatalf("greeting %q", in.Text())
	}
	if r := w.expect(t, "AcceptPlayerSession").Request.(message.AcceptPlayerSession); r.PlayerSessionID != "psess-1" || r.GameSessionID != "gs-1" {
		t.Errorf("accept %+v", r)
	}
	lo, hi, guesses := 1, 100, 0
	for ; guesses < 10; guesses++ {
		mid := (lo + hi) / 2
		fmt.Fprintln(c, mid)
		in.Scan()
		switch in.Text() {
		case "higher":
			lo = mid + 1
		case "lower":
			hi = mid - 1
		case "correct":
			lo = -1
		default:
			t.Fatalf("answer %q", in.Text())
		}
		if lo == -1 {
			break
		}
	}
	if lo != -1 {
		t.Fatal("binary search did not find the number")
	}
	c.Close()
	w.expect(t, "RemovePlayerSession")

	w.hub.Push(context.Background(), "proc-1", message.TerminateProcess{TerminationTime: time.Now().Add(time.Minute).UnixMilli()})
	w.expect(t, "ProcessEnding")
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(wait):
		t.Fatal("the game server did not exit")
	}
}

func TestGameServerTestHooks(t *testing.T) {
	bin := build(t)
	w := newWorld(t)
	w.start(t, bin, "sick", freePort(t), "HOIST_EXAMPLE_UNHEALTHY=1")
	if hb := w.expect(t, "Heartbeat"); hb.Request != false {
		t.Errorf("unhealthy hook reported %v", hb.Request)
	}
	w.start(t, bin, "lazy", freePort(t), "HOIST_EXAMPLE_SKIP_READY=1")
	ev := w.expect(t, "AuthenticateProcess")
	for ev.Process.ProcessID != "lazy" {
		ev = w.expect(t, "AuthenticateProcess")
	}
	if ev, err := w.backend.Wait("ActivateServerProcess", time.Second); err == nil && ev.Process.ProcessID == "lazy" {
		t.Error("skip-ready process called ProcessReady")
	}
}
