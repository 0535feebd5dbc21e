package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

// computeToken registers compute in fleet's custom location and returns its SDK endpoint and
// an auth token.
func computeToken(t *testing.T, gl *gamelift.Client, fleet, location, compute string) (endpoint, token string) {
	t.Helper()
	ctx := context.Background()
	reg, err := gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(fleet),
		ComputeName: aws.String(compute), IpAddress: aws.String("127.0.0.1"), Location: aws.String(location)})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleet), ComputeName: aws.String(compute)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(reg.Compute.GameLiftServiceSdkEndpoint), aws.ToString(tok.AuthToken)
}

// sdkURL builds the URL the Server SDKs dial (server-sdk-protocol.md §1.3).
func sdkURL(endpoint, fleet, compute, pid, token string) string {
	q := url.Values{"pID": {pid}, "sdkVersion": {"5.6.0"}, "sdkLanguage": {"Go"}, "ComputeId": {compute},
		"FleetId": {fleet}, "IdempotencyToken": {"t-" + pid}, "Authorization": {token}}
	return endpoint + "?" + q.Encode()
}

// TestSDKEndpointRejectsBadCredentialsAndFrames checks, against a real server, that wrong
// tokens and tokens of another fleet are refused with 403, and that a malformed frame gets an
// error reply, all without harming a process that is connected properly.
func TestSDKEndpointRejectsBadCredentialsAndFrames(t *testing.T) {
	srv := startServer(t, server.Config{})
	gl := client(srv.URL(), testKeyID, testSecret)
	fleetA := createAnywhereFleet(t, gl, "custom-auth-a")
	fleetB := createAnywhereFleet(t, gl, "custom-auth-b")
	endpoint, tokenA := computeToken(t, gl, fleetA, "custom-auth-a", "host-a")
	_, tokenB := computeToken(t, gl, fleetB, "custom-auth-b", "host-b")

	good := serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := good.InitSDK(context.Background(), serversdk.ServerParameters{WebSocketURL: endpoint, ProcessID: "good",
		HostID: "host-a", FleetID: fleetA, AuthToken: tokenA}); err != nil {
		t.Fatalf("InitSDK: %v", err)
	}
	defer good.Destroy()
	if err := good.ProcessReady(context.Background(), serversdk.ProcessParameters{Port: 7777, OnProcessTerminate: func() {}}); err != nil {
		t.Fatalf("ProcessReady: %v", err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for name, u := range map[string]string{
		"wrong token":            sdkURL(endpoint, fleetA, "host-a", "p1", "not-a-token"),
		"another fleet's token":  sdkURL(endpoint, fleetA, "host-a", "p2", tokenB),
		"token for another host": sdkURL(endpoint, fleetA, "host-b", "p3", tokenA),
	} {
		_, resp, err := websocket.Dial(ctx, u, nil)
		if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("%s: want 403, got %v (%v)", name, resp, err)
		}
	}

	ws, _, err := websocket.Dial(ctx, sdkURL(endpoint, fleetA, "host-a", "raw", tokenA), nil)
	if err != nil {
		t.Fatalf("a valid raw connection was refused: %v", err)
	}
	defer ws.CloseNow()
	for _, frame := range []string{`{not json`, `{"Action":"NoSuchAction","RequestId":"r1"}`, `[1,2,3]`} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		_, reply, err := ws.Read(ctx)
		var env struct{ StatusCode int }
		if err != nil || json.Unmarshal(reply, &env) != nil || env.StatusCode < 400 || env.StatusCode >= 500 {
			t.Errorf("frame %s: reply %s, %v; want a 4xx error reply", frame, reply, err)
		}
	}
	util, err := gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleetA}})
	if err != nil || aws.ToInt32(util.FleetUtilization[0].ActiveServerProcessCount) != 1 {
		t.Errorf("the good process after the bad traffic: %v %+v", err, util)
	}
	if err := good.ProcessEnding(context.Background()); err != nil {
		t.Errorf("the good process can no longer talk to the server: %v", err)
	}
}

// TestSDKOverTLSAndSigV4 connects Hoist's server SDK to a real server over wss:// (trusting
// Hoist's CA) with a compute auth token, and over ws:// in the SDK's SigV4 mode.
func TestSDKOverTLSAndSigV4(t *testing.T) {
	data := t.TempDir()
	srv := startServer(t, server.Config{DataDir: data, TLSListen: "127.0.0.1:0"})
	gl := client(srv.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, gl, "custom-tls-lab")
	_, token := computeToken(t, gl, fleet, "custom-tls-lab", "host-tls")
	ca, err := os.ReadFile(filepath.Join(data, "tls", "ca.crt"))
	if err != nil {
		t.Fatalf("Hoist's CA certificate: %v", err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := map[string]struct {
		opts serversdk.Options
		p    serversdk.ServerParameters
	}{
		"wss with a token": {serversdk.Options{Logger: quiet, TLSConfig: &tls.Config{RootCAs: pool}},
			serversdk.ServerParameters{WebSocketURL: "wss://" + srv.TLSAddr() + server.SDKPath, AuthToken: token}},
		"ws with SigV4": {serversdk.Options{Logger: quiet},
			serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), AwsRegion: "us-west-2", AccessKey: testKeyID, SecretKey: testSecret}},
	}
	for name, c := range cases {
		c.p.ProcessID, c.p.HostID, c.p.FleetID = "p-"+strings.ReplaceAll(name, " ", "-"), "host-tls", fleet
		c.opts.Getenv = func(string) string { return "" }
		sdk := serversdk.New(c.opts)
		if err := sdk.InitSDK(context.Background(), c.p); err != nil {
			t.Errorf("%s: InitSDK: %v", name, err)
			continue
		}
		if err := sdk.ProcessReady(context.Background(), serversdk.ProcessParameters{Port: 7000, OnProcessTerminate: func() {}}); err != nil {
			t.Errorf("%s: ProcessReady: %v", name, err)
		}
		sdk.Destroy()
	}
	bad := serversdk.New(serversdk.Options{Logger: quiet, Getenv: func(string) string { return "" }})
	err = bad.InitSDK(context.Background(), serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), ProcessID: "p-bad-sig",
		HostID: "host-tls", FleetID: fleet, AwsRegion: "us-west-2", AccessKey: testKeyID, SecretKey: "wrong"})
	if err == nil {
		t.Error("SigV4 with a wrong secret was admitted")
		bad.Destroy()
	}
}
