package gamelift

import (
	"context"
	"fmt"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// SpotNotice is how long before GameLift reclaims a spot instance it gives notice.
const SpotNotice = 2 * time.Minute

// LoseInstance makes a managed fleet's instance lost, as when its host disappears (fault
// injection, docs/dev.md): its live processes are TERMINATED and their game sessions
// TERMINATED with reason INTERRUPTED, as in a node takeover; the fleet gets an
// INSTANCE_RECYCLED event; and the instance is TERMINATING, so that its host tears it down and
// the fleet's capacity is made up with a new instance.
func (s *Service) LoseInstance(ctx context.Context, fleetID, instanceID string) error {
	return s.update(ctx, func(tx store.Tx) error {
		rec, d, err := liveInstance(tx, fleetID, instanceID)
		if err != nil {
			return err
		}
		if err := s.endInstanceProcesses(tx, d); err != nil {
			return err
		}
		d.Status = ec2Terminating
		if err := putDoc(tx, rec, d); err != nil {
			return err
		}
		return s.addEvent(tx, fleetID, api.EventCodeInstanceRecycled, fmt.Sprintf(
			"Instance %s was lost (a fault injected with Hoist.InjectFault); its game sessions ended and it is replaced.", instanceID))
	})
}

// InterruptInstance gives a managed fleet's instance GameLift's spot interruption notice
// (fault injection, docs/dev.md): each of its live processes is sent TerminateProcess with a
// termination time SpotNotice ahead, and the fleet gets an INSTANCE_INTERRUPTED event. It
// returns the termination time; the caller loses the instance then (LoseInstance).
func (s *Service) InterruptInstance(ctx context.Context, fleetID, instanceID string) (time.Time, error) {
	var at time.Time
	err := s.update(ctx, func(tx store.Tx) error {
		_, d, err := liveInstance(tx, fleetID, instanceID)
		if err != nil {
			return err
		}
		end := s.nowMillis() + SpotNotice.Milliseconds()
		at = time.UnixMilli(end)
		if err := s.noticeComputeProcesses(tx, d.FleetID, d.ID, end); err != nil {
			return err
		}
		return s.addEvent(tx, fleetID, api.EventCodeInstanceInterrupted, fmt.Sprintf(
			"Instance %s received a spot interruption notice (a fault injected with Hoist.InjectFault); it is reclaimed at %s.",
			instanceID, at.UTC().Format(time.RFC3339)))
	})
	return at, err
}

// noticeComputeProcesses queues TerminateProcess, ending at end (Unix ms), for each live
// process of the compute (a managed fleet's instance, or an Anywhere compute). The processes
// stay as they are: the game decides what to do.
func (s *Service) noticeComputeProcesses(tx store.Tx, fleetID, compute string, end int64) error {
	return eachChild(tx, kindProcess, fleetID, func(_ *store.Record, p *processDoc) error {
		if p.Compute != compute || (p.Status != processInitializing && p.Status != processActive) {
			return nil
		}
		return s.enqueue(tx, ProcessAddress(p.FleetID, p.ProcessID), MessageTerminateProcess,
			ProcessTermination{Time: time.UnixMilli(end)}, end)
	})
}

// liveInstance reads a managed fleet's instance that is not yet TERMINATING.
func liveInstance(tx store.Tx, fleetID, instanceID string) (*store.Record, *ec2InstanceDoc, error) {
	var d ec2InstanceDoc
	notFound := func() error {
		return api.Errorf(api.NotFoundException, "Instance %s not found in fleet %s.", instanceID, fleetID)
	}
	rec, err := getDoc(tx, kindEC2Instance, instanceID, &d, notFound)
	if err != nil {
		return nil, nil, err
	}
	if d.FleetID != fleetID {
		return nil, nil, notFound()
	}
	if d.Status == ec2Terminating {
		return nil, nil, api.Errorf(api.InvalidRequestException, "Instance %s is already TERMINATING.", instanceID)
	}
	return rec, &d, nil
}
