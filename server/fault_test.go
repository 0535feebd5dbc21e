package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// TestFaultProcessCrash: in dev mode, Hoist.InjectFault ProcessCrash kills the process that
// hosts a game session on a managed fleet's local instance. The API then reports what a crash
// reports: the game session TERMINATED, a SERVER_PROCESS_CRASHED fleet event, and a
// replacement process ACTIVE.
func TestFaultProcessCrash(t *testing.T) {
	r := newRig(t, "", nil)
	fleet := r.createFleet(2)
	r.waitFor("the fleet ACTIVE with 2 processes", func() bool { return r.settled(fleet, 1, 2) })
	ctx := context.Background()
	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	id := gs.GameSession.GameSessionId
	session := func() types.GameSession {
		out, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		if err != nil || len(out.GameSessions) != 1 {
			t.Fatalf("DescribeGameSessions: %v", err)
		}
		return out.GameSessions[0]
	}
	r.waitFor("the game session ACTIVE", func() bool { return session().Status == types.GameSessionStatusActive })
	code, raw := hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"ProcessCrash","GameSessionId":%q}`, aws.ToString(id)))
	if code != http.StatusOK || !strings.Contains(raw, fleet) {
		t.Fatalf("InjectFault ProcessCrash: %d %s", code, raw)
	}
	r.waitFor("the game session TERMINATED", func() bool { return session().Status == types.GameSessionStatusTerminated })
	r.waitFor("a SERVER_PROCESS_CRASHED event", func() bool {
		return slices.Contains(codes(r.events(fleet)), types.EventCodeServerProcessCrashed)
	})
	r.waitFor("a replacement process ACTIVE", func() bool { return r.settled(fleet, 1, 2) })
	t.Logf("crashed session: %s %s", session().Status, session().StatusReason)
	code, raw = hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"ProcessCrash","FleetId":%q,"ProcessId":"no-such"}`, fleet))
	if code != http.StatusBadRequest || !strings.Contains(raw, "NotFoundException") {
		t.Errorf("crashing a process that does not run: %d %s", code, raw)
	}
}

// TestFaultInstanceLoss: in dev mode, Hoist.InjectFault InstanceLoss loses a managed fleet's
// instance: its game session ends INTERRUPTED, the fleet gets an INSTANCE_RECYCLED event, and
// a new instance makes up the capacity.
func TestFaultInstanceLoss(t *testing.T) {
	r := newRig(t, "", nil)
	fleet := r.createFleet(2)
	r.waitFor("the fleet ACTIVE with 2 processes", func() bool { return r.settled(fleet, 1, 2) })
	ctx := context.Background()
	lost := aws.ToString(r.instances(fleet)[0].InstanceId)
	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	session := func() types.GameSession {
		out, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSession.GameSessionId})
		if err != nil || len(out.GameSessions) != 1 {
			t.Fatalf("DescribeGameSessions: %v", err)
		}
		return out.GameSessions[0]
	}
	r.waitFor("the game session ACTIVE", func() bool { return session().Status == types.GameSessionStatusActive })
	code, raw := hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"InstanceLoss","FleetId":%q,"InstanceId":%q}`, fleet, lost))
	if code != http.StatusOK {
		t.Fatalf("InjectFault InstanceLoss: %d %s", code, raw)
	}
	if s := session(); s.Status != types.GameSessionStatusTerminated || s.StatusReason != types.GameSessionStatusReasonInterrupted {
		t.Errorf("the lost instance's game session: %s %s", s.Status, s.StatusReason)
	}
	if !slices.Contains(codes(r.events(fleet)), types.EventCodeInstanceRecycled) {
		t.Errorf("no INSTANCE_RECYCLED event: %v", codes(r.events(fleet)))
	}
	r.waitFor("a new instance ACTIVE with 2 processes", func() bool {
		return r.settled(fleet, 1, 2) && aws.ToString(r.instances(fleet)[0].InstanceId) != lost
	})
}
