package serversdk_test

import (
	"context"
	"errors"
	"github.com/hoist-gg/hoist/internal/testwait"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
	"github.com/hoist-gg/hoist/serversdk"
)

const wait = 10 * time.Second // deadline for effects that cross real sockets

// killListener remembers accepted connections so a test can drop them all, as a network
// failure would.
type killListener struct {
	net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func (l *killListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns = append(l.conns, c)
		l.mu.Unlock()
	}
	return c, err
}

func (l *killListener) killAll() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}

type fixture struct {
	hub     *sdkws.Hub
	backend *sdkwstest.Backend
	clock   *clock.Fake
	url     string
	ln      *killListener
}

func setup(t *testing.T) *fixture {
	t.Helper()
	b := &sdkwstest.Backend{Events: make(chan sdkwstest.Event, 100)}
	// The SDK runs on the fake clock; the Hub (not under test here) on the real one, so
	// stepping the SDK's time never times out the Hub's writes.
	clk := clock.NewFake(time.Now())
	hub := sdkws.New(sdkws.Config{Backend: b, GameSessions: b,
		SigV4Keys: func(id string) (string, bool) { return "SECRET", id == "AKID" }})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	kl := &killListener{Listener: ln}
	srv := httptest.NewUnstartedServer(hub)
	srv.Listener = kl
	srv.Start()
	t.Cleanup(func() { hub.Close(); srv.Close() })
	return &fixture{hub: hub, backend: b, clock: clk, url: "ws" + strings.TrimPrefix(srv.URL, "http") + "/sdk", ln: kl}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func (f *fixture) newSDK(t *testing.T, vars map[string]string, exit func(int)) *serversdk.SDK {
	t.Helper()
	sdk := serversdk.New(serversdk.Options{Clock: f.clock, Getenv: env(vars), Exit: exit})
	t.Cleanup(func() { sdk.Destroy() })
	return sdk
}

func (f *fixture) expect(t *testing.T, method string) sdkwstest.Event {
	t.Helper()
	ev, err := f.backend.Wait(method, wait)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestLifecycle(t *testing.T) {
	f := setup(t)
	sdk := f.newSDK(t, map[string]string{
		"GAMELIFT_SDK_WEBSOCKET_URL": f.url, "GAMELIFT_SDK_AUTH_TOKEN": "good",
		"GAMELIFT_SDK_PROCESS_ID": "proc-1", "GAMELIFT_SDK_TOOL_NAME": "tool",
	}, nil)
	ctx := context.Background()
	// Parameters give fleet and host; the environment overrides the URL, token and pID.
	err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: "ws://nowhere.invalid", AuthToken: "bad",
		FleetID: "fleet-1", HostID: "host-1", ProcessID: "ignored"})
	if err != nil {
		t.Fatal(err)
	}
	conn := f.expect(t, "AuthenticateProcess").Request.(sdkws.ConnectRequest)
	if conn.ProcessID != "proc-1" || conn.FleetID != "fleet-1" || conn.ComputeName != "host-1" || conn.SdkLanguage != "Go" || conn.IdempotencyToken == "" {
		t.Errorf("connect %+v", conn)
	}
	started := make(chan serversdk.GameSession, 1)
	healthy := make(chan bool, 1)
	healthy <- true
	err = sdk.ProcessReady(ctx, serversdk.ProcessParameters{
		Port: 7777, LogParameters: serversdk.LogParameters{LogPaths: []string{"/tmp/log"}},
		OnStartGameSession: func(gs serversdk.GameSession) { started <- gs },
		OnHealthCheck:      func() bool { return <-healthy },
	})
	if err != nil {
		t.Fatal(err)
	}
	act := f.expect(t, "Heartbeat") // the first heartbeat comes right after activation
	if act.Request != true {
		t.Errorf("first heartbeat %v", act.Request)
	}
	if a := f.backend.Log()[1].Request.(message.ActivateServerProcess); a.Port != 7777 || a.LogPaths[0] != "/tmp/log" || a.SdkToolName != "tool" {
		t.Errorf("activate %+v", a)
	}
	healthy <- false
	if hb := f.advanceUntil(t, "Heartbeat"); hb.Request != false {
		t.Errorf("second heartbeat %v", hb.Request)
	}

	if err := sdk.ActivateGameSession(ctx); !errors.Is(err, serversdk.ErrNoGameSession) {
		t.Errorf("activate before a session: %v", err)
	}
	f.hub.Push(ctx, "proc-1", message.CreateGameSession{GameSessionID: "gs-1", GameSessionName: "duel", Port: 7777, MaximumPlayerSessionCount: 2, GameProperties: map[string]string{"k": "v"}})
	gs := <-started
	if gs.GameSessionID != "gs-1" || gs.Name != "duel" || gs.FleetID != "fleet-1" || gs.GameProperties["k"] != "v" {
		t.Errorf("game session %+v", gs)
	}
	if id, _ := sdk.GetGameSessionId(); id != "gs-1" {
		t.Errorf("GetGameSessionId %q", id)
	}
	sessionCalls(t, f, sdk)

	if err := sdk.ProcessEnding(ctx); err != nil {
		t.Fatal(err)
	}
	f.expect(t, "ProcessEnding")
	sdk.Destroy()
	if ev, err := f.backend.Wait("Disconnected", 300*time.Millisecond); err == nil {
		t.Errorf("disconnect after ProcessEnding: %v", ev)
	}
}

func sessionCalls(t *testing.T, f *fixture, sdk *serversdk.SDK) {
	ctx := context.Background()
	check := func(err error, method string) sdkwstest.Event {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		return f.expect(t, method)
	}
	check(sdk.ActivateGameSession(ctx), "ActivateGameSession")
	ev := check(sdk.AcceptPlayerSession(ctx, "psess-1"), "AcceptPlayerSession")
	if r := ev.Request.(message.AcceptPlayerSession); r.GameSessionID != "gs-1" || r.PlayerSessionID != "psess-1" {
		t.Errorf("accept %+v", r)
	}
	check(sdk.RemovePlayerSession(ctx, "psess-1"), "RemovePlayerSession")
	check(sdk.UpdatePlayerSessionCreationPolicy(ctx, "DENY_ALL"), "UpdatePlayerSessionCreationPolicy")
	res, err := sdk.DescribePlayerSessions(ctx, serversdk.DescribePlayerSessionsRequest{GameSessionID: "gs-1"})
	check(err, "DescribePlayerSessions")
	if len(res.PlayerSessions) != 1 || res.PlayerSessions[0].PlayerSessionID != "psess-1" {
		t.Errorf("describe %+v", res)
	}
	ticket, err := sdk.StartMatchBackfill(ctx, serversdk.StartMatchBackfillRequest{GameSessionArn: "arn:gs", MatchmakingConfigurationArn: "arn:mm",
		Players: []serversdk.Player{{PlayerID: "p"}}})
	check(err, "StartMatchBackfill")
	if ticket != "ticket-1" {
		t.Errorf("ticket %q", ticket)
	}
	check(sdk.StopMatchBackfill(ctx, serversdk.StopMatchBackfillRequest{GameSessionArn: "a", MatchmakingConfigurationArn: "b", TicketID: ticket}), "StopMatchBackfill")
	cert, err := sdk.GetComputeCertificate(ctx)
	check(err, "GetComputeCertificate")
	if cert.ComputeName != "host-1" {
		t.Errorf("certificate %+v", cert)
	}
	if _, err := sdk.GetFleetRoleCredentials(ctx, serversdk.GetFleetRoleCredentialsRequest{RoleArn: "arn:role"}); !errors.Is(err, serversdk.ErrNoFleetRole) {
		t.Errorf("fleet role: %v", err)
	}
	if r := f.expect(t, "GetFleetRoleCredentials").Request.(message.GetFleetRoleCredentials); r.RoleSessionName != "fleet-1-host-1" {
		t.Errorf("role session name %q", r.RoleSessionName)
	}
}

// advanceUntil steps the SDK's fake clock a few seconds at a time until the Backend sees
// method. Stepping (instead of one jump) makes it independent of when the SDK registered its
// timer; the real-time deadline only bounds a failing test.
func (f *fixture) advanceUntil(t *testing.T, method string) sdkwstest.Event {
	t.Helper()
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		f.clock.Advance(2 * time.Second)
		if ev, err := f.backend.Wait(method, 20*time.Millisecond); err == nil {
			return ev
		}
	}
	t.Fatalf("no %s", method)
	return sdkwstest.Event{}
}

func ready(t *testing.T, f *fixture, sdk *serversdk.SDK, pid string, p serversdk.ProcessParameters) {
	t.Helper()
	ctx := context.Background()
	if err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: f.url, AuthToken: "good", FleetID: "fleet-1", HostID: "host-1", ProcessID: pid}); err != nil {
		t.Fatal(err)
	}
	p.Port = 7777
	if err := sdk.ProcessReady(ctx, p); err != nil {
		t.Fatal(err)
	}
	f.expect(t, "Heartbeat")
}

func TestTerminateProcessWithoutCallbackExits(t *testing.T) {
	f := setup(t)
	exited := make(chan int, 1)
	sdk := f.newSDK(t, nil, func(code int) { exited <- code })
	ready(t, f, sdk, "proc-2", serversdk.ProcessParameters{})
	at := time.UnixMilli(f.clock.Now().Add(4 * time.Minute).UnixMilli())
	f.hub.Push(context.Background(), "proc-2", message.TerminateProcess{TerminationTime: at.UnixMilli()})
	f.expect(t, "ProcessEnding")
	select {
	case code := <-exited:
		if code != 0 {
			t.Errorf("exit code %d", code)
		}
	case <-time.After(wait):
		t.Fatal("no exit")
	}
	if got, ok := sdk.GetTerminationTime(); !ok || !got.Equal(at) {
		t.Errorf("termination time %v %v", got, ok)
	}
}

func TestReconnectAfterDropAndRefresh(t *testing.T) {
	f := setup(t)
	sdk := f.newSDK(t, nil, nil)
	terminated := make(chan struct{}, 1)
	ready(t, f, sdk, "proc-3", serversdk.ProcessParameters{OnProcessTerminate: func() { terminated <- struct{}{} }})
	tok := f.expect(t, "AuthenticateProcess").Request.(sdkws.ConnectRequest).IdempotencyToken

	f.ln.killAll() // the network drops; the SDK reconnects to the same URL (§1.6)
	again := f.expect(t, "AuthenticateProcess").Request.(sdkws.ConnectRequest)
	if again.IdempotencyToken != tok {
		t.Errorf("reconnect changed the idempotency token: %q -> %q", tok, again.IdempotencyToken)
	}
	testwait.Until(t, wait, 10*time.Millisecond, "the SDK reconnected", func() bool { return f.hub.Connected("proc-3") })
	f.advanceUntil(t, "Heartbeat")
	// Whether the Hub saw the drop before the new socket arrived (a Disconnected) or after
	// (none) is a race of real sockets; both are right. Forget it either way.
	f.backend.Wait("Disconnected", 200*time.Millisecond)

	// RefreshConnection: a second socket opens before the first closes; no disconnect.
	f.hub.Push(context.Background(), "proc-3", message.RefreshConnection{RefreshConnectionEndpoint: f.url, AuthToken: "good"})
	if r := f.expect(t, "AuthenticateProcess").Request.(sdkws.ConnectRequest); !r.Reconnect {
		t.Errorf("refresh socket not overlapping: %+v", r)
	}
	if ev, err := f.backend.Wait("Disconnected", 500*time.Millisecond); err == nil {
		t.Errorf("refresh reported %v", ev)
	}
	f.hub.Push(context.Background(), "proc-3", message.TerminateProcess{TerminationTime: 1})
	select {
	case <-terminated:
	case <-time.After(wait):
		t.Fatal("OnProcessTerminate not called through the new socket")
	}
}

func TestTimeoutsAndRefusals(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	sdk := f.newSDK(t, nil, nil)
	err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: f.url, AuthToken: "bad", FleetID: "fleet-1", HostID: "host-1", ProcessID: "p"})
	var se *serversdk.Error
	if !errors.As(err, &se) || se.StatusCode != 403 {
		t.Fatalf("bad token: %v", err)
	}
	if err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: f.url, FleetID: "bad_fleet!", HostID: "h", ProcessID: "p", AuthToken: "good"}); err == nil {
		t.Error("invalid fleet ID accepted")
	}
	ready(t, f, sdk, "proc-4", serversdk.ProcessParameters{})
	block := make(chan struct{})
	defer close(block)
	f.backend.SetFail(func(m string) error {
		if m == "GetComputeCertificate" {
			<-block
		}
		return nil
	})
	done := make(chan error, 1)
	go func() { _, err := sdk.GetComputeCertificate(ctx); done <- err }()
	f.expect(t, "GetComputeCertificate")
	for deadline := time.Now().Add(wait); ; {
		f.clock.Advance(5 * time.Second) // the call waits on the fake clock, not on real time
		select {
		case err := <-done:
			if !errors.Is(err, serversdk.ErrTimeout) {
				t.Fatalf("want a timeout, got %v", err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("call never timed out")
		}
	}
}

func TestSigV4Mode(t *testing.T) {
	f := setup(t)
	sdk := f.newSDK(t, map[string]string{"GAMELIFT_REGION": "us-west-2", "GAMELIFT_ACCESS_KEY": "AKID", "GAMELIFT_SECRET_KEY": "SECRET", "GAMELIFT_SESSION_TOKEN": "tok+/="}, nil)
	err := sdk.InitSDK(context.Background(), serversdk.ServerParameters{WebSocketURL: f.url, FleetID: "fleet-1", HostID: "host-1/sub", ProcessID: "proc-5"})
	if err != nil {
		t.Fatal(err)
	}
	if r := f.expect(t, "AuthenticateProcess").Request.(sdkws.ConnectRequest); r.AccessKeyID != "AKID" || r.Region != "us-west-2" {
		t.Errorf("sigv4 connect %+v", r)
	}
	bad := f.newSDK(t, map[string]string{"GAMELIFT_REGION": "us-west-2", "GAMELIFT_ACCESS_KEY": "AKID", "GAMELIFT_SECRET_KEY": "WRONG"}, nil)
	if err := bad.InitSDK(context.Background(), serversdk.ServerParameters{WebSocketURL: f.url, FleetID: "fleet-1", HostID: "host-1", ProcessID: "proc-6"}); err == nil {
		t.Error("wrong secret connected")
	}
}

var _ http.Handler = (*sdkws.Hub)(nil)
