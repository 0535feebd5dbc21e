package sdkws_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
)

const wait = 10 * time.Second // deadline for real-socket effects

type env struct {
	hub     *sdkws.Hub
	backend *sdkwstest.Backend
	srv     *httptest.Server
	clock   *clock.Fake
}

func start(t *testing.T, mod func(*sdkws.Config)) *env {
	t.Helper()
	b := &sdkwstest.Backend{Events: make(chan sdkwstest.Event, 100)}
	clk := clock.NewFake(time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC))
	cfg := sdkws.Config{Backend: b, GameSessions: b, Agent: b, Clock: clk}
	if mod != nil {
		mod(&cfg)
	}
	hub := sdkws.New(cfg)
	mux := http.NewServeMux()
	mux.Handle("/agent/", hub.AgentHandler())
	mux.Handle("/", hub)
	srv := httptest.NewServer(mux)
	t.Cleanup(func() { hub.Close(); srv.Close() })
	return &env{hub: hub, backend: b, srv: srv, clock: clk}
}

func (e *env) url(pathAndQuery string) string {
	return "ws" + strings.TrimPrefix(e.srv.URL, "http") + pathAndQuery
}

func dial(t *testing.T, u string) *websocket.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	return ws
}

// sockets waits until the Hub holds n sockets (upgrades finish on the server a moment after
// the client's dial returns); the deadline only bounds a failing test.
func (e *env) sockets(t *testing.T, n int) {
	t.Helper()
	testwait.Until(t, wait, 5*time.Millisecond, fmt.Sprintf("the hub holding %d sockets", n),
		func() bool { return e.hub.Sockets() == n })
}

func dialStatus(t *testing.T, u string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, u, nil)
	if err == nil {
		ws.CloseNow()
		return 101
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", u, err)
	}
	return resp.StatusCode
}

// roundTrip sends a text frame and reads one frame back, as a generic map.
func roundTrip(t *testing.T, ws *websocket.Conn, frame string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
		t.Fatal(err)
	}
	return read(t, ws)
}

func read(t *testing.T, ws *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, data, err := ws.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("reply %s: %v", data, err)
	}
	return m
}

const goQuery = "?Authorization=good&ComputeId=compute-1&FleetId=fleet-1&IdempotencyToken=tok&pID=p1&sdkLanguage=Go&sdkVersion=5.6.0"

func TestUpgradeOnAnyPathAndLenientQuery(t *testing.T) {
	e := start(t, nil)
	for _, u := range []string{
		"/" + goQuery,
		"/sdk" + goQuery,
		"/some/deep/path/" + goQuery,
		// C++ style: trailing slash, raw values, sorted keys.
		"/sdk/?Authorization=good&ComputeId=compute-1&FleetId=fleet-1&IdempotencyToken=abcDEF123&pID=p1&sdkLanguage=Cpp&sdkVersion=5.4.0",
		// C# style: fixed order, raw values, lower-case-insensitive lookup.
		"/sdk?ComputeId=compute-1&FleetId=fleet-1&pID=p1&sdkLanguage=CSharp&sdkVersion=5.5.0&IdempotencyToken=x&authorization=good",
	} {
		ws := dial(t, e.url(u))
		ev, err := e.backend.Wait("AuthenticateProcess", wait)
		if err != nil {
			t.Fatal(err)
		}
		req := ev.Request.(sdkws.ConnectRequest)
		if req.ProcessRef != (sdkws.ProcessRef{FleetID: "fleet-1", ComputeName: "compute-1", ProcessID: "p1"}) || req.AuthToken != "good" {
			t.Errorf("%s: got %+v", u, req)
		}
		ws.Close(websocket.StatusNormalClosure, "")
		if _, err := e.backend.Wait("Disconnected", wait); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRefusals(t *testing.T) {
	e := start(t, nil)
	cases := map[string]int{
		"/sdk?Authorization=bad&ComputeId=c&FleetId=f&pID=p1": 403,
		"/sdk?ComputeId=c&FleetId=f&pID=p1":                   403,
		"/sdk?Authorization=good&ComputeId=c&FleetId=f":       400,
		"/sdk?Authorization=SigV4&ComputeId=c&FleetId=f&pID=p1&X-Amz-Credential=AK/20250301/us-west-2/gamelift/aws4_request&X-Amz-Date=20250301T120000Z&X-Amz-Signature=00": 403,
	}
	for q, want := range cases {
		if got := dialStatus(t, e.url(q)); got != want {
			t.Errorf("%s: status %d, want %d", q, got, want)
		}
	}
	resp, err := http.Get(e.srv.URL + "/sdk" + goQuery)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET: %d, want 426", resp.StatusCode)
	}
}

func TestEveryActionReachesTheBackend(t *testing.T) {
	e := start(t, nil)
	ws := dial(t, e.url("/sdk"+goQuery))
	cases := []struct {
		frame, method string
		check         func(map[string]any) bool
	}{
		{`{"Action":"ActivateServerProcess","RequestId":"r1","SdkVersion":"5.6.0","SdkLanguage":"Go","Port":7777,"LogPaths":null}`, "ActivateServerProcess", nil},
		{`{"Action":"HeartbeatServerProcess","RequestId":"r2","HealthStatus":true}`, "Heartbeat", nil},
		{`{"Action":"ActivateGameSession","RequestId":"r3","GameSessionId":"gs-1"}`, "ActivateGameSession", nil},
		{`{"Action":"AcceptPlayerSession","RequestId":"r4","GameSessionId":"gs-1","PlayerSessionId":"psess-1"}`, "AcceptPlayerSession", nil},
		{`{"Action":"RemovePlayerSession","RequestId":"r5","GameSessionId":"gs-1","PlayerSessionId":"psess-1"}`, "RemovePlayerSession", nil},
		{`{"Action":"UpdatePlayerSessionCreationPolicy","RequestId":"r6","GameSessionId":"gs-1","PlayerSessionPolicy":"DENY_ALL"}`, "UpdatePlayerSessionCreationPolicy", nil},
		{`{"Action":"DescribePlayerSessions","RequestId":"r7","GameSessionId":"gs-1","Limit":5}`, "DescribePlayerSessions",
			func(m map[string]any) bool { return len(m["PlayerSessions"].([]any)) == 1 }},
		{`{"Action":"StartMatchBackfill","RequestId":"r8","GameSessionArn":"arn:a","MatchmakingConfigurationArn":"arn:b","Players":[{"PlayerId":"x","PlayerAttributes":{"skill":{"AttrType":"DOUBLE","N":10}},"LatencyInMs":{"us-west-2":20}}]}`, "StartMatchBackfill",
			func(m map[string]any) bool { return m["TicketId"] == "ticket-1" }},
		{`{"Action":"StopMatchBackfill","RequestId":"r9","GameSessionArn":"a","MatchmakingConfigurationArn":"b","TicketId":"t"}`, "StopMatchBackfill", nil},
		{`{"Action":"GetComputeCertificate","RequestId":"r10"}`, "GetComputeCertificate",
			func(m map[string]any) bool {
				return m["CertificatePath"] == "/hoist/cert.pem" && m["ComputeName"] == "compute-1"
			}},
		{`{"Action":"GetFleetRoleCredentials","RequestId":"r11","RoleArn":"arn:role","RoleSessionName":"s"}`, "GetFleetRoleCredentials",
			func(m map[string]any) bool { return m["AccessKeyId"] == "" }},
		{`{"Action":"TerminateServerProcess","RequestId":"r12"}`, "ProcessEnding", nil},
	}
	for _, c := range cases {
		var sent map[string]any
		json.Unmarshal([]byte(c.frame), &sent)
		got := roundTrip(t, ws, c.frame)
		if got["Action"] != sent["Action"] || got["RequestId"] != sent["RequestId"] || got["StatusCode"] != 200.0 {
			t.Errorf("%s: reply %v", c.method, got)
		}
		if c.check != nil && !c.check(got) {
			t.Errorf("%s: reply payload %v", c.method, got)
		}
		ev, err := e.backend.Wait(c.method, wait)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Process.ProcessID != "p1" {
			t.Errorf("%s: process %+v", c.method, ev.Process)
		}
		if c.method == "StartMatchBackfill" {
			p := ev.Request.(message.StartMatchBackfill).Players[0]
			if *p.PlayerAttributes["skill"].N != 10 || p.LatencyInMs["us-west-2"] != 20 {
				t.Errorf("players decoded as %+v", p)
			}
		}
	}
	// ProcessEnding succeeded: closing is not a disconnect.
	ws.Close(websocket.StatusNormalClosure, "")
	if ev, err := e.backend.Wait("Disconnected", time.Second); err == nil {
		t.Errorf("disconnect reported after ProcessEnding: %v", ev)
	}
}

func TestErrorsAndMalformedFrames(t *testing.T) {
	e := start(t, func(c *sdkws.Config) {
		c.GameSessions = nil
	})
	e.backend.SetFail(func(m string) error {
		switch m {
		case "Heartbeat":
			return sdkws.Errorf(404, "no such process")
		case "ActivateServerProcess":
			return errors.New("database on fire")
		}
		return nil
	})
	other := dial(t, e.url("/sdk"+strings.Replace(goQuery, "pID=p1", "pID=p2", 1)))
	ws := dial(t, e.url("/sdk"+goQuery))
	cases := []struct {
		frame, errPart string
		status         float64
	}{
		{`{"Action":"HeartbeatServerProcess","RequestId":"a","HealthStatus":true}`, "no such process", 404},
		{`{"Action":"ActivateServerProcess","RequestId":"b","Port":1}`, "Internal service error.", 500},
		{`{"Action":"ActivateGameSession","RequestId":"c","GameSessionId":"g"}`, "not supported", 501},
		{`{"Action":"NoSuchAction","RequestId":"d"}`, "unknown Action", 400},
		{`{"Action":"HeartbeatServerProcess","RequestId":"e","HealthStatus":"yes"}`, "malformed request", 400},
		{`{not json`, "malformed frame", 400},
		{`{"RequestId":"f"}`, "no Action", 400},
	}
	for _, c := range cases {
		got := roundTrip(t, ws, c.frame)
		if got["StatusCode"] != c.status || !strings.Contains(got["ErrorMessage"].(string), c.errPart) {
			t.Errorf("%s: reply %v", c.frame, got)
		}
	}
	// A binary frame and a reply-shaped frame are ignored; the socket and the other process
	// keep working.
	ctx := context.Background()
	ws.Write(ctx, websocket.MessageBinary, []byte(`{"Action":"HeartbeatServerProcess","RequestId":"x"}`))
	ws.Write(ctx, websocket.MessageText, []byte(`{"Action":"HeartbeatServerProcess","RequestId":"y","StatusCode":200}`))
	e.backend.SetFail(nil)
	if got := roundTrip(t, ws, `{"Action":"HeartbeatServerProcess","RequestId":"z","HealthStatus":true}`); got["RequestId"] != "z" {
		t.Errorf("after ignored frames: %v", got)
	}
	if got := roundTrip(t, other, `{"Action":"HeartbeatServerProcess","RequestId":"o","HealthStatus":false}`); got["StatusCode"] != 200.0 {
		t.Errorf("other process: %v", got)
	}
}

func TestPushesAndOverlappingSockets(t *testing.T) {
	e := start(t, nil)
	ctx := context.Background()
	if err := e.hub.Push(ctx, "p1", message.TerminateProcess{}); !errors.Is(err, sdkws.ErrNotConnected) {
		t.Fatalf("push to nobody: %v", err)
	}
	old := dial(t, e.url("/sdk"+goQuery))
	e.backend.Wait("AuthenticateProcess", wait)
	e.sockets(t, 1)
	if err := e.hub.Push(ctx, "p1", message.CreateGameSession{GameSessionID: "gs-1", MaximumPlayerSessionCount: 4, GameProperties: map[string]string{"mode": "duel"}}); err != nil {
		t.Fatal(err)
	}
	got := read(t, old)
	if got["Action"] != "CreateGameSession" || got["StatusCode"] != 200.0 || got["GameProperties"].(map[string]any)["mode"] != "duel" || got["MaximumPlayerSessionCount"] != 4.0 {
		t.Errorf("push: %v", got)
	}
	if _, has := got["RequestId"]; has {
		t.Errorf("push carries a RequestId: %v", got)
	}
	// Reconnect: the new socket opens before the old one closes.
	newer := dial(t, e.url("/sdk"+strings.Replace(goQuery, "tok", "tok2", 1)))
	ev, _ := e.backend.Wait("AuthenticateProcess", wait)
	if !ev.Request.(sdkws.ConnectRequest).Reconnect {
		t.Error("second socket not flagged as a reconnect")
	}
	e.sockets(t, 2)
	term := time.Date(2025, 3, 1, 12, 5, 0, 0, time.UTC)
	e.hub.Push(ctx, "p1", message.TerminateProcess{TerminationTime: term.UnixMilli()})
	got = read(t, newer)
	if got["Action"] != "TerminateProcess" || int64(got["TerminationTime"].(float64)) != term.UnixMilli() {
		t.Errorf("push to newest: %v", got)
	}
	old.Close(websocket.StatusGoingAway, "reconnecting")
	if ev, err := e.backend.Wait("Disconnected", 500*time.Millisecond); err == nil {
		t.Fatalf("closing the older socket reported %v", ev)
	}
	if !e.hub.Connected("p1") {
		t.Fatal("process not connected after the old socket closed")
	}
	// Another fleet may not take over a live pID.
	if s := dialStatus(t, e.url("/sdk?Authorization=good&ComputeId=other&FleetId=fleet-1&pID=p1")); s != 409 {
		t.Errorf("pID of another compute: %d", s)
	}
	// Dropping the last socket without ProcessEnding is a disconnect.
	newer.CloseNow()
	ev, err := e.backend.Wait("Disconnected", wait)
	if err != nil || ev.Process.ProcessID != "p1" {
		t.Fatalf("disconnect: %v %v", ev, err)
	}
}

func TestDisconnectClosesNormally(t *testing.T) {
	e := start(t, nil)
	ws := dial(t, e.url("/sdk"+goQuery))
	e.sockets(t, 1)
	if !e.hub.Disconnect("p1") {
		t.Fatal("Disconnect found no socket")
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, _, err := ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("close status %v", err)
	}
}

func TestCloseAsksForReconnect(t *testing.T) {
	e := start(t, nil)
	ws := dial(t, e.url("/sdk"+goQuery))
	e.sockets(t, 1)
	go e.hub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	_, _, err := ws.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("close status %v", err)
	}
	if ev, err := e.backend.Wait("Disconnected", 500*time.Millisecond); err == nil {
		t.Errorf("disconnect reported during Close: %v", ev)
	}
	if err := e.hub.Push(ctx, "p1", message.TerminateProcess{}); !errors.Is(err, sdkws.ErrClosed) {
		t.Errorf("push after close: %v", err)
	}
}

func TestAgentEndpoint(t *testing.T) {
	e := start(t, nil)
	if s := dialStatus(t, e.url("/agent/?FleetId=fleet-1&ComputeName=c1&Authorization=bad")); s != 403 {
		t.Errorf("bad token: %d", s)
	}
	ws := dial(t, e.url("/agent/?FleetId=fleet-1&ComputeName=c1&Authorization=good"))
	e.sockets(t, 1)
	got := roundTrip(t, ws, `{"Action":"SendHeartbeat","RequestId":"h","Status":"Active","ProcessList":["p1"],"HeartbeatTimeMillis":1700000000000}`)
	if got["StatusCode"] != 200.0 || got["Status"] != "Active" {
		t.Errorf("heartbeat reply %v", got)
	}
	ev, _ := e.backend.Wait("AgentHeartbeat", wait)
	if hb := ev.Request.(message.SendHeartbeat); hb.ProcessList[0] != "p1" || hb.HeartbeatTimeMillis != 1700000000000 || ev.Compute.ComputeName != "c1" {
		t.Errorf("heartbeat decoded as %+v", ev)
	}
	got = roundTrip(t, ws, `{"Action":"DescribeRuntimeConfiguration","RequestId":"r"}`)
	if got["ServerProcesses"].([]any)[0].(map[string]any)["LaunchPath"] != "/local/game/server" {
		t.Errorf("runtime config %v", got)
	}
	got = roundTrip(t, ws, `{"Action":"NotifyServerProcessTermination","RequestId":"n","ProcessId":"p1","EventCode":"SERVER_PROCESS_CRASHED","TerminationReason":"SERVER_PROCESS_CRASHED"}`)
	if got["StatusCode"] != 200.0 {
		t.Errorf("termination reply %v", got)
	}
	got = roundTrip(t, ws, `{"Action":"GetFleetRoleCredentials","RequestId":"c","RoleSessionName":"GameLiftAgentSession-abcde"}`)
	if got["StatusCode"] != 200.0 {
		t.Errorf("credentials reply %v", got)
	}
	ref := sdkws.ComputeRef{FleetID: "fleet-1", ComputeName: "c1"}
	for _, p := range []message.Message{
		message.NotifyProcessRegistered{ProcessID: "p1", LogPaths: []string{"/l"}},
		message.ForceExitServerProcess{ProcessID: "p1", TerminationReason: "x"},
		message.StartComputeTermination{},
		message.AgentRefreshConnection{RefreshConnectionEndpoint: "wss://x", AuthToken: "t", ExpirationTime: 1},
	} {
		if err := e.hub.PushAgent(context.Background(), ref, p); err != nil {
			t.Fatal(err)
		}
		if got := read(t, ws); got["Action"] != p.Action() || got["StatusCode"] != 200.0 {
			t.Errorf("agent push %v", got)
		}
	}
	ws.CloseNow()
	if _, err := e.backend.Wait("AgentDisconnected", wait); err != nil {
		t.Fatal(err)
	}
}
