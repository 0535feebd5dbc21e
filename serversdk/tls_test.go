package serversdk_test

import (
	"context"
	"crypto/tls"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/internal/tlsca"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
	"github.com/hoist-gg/hoist/serversdk"
)

func TestWSSWithHoistCA(t *testing.T) {
	ca, err := tlsca.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := ca.TLSConfig(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &sdkwstest.Backend{}
	hub := sdkws.New(sdkws.Config{Backend: b})
	srv := httptest.NewUnstartedServer(hub)
	srv.TLS = cfg
	srv.StartTLS()
	defer srv.Close()
	defer hub.Close()
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/sdk"
	params := serversdk.ServerParameters{WebSocketURL: url, AuthToken: "good", FleetID: "fleet-1", HostID: "host-1", ProcessID: "tls-1"}

	sdk := serversdk.New(serversdk.Options{TLSConfig: &tls.Config{RootCAs: ca.Pool()}})
	defer sdk.Destroy()
	if err := sdk.InitSDK(context.Background(), params); err != nil {
		t.Fatalf("wss with the CA trusted: %v", err)
	}
	untrusting := serversdk.New(serversdk.Options{ConnectAttempts: 1})
	if err := untrusting.InitSDK(context.Background(), params); err == nil {
		t.Error("wss without trusting the CA connected")
	}
}
