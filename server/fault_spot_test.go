package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// TestFaultSpotInterruption: in dev mode, Hoist.InjectFault SpotInterruption gives a managed
// fleet's instance the 2-minute notice. The game sees OnProcessTerminate (the example game
// server then calls ProcessEnding, so its game session ends); the API shows an
// INSTANCE_INTERRUPTED event and the reclaim time; and once virtual time passes the 2 minutes
// the instance is lost (INSTANCE_RECYCLED) and replaced.
func TestFaultSpotInterruption(t *testing.T) {
	r := newRig(t, "", nil)
	fleet := r.createFleet(2)
	r.waitFor("the fleet ACTIVE with 2 processes", func() bool { return r.settled(fleet, 1, 2) })
	ctx := context.Background()
	spot := aws.ToString(r.instances(fleet)[0].InstanceId)
	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	status := func() types.GameSessionStatus {
		out, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
		if err != nil || len(out.GameSessions) != 1 {
			t.Fatalf("DescribeGameSessions: %v", err)
		}
		return out.GameSessions[0].Status
	}
	r.waitFor("the game session ACTIVE", func() bool { return status() == types.GameSessionStatusActive })
	before := time.Now()
	out := injectSpot(t, r.srv.URL(), fleet, spot)
	if until, _ := time.Parse(time.RFC3339Nano, out.Until); until.Sub(before) < 119*time.Second || until.Sub(before) > 2*time.Minute+5*time.Second {
		t.Errorf("reclaim time %s is not 2 minutes ahead", out.Until)
	}
	if !slices.Contains(codes(r.events(fleet)), types.EventCodeInstanceInterrupted) {
		t.Errorf("no INSTANCE_INTERRUPTED event: %v", codes(r.events(fleet)))
	}
	r.waitFor("the game to end its session on OnProcessTerminate", func() bool { return status() == types.GameSessionStatusTerminated })
	if slices.Contains(codes(r.events(fleet)), types.EventCodeInstanceRecycled) {
		t.Fatal("the instance was lost before its 2 minutes")
	}
	if code, raw := hoistOp(t, r.srv.URL(), server.AdvanceTimeTarget, `{"Seconds":121}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	r.waitFor("INSTANCE_RECYCLED", func() bool { return slices.Contains(codes(r.events(fleet)), types.EventCodeInstanceRecycled) })
	r.waitFor("a new instance ACTIVE with 2 processes", func() bool {
		return r.settled(fleet, 1, 2) && aws.ToString(r.instances(fleet)[0].InstanceId) != spot
	})
}

// injectSpot injects a SpotInterruption and decodes the answer.
func injectSpot(t *testing.T, url, fleet, instance string) server.InjectFaultOutput {
	t.Helper()
	code, raw := hoistOp(t, url, server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"SpotInterruption","FleetId":%q,"InstanceId":%q}`, fleet, instance))
	var out server.InjectFaultOutput
	if code != http.StatusOK || json.Unmarshal([]byte(raw), &out) != nil {
		t.Fatalf("InjectFault SpotInterruption: %d %s", code, raw)
	}
	return out
}
