package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// TestFaultSlowStore: in dev mode, Hoist.InjectFault SlowStore makes every store write take
// Millis longer for Seconds of the server's clock: a write through the API is slow, a read is
// not, and once virtual time passes the window writes are fast again.
func TestFaultSlowStore(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	write := func(name string) time.Duration {
		start := time.Now()
		if _, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String(name),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("x")}}); err != nil {
			t.Fatalf("CreateAlias: %v", err)
		}
		return time.Since(start)
	}
	if code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"SlowStore","Millis":500,"Seconds":10}`); code != http.StatusOK {
		t.Fatalf("InjectFault SlowStore: %d %s", code, raw)
	}
	if d := write("slow"); d < 500*time.Millisecond {
		t.Errorf("a write during SlowStore took %v, want at least 500ms", d)
	}
	start := time.Now()
	if _, err := gl.ListAliases(ctx, &gamelift.ListAliasesInput{}); err != nil || time.Since(start) > 400*time.Millisecond {
		t.Errorf("a read during SlowStore: %v after %v", err, time.Since(start))
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":11}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	if d := write("fast"); d > 400*time.Millisecond {
		t.Errorf("a write after SlowStore took %v", d)
	}
	if code, _ := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"SlowStore","Millis":0,"Seconds":10}`); code != http.StatusBadRequest {
		t.Errorf("SlowStore with Millis 0: %d, want 400", code)
	}
}
