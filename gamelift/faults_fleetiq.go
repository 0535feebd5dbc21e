package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// InterruptGameServerInstance gives an instance of a FleetIQ game server group the spot
// interruption notice (fault injection, docs/dev.md): the instance becomes SPOT_TERMINATING,
// so DescribeGameServerInstances shows it, claims skip its game servers (a claim by
// GameServerId is refused) and no new game server registers on it. It returns the group's
// name and when the instance is reclaimed, SpotNotice ahead; the caller reclaims it then
// (ReclaimGameServerInstance).
func (s *Service) InterruptGameServerInstance(ctx context.Context, groupNameOrARN, instance string) (string, time.Time, error) {
	group, err := s.groupName(&groupNameOrARN)
	if err != nil {
		return "", time.Time{}, err
	}
	at := time.UnixMilli(s.nowMillis() + SpotNotice.Milliseconds())
	err = s.update(ctx, func(tx store.Tx) error {
		return s.editInstance(tx, group, instance, false, func(d *instanceDoc) error {
			if d.Status == instanceSpotTerminating {
				return api.Errorf(api.InvalidRequestException, "Instance %s is already SPOT_TERMINATING.", instance)
			}
			d.Status = instanceSpotTerminating
			return nil
		})
	})
	if err != nil {
		return "", time.Time{}, err
	}
	s.placements().invalidate(group)
	return group, at, nil
}

// ReclaimGameServerInstance removes an instance from its FleetIQ game server group as EC2
// does when it reclaims a spot instance: its game servers are deregistered and the instance
// is no longer listed. An instance already gone (its group deleted) is not an error.
func (s *Service) ReclaimGameServerInstance(ctx context.Context, group, instance string) error {
	defer s.placements().invalidate(group)
	return s.update(ctx, func(tx store.Tx) error {
		err := tx.Delete(kindGameServerInstance, instanceKey(group, instance))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return deleteInstanceServers(tx, group, instance)
	})
}

// deleteInstanceServers deletes the game servers of group that run on instance, and their
// slots.
func deleteInstanceServers(tx store.Tx, group, instance string) error {
	recs, err := tx.List(kindGameServer, store.ListOptions{Parent: group})
	if err != nil {
		return err
	}
	for _, r := range recs {
		var d serverDoc
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return err
		}
		if d.Instance != instance {
			continue
		}
		if err := tx.Delete(kindGameServer, r.ID); err != nil {
			return err
		}
		if err := deleteSlot(tx, r.ID); err != nil {
			return err
		}
	}
	return nil
}
