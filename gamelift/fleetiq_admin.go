package gamelift

import (
	"context"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// SetGameServerInstanceStatusTarget is the awsJson1_1 X-Amz-Target of Hoist's one FleetIQ
// operation outside GameLift's model: it stands in for what EC2 and FleetIQ decide in AWS (an
// instance being rebalanced, or a Spot interruption notice). Requests are SigV4-signed like
// every other.
const SetGameServerInstanceStatusTarget = "Hoist.SetGameServerInstanceStatus"

// SetGameServerInstanceStatusInput is the input of Hoist.SetGameServerInstanceStatus.
type SetGameServerInstanceStatusInput struct {
	// GameServerGroupName is the group's name or ARN. Required.
	GameServerGroupName *string `json:"GameServerGroupName,omitzero"`
	// InstanceId is an instance of the group (one a game server registered from). Required.
	InstanceId *string `json:"InstanceId,omitzero"`
	// InstanceStatus is ACTIVE, DRAINING or SPOT_TERMINATING. Required.
	InstanceStatus *api.GameServerInstanceStatus `json:"InstanceStatus,omitzero"`
}

// SetGameServerInstanceStatusOutput is the output of Hoist.SetGameServerInstanceStatus.
type SetGameServerInstanceStatusOutput struct {
	GameServerInstance *api.GameServerInstance `json:"GameServerInstance,omitzero"`
}

// SetGameServerInstanceStatus changes an instance's status. A DRAINING or SPOT_TERMINATING
// instance takes no new game servers; its game servers are claimed only by claims whose filter
// allows DRAINING (never on SPOT_TERMINATING).
func (s *Service) SetGameServerInstanceStatus(ctx context.Context, in *SetGameServerInstanceStatusInput) (*SetGameServerInstanceStatusOutput, error) {
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	instance, status := api.Deref(in.InstanceId), string(api.Deref(in.InstanceStatus))
	switch {
	case instance == "" || in.GameServerGroupName == nil:
		return nil, api.Errorf(api.InvalidRequestException, "GameServerGroupName and InstanceId are required.")
	case status != instanceActive && status != instanceDraining && status != instanceSpotTerminating:
		return nil, api.Errorf(api.InvalidRequestException,
			"InstanceStatus must be ACTIVE, DRAINING or SPOT_TERMINATING, not %q.", status)
	}
	var doc instanceDoc
	err = s.update(ctx, func(tx store.Tx) error {
		return s.editInstance(tx, group, instance, false, func(d *instanceDoc) error {
			d.Status = status
			doc = *d
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	s.placements().invalidate(group)
	out := s.apiInstance(&doc)
	return &SetGameServerInstanceStatusOutput{GameServerInstance: &out}, nil
}
