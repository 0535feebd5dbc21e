package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// TestFaultProcessCrashUnderAgent: in dev mode, Hoist.InjectFault ProcessCrash reaches a
// process of an Anywhere fleet that a real `hoist agent` runs: the order goes through the
// outbox to the agent, which kills the example game server with SIGKILL. The API then sees
// what it sees of any crash: the game session TERMINATED, a SERVER_PROCESS_CRASHED event, and
// the agent's replacement process ACTIVE.
func TestFaultProcessCrashUnderAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newDevAgentRig(t, 1)
	r.startAgent("host-1")
	eventually(t, 60*time.Second, "1 ACTIVE process", func() bool { return r.activeProcesses() == 1 })
	before := pidsOf(r.game)
	gs := createSessionAt(t, r.gl, r.fleet, sessionLocation)
	code, raw := hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"ProcessCrash","GameSessionId":%q}`, gs))
	if code != http.StatusOK {
		t.Fatalf("InjectFault ProcessCrash: %d %s", code, raw)
	}
	eventually(t, 30*time.Second, "the game session TERMINATED", func() bool {
		return sessionStatus(t, r.gl, aws.String(gs)) == types.GameSessionStatusTerminated
	})
	eventually(t, 30*time.Second, "a SERVER_PROCESS_CRASHED event", func() bool { return r.hasEvent(types.EventCodeServerProcessCrashed) })
	eventually(t, 60*time.Second, "the crashed process replaced", func() bool {
		pids := pidsOf(r.game)
		return len(pids) == 1 && !slices.Contains(before, pids[0]) && r.activeProcesses() == 1
	})
	code, raw = hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"ProcessCrash","FleetId":%q,"ProcessId":"no-such"}`, r.fleet))
	if code != http.StatusBadRequest && code != http.StatusNotFound {
		t.Errorf("crashing an unknown process: %d %s", code, raw)
	}
}

// newDevAgentRig is a dev-mode server (virtual time) with an Anywhere fleet in
// sessionLocation running the example game server, for `hoist agent` (startAgent).
func newDevAgentRig(t *testing.T, processes int32) *hostingRig {
	r := &hostingRig{t: t, data: t.TempDir(), hoistBin: buildHoist(t), game: goBuild(t, "../examples/gameserver", "gameserver")}
	t.Cleanup(func() {
		for _, pid := range pidsOf(r.game) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	r.srv = startServer(t, server.Config{Dev: true, DataDir: r.data})
	r.addr, r.gl = r.srv.Addr(), client(r.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	if _, err := r.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(sessionLocation)}); err != nil {
		t.Fatal(err)
	}
	f, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("dev-agent"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(sessionLocation)}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String(r.game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(processes)}}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	r.fleet = aws.ToString(f.FleetAttributes.FleetId)
	return r
}

// createSessionAt creates a game session on fleet in location and waits until it is ACTIVE.
func createSessionAt(t *testing.T, gl *gamelift.Client, fleet, location string) string {
	t.Helper()
	out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	id := out.GameSession.GameSessionId
	eventually(t, 30*time.Second, "the game session ACTIVE", func() bool { return sessionStatus(t, gl, id) == types.GameSessionStatusActive })
	return aws.ToString(id)
}

// TestFaultSpotInterruptionUnderAgent: in dev mode, Hoist.InjectFault SpotInterruption with a
// FleetId and ComputeName gives an Anywhere compute run by a real `hoist agent` the 2-minute
// notice. The game sees OnProcessTerminate (the example game server then ends its session);
// the API shows INSTANCE_INTERRUPTED; once virtual time passes the 2 minutes the compute is
// reclaimed: deregistered, its agent stops every process and exits.
func TestFaultSpotInterruptionUnderAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newDevAgentRig(t, 1)
	r.startAgent("host-1")
	eventually(t, 60*time.Second, "1 ACTIVE process", func() bool { return r.activeProcesses() == 1 })
	gs := createSessionAt(t, r.gl, r.fleet, sessionLocation)
	code, raw := hoistOp(t, r.srv.URL(), server.InjectFaultTarget, fmt.Sprintf(`{"Kind":"SpotInterruption","FleetId":%q,"ComputeName":"host-1"}`, r.fleet))
	if code != http.StatusOK {
		t.Fatalf("InjectFault SpotInterruption: %d %s", code, raw)
	}
	if !r.hasEvent(types.EventCodeInstanceInterrupted) {
		t.Error("no INSTANCE_INTERRUPTED event")
	}
	eventually(t, 30*time.Second, "the game to end its session on OnProcessTerminate", func() bool {
		return sessionStatus(t, r.gl, aws.String(gs)) == types.GameSessionStatusTerminated
	})
	exited := make(chan error, 1)
	go func() { exited <- r.agent.Wait() }()
	if code, raw := hoistOp(t, r.srv.URL(), server.AdvanceTimeTarget, `{"Seconds":121}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	select {
	case <-exited:
	case <-time.After(60 * time.Second):
		t.Fatal("the agent did not stop after its compute was reclaimed")
	}
	_, err := r.gl.DescribeCompute(context.Background(), &gamelift.DescribeComputeInput{FleetId: aws.String(r.fleet), ComputeName: aws.String("host-1")})
	if apiCode(err) != "NotFoundException" {
		t.Errorf("DescribeCompute after the reclaim: %v, want NotFoundException", err)
	}
	if pids := pidsOf(r.game); len(pids) > 0 {
		t.Errorf("game server processes %v outlive the reclaimed compute", pids)
	}
}
