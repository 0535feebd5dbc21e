package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

// TestFaultComputePartition: in dev mode, Hoist.InjectFault ComputePartition cuts an Anywhere
// compute's SDK socket and refuses it for 30 s of the server's clock. The game sees its
// heartbeats fail and its reconnects refused; once virtual time passes the 30 s it reconnects,
// and a game session created through the API reaches it.
func TestFaultComputePartition(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, gl, "custom-partition")
	_, token := computeToken(t, gl, fleet, "custom-partition", "part-host")
	logs := &syncBuffer{}
	started := make(chan string, 1)
	partitionedProcess(t, srv, fleet, token, logs, started)
	code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget,
		fmt.Sprintf(`{"Kind":"ComputePartition","FleetId":%q,"ComputeName":"part-host","Seconds":30}`, fleet))
	if code != http.StatusOK {
		t.Fatalf("InjectFault ComputePartition: %d %s", code, raw)
	}
	waitLog(t, logs, "heartbeat failed")
	waitLog(t, logs, "reconnect failed")
	waitLog(t, logs, "status 403") // the refusal of its reconnects
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":31}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	gs, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), Location: aws.String("custom-partition"),
		MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatalf("CreateGameSession after the partition: %v", err)
	}
	select {
	case id := <-started:
		if id != aws.ToString(gs.GameSession.GameSessionId) {
			t.Errorf("the game got session %s, want %s", id, aws.ToString(gs.GameSession.GameSessionId))
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the game never got its session after the partition; SDK log:\n%s", logs.String())
	}
}

// partitionedProcess connects a server SDK process of compute part-host that reports health
// every 100 ms and reconnects quickly, logging to logs.
func partitionedProcess(t *testing.T, srv *server.Server, fleet, token string, logs *syncBuffer, started chan<- string) {
	sdk := serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(logs, nil)), Getenv: func(string) string { return "" },
		HealthInterval: 100 * time.Millisecond, HealthJitter: time.Millisecond, CallTimeout: 300 * time.Millisecond,
		ConnectBackoff: 50 * time.Millisecond, MaxConnectBackoff: 200 * time.Millisecond})
	ctx := context.Background()
	if err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), ProcessID: "part-p",
		HostID: "part-host", FleetID: fleet, AuthToken: token}); err != nil {
		t.Fatal(err)
	}
	err := sdk.ProcessReady(ctx, serversdk.ProcessParameters{Port: 21100, OnHealthCheck: func() bool { return true },
		OnStartGameSession: func(gs serversdk.GameSession) {
			sdk.ActivateGameSession(context.Background())
			started <- gs.GameSessionID
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdk.Destroy() })
}

// waitLog waits until the SDK's log holds want.
func waitLog(t *testing.T, logs *syncBuffer, want string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(logs.String(), want) {
			return
		}
	}
	t.Fatalf("the SDK never logged %q:\n%s", want, logs.String())
}
