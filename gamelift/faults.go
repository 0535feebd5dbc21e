package gamelift

import (
	"context"
	"fmt"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// LoseInstance makes a managed fleet's instance lost, as when its host disappears (fault
// injection, docs/dev.md): its live processes are TERMINATED and their game sessions
// TERMINATED with reason INTERRUPTED, as in a node takeover; the fleet gets an
// INSTANCE_RECYCLED event; and the instance is TERMINATING, so that its host tears it down and
// the fleet's capacity is made up with a new instance.
func (s *Service) LoseInstance(ctx context.Context, fleetID, instanceID string) error {
	return s.update(ctx, func(tx store.Tx) error {
		var d ec2InstanceDoc
		notFound := func() error {
			return api.Errorf(api.NotFoundException, "Instance %s not found in fleet %s.", instanceID, fleetID)
		}
		rec, err := getDoc(tx, kindEC2Instance, instanceID, &d, notFound)
		if err != nil {
			return err
		}
		if d.FleetID != fleetID {
			return notFound()
		}
		if d.Status == ec2Terminating {
			return api.Errorf(api.InvalidRequestException, "Instance %s is already TERMINATING.", instanceID)
		}
		if err := s.endInstanceProcesses(tx, &d); err != nil {
			return err
		}
		d.Status = ec2Terminating
		if err := putDoc(tx, rec, &d); err != nil {
			return err
		}
		return s.addEvent(tx, fleetID, api.EventCodeInstanceRecycled, fmt.Sprintf(
			"Instance %s was lost (a fault injected with Hoist.InjectFault); its game sessions ended and it is replaced.", instanceID))
	})
}
