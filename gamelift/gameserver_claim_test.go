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
	err := f.store.Update(f.ctx, func(tx store.Tx) error {
		var d instanceDoc
		rec, err := getDoc(tx, kindGameServerInstance, instanceKey("g", instanceID(1)), &d, func() error { return store.ErrNotFound })
		if err != nil {
			return err
		}
		d.Status = instanceDraining
		return putDoc(tx, rec, &d)
	})
	if err != nil {
		t.Fatal(err)
	}
	wantCode(t, claimID("a-1"), api.ConflictException)
	ok(f.svc.SetGameServerInstanceStatus(f.ctx, &SetGameServerInstanceStatusInput{GameServerGroupName: api.String("g"),
		InstanceId: api.String(instanceID(1)), InstanceStatus: ptr(api.GameServerInstanceStatusActive)}))(t)
	if err := claimID("a-1"); err != nil {
		t.Fatal(err)
	}
}
