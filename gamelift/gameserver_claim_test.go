package gamelift

import (
	"testing"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// A claim checks its instance's status in the claim's transaction, even when this node has
// decoded that instance before: a change written by another node (here straight into the
// store, with no snapshot invalidated) is seen by the next claim.
func TestClaimSeesInstanceStatusChange(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	for _, id := range []string{"a-0", "a-1", "a-2"} {
		register(t, f, "g", id, 1)
	}
	claimID := func(id string) error {
		_, err := f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String(id)})
		return err
	}
	if err := claimID("a-0"); err != nil {
		t.Fatal(err)
	}
	drainBehindTheCache(t, f, "g", instanceID(1))
	wantCode(t, claimID("a-1"), api.ConflictException)
	ok(f.svc.SetGameServerInstanceStatus(f.ctx, &SetGameServerInstanceStatusInput{GameServerGroupName: api.String("g"),
		InstanceId: api.String(instanceID(1)), InstanceStatus: ptr(api.GameServerInstanceStatusActive)}))(t)
	if err := claimID("a-1"); err != nil {
		t.Fatal(err)
	}
}

// A placed claim whose ranking is stale (another node drained the instance it ranks first,
// without this node's snapshot knowing) reloads the ranking and claims elsewhere instead of
// losing every round.
func TestPlacedClaimAfterRemoteDrain(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	register(t, f, "g", "a-0", 1)
	register(t, f, "g", "a-1", 1)
	register(t, f, "g", "b-0", 2)
	claim := func() (*api.ClaimGameServerOutput, error) {
		return f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g")})
	}
	out, err := claim() // loads this node's ranking: instance 1 first
	if err != nil || *out.GameServer.InstanceId != instanceID(1) {
		t.Fatalf("first claim: %+v, %v", out, err)
	}
	drainBehindTheCache(t, f, "g", instanceID(1))
	out, err = claim()
	if err != nil {
		t.Fatalf("claim after the remote drain: %v", err)
	}
	if *out.GameServer.GameServerId != "b-0" {
		t.Errorf("claimed %s, want b-0 on the ACTIVE instance", *out.GameServer.GameServerId)
	}
}

// drainBehindTheCache marks an instance DRAINING straight in the store, as another node would:
// this node's placement snapshot and caches are not told.
func drainBehindTheCache(t *testing.T, f *fixture, group, instance string) {
	t.Helper()
	err := f.store.Update(f.ctx, func(tx store.Tx) error {
		var d instanceDoc
		rec, err := getDoc(tx, kindGameServerInstance, instanceKey(group, instance), &d, func() error { return store.ErrNotFound })
		if err != nil {
			return err
		}
		d.Status = instanceDraining
		return putDoc(tx, rec, &d)
	})
	if err != nil {
		t.Fatal(err)
	}
}
