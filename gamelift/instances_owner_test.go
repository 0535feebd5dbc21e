package gamelift

import (
	"slices"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// TestInstanceOwnership: two nodes share a store; a fleet's two instances go one to each; a
// node reports only on its own; when node B stops reporting, node A's monitor takes B's
// instance over as an instance loss (its process and game session end, INSTANCE_RECYCLED), and
// B's late reports change nothing.
func TestInstanceOwnership(t *testing.T) {
	a, b := twoNodes(t)
	clk := a.clock
	report := func(f *fixture, id string) {
		must(t, f.svc.ReportNode(f.ctx, Node{ID: id, APIURL: "http://" + id}))
	}
	report(a, "node-a")
	report(b, "node-b")
	fleet := a.managedFleet(t)
	ok(a.h.UpdateFleetCapacity(a.ctx, &api.UpdateFleetCapacityInput{FleetId: api.String(fleet), DesiredInstances: api.Int32(2), MaxSize: api.Int32(2)}))(t)
	onA, onB := a.localInstances(t, fleet), b.localInstances(t, fleet)
	if len(onA) != 1 || len(onB) != 1 || onA[0].InstanceID == onB[0].InstanceID {
		t.Fatalf("instances on A %+v, on B %+v: want one each", onA, onB)
	}
	lost := onB[0].InstanceID
	must(t, a.svc.InstanceProgress(a.ctx, fleet, lost, StageActivating)) // not A's: ignored
	if st := instanceStatus(t, a, fleet, lost); st != api.InstanceStatusPending {
		t.Fatalf("a report from a node that does not own the instance changed it to %s", st)
	}
	for _, stage := range []string{StageDownloading, StageValidating, StageBuilding, StageActivating} {
		must(t, b.svc.InstanceProgress(b.ctx, fleet, lost, stage))
	}
	token, _ := ok2(b.svc.InstanceAuthToken(b.ctx, fleet, lost))(t)
	ref := ProcessRef{FleetID: fleet, ComputeName: lost, ProcessID: "p-b"}
	must(t, b.svc.AdmitProcess(b.ctx, ref, token))
	must(t, b.svc.ActivateServerProcess(b.ctx, ref, ProcessActivation{Port: 7000}))
	must(t, b.svc.ManagedProcessReady(b.ctx, fleet))
	gs := ok(a.h.CreateGameSession(a.ctx, &api.CreateGameSessionInput{FleetId: api.String(fleet), MaximumPlayerSessionCount: api.Int32(2)}))(t).GameSession
	must(t, b.svc.ActivateGameSession(b.ctx, ref, *gs.GameSessionId))

	clk.Advance(NodeLease + time.Second)
	report(a, "node-a")
	must(t, a.svc.InstanceMonitor().Step(a.ctx))
	if got := a.localInstances(t, fleet); len(got) != 2 || len(b.localInstances(t, fleet)) != 0 {
		t.Fatalf("after node B went quiet: A runs %d instances, B %d", len(got), len(b.localInstances(t, fleet)))
	}
	if st := instanceStatus(t, a, fleet, lost); st != api.InstanceStatusPending {
		t.Errorf("the taken-over instance is %s, want PENDING (set up again)", st)
	}
	after := ok(a.h.DescribeGameSessions(a.ctx, &api.DescribeGameSessionsInput{GameSessionId: gs.GameSessionId}))(t).GameSessions[0]
	if *after.Status != api.GameSessionStatusTerminated || after.StatusReason == nil || *after.StatusReason != api.GameSessionStatusReasonInterrupted {
		t.Errorf("the lost instance's game session is %s (%v)", *after.Status, after.StatusReason)
	}
	if !slices.Contains(a.eventCodes(t, fleet), string(api.EventCodeInstanceRecycled)) {
		t.Errorf("events %v: no INSTANCE_RECYCLED", a.eventCodes(t, fleet))
	}
	must(t, b.svc.InstanceGone(b.ctx, fleet, lost)) // B comes back and winds down what it lost
	if st := instanceStatus(t, a, fleet, lost); st != api.InstanceStatusPending {
		t.Errorf("B's report on an instance it no longer owns removed it (%s)", st)
	}
}

func instanceStatus(t *testing.T, f *fixture, fleet, id string) api.InstanceStatus {
	t.Helper()
	for _, in := range ok(f.h.DescribeInstances(f.ctx, &api.DescribeInstancesInput{FleetId: api.String(fleet)}))(t).Instances {
		if *in.InstanceId == id {
			return *in.Status
		}
	}
	return ""
}
