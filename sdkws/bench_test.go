package sdkws_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
)

// BenchmarkHeartbeatRoundTrip measures one HeartbeatServerProcess request and its reply
// through the endpoint over loopback. Compare with BenchmarkEchoBaseline (the same socket
// library echoing frames, no decoding, no Backend) from the same run.
func BenchmarkHeartbeatRoundTrip(b *testing.B) {
	hub := sdkws.New(sdkws.Config{Backend: &sdkwstest.Backend{}})
	srv := httptest.NewServer(hub)
	defer srv.Close()
	defer hub.Close()
	benchRoundTrips(b, "ws"+strings.TrimPrefix(srv.URL, "http")+"/sdk"+goQuery)
}

// BenchmarkEchoBaseline is the baseline for BenchmarkHeartbeatRoundTrip: a bare websocket
// echo handler.
func BenchmarkEchoBaseline(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for {
			typ, data, err := ws.Read(r.Context())
			if err != nil || ws.Write(r.Context(), typ, data) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	benchRoundTrips(b, "ws"+strings.TrimPrefix(srv.URL, "http"))
}

func benchRoundTrips(b *testing.B, u string) {
	ctx := context.Background()
	ws, _, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer ws.CloseNow()
	frame := []byte(`{"Action":"HeartbeatServerProcess","RequestId":"8f1b2c3d-0000-4000-8000-000000000000","HealthStatus":true}`)
	b.ReportAllocs()
	for b.Loop() {
		if err := ws.Write(ctx, websocket.MessageText, frame); err != nil {
			b.Fatal(err)
		}
		if _, _, err := ws.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdleSockets opens 1,000 idle SDK sockets and reports the Go heap and stack in use
// per socket, client and server sides together (both live in this process; the server-only
// figure comes from sdkws/internal/idlesockets).
func BenchmarkIdleSockets(b *testing.B) {
	const n = 1000
	for b.Loop() {
		hub := sdkws.New(sdkws.Config{Backend: &sdkwstest.Backend{}})
		srv := httptest.NewServer(hub)
		before := inUse()
		conns := make([]*websocket.Conn, 0, n)
		for i := range n {
			u := "ws" + strings.TrimPrefix(srv.URL, "http") + "/sdk" + strings.Replace(goQuery, "pID=p1", fmt.Sprintf("pID=p%d", i), 1)
			ws, _, err := websocket.Dial(context.Background(), u, nil)
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, ws)
		}
		b.ReportMetric(float64(inUse()-before)/n, "bytes/socket-pair")
		for _, c := range conns {
			c.CloseNow()
		}
		hub.Close()
		srv.Close()
	}
}

func inUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
