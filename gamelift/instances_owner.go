package gamelift

import (
	"cmp"
	"context"
	"fmt"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Instance ownership (docs/cluster.md). With several server nodes, each local instance of a
// managed fleet runs on exactly one of them, its owner, recorded in the instance. A new
// instance goes to the live node that owns fewest; an instance whose owner stopped reporting
// (NodeLease) is taken over by the leader's InstanceMonitor for the live node that owns
// fewest: as when GameLift loses an instance, its server processes are ended, their game
// sessions TERMINATED (INTERRUPTED), and the instance is set up again from the start on its
// new owner. A node lists (LocalInstances) and reports on only the instances it owns, so a
// node that was taken for dead and comes back stops what it no longer owns without touching
// the records. A Service without a node ID (Config.NodeID) is a cluster of one: ownership is
// not recorded.

// liveNodes returns the IDs of the nodes alive now; this node is alive by definition.
func (s *Service) liveNodes(tx store.Tx) (map[string]bool, error) {
	alive, err := s.aliveNodes(tx)
	live := map[string]bool{s.node: true}
	for id := range alive {
		live[id] = true
	}
	return live, err
}

// pickOwner returns the live node that owns fewest instances ("" without node IDs).
func (s *Service) pickOwner(tx store.Tx) (string, error) {
	if s.node == "" {
		return "", nil
	}
	live, err := s.liveNodes(tx)
	if err != nil {
		return "", err
	}
	owned := map[string]int{}
	for n := range live {
		owned[n] = 0
	}
	err = eachRecord(tx, kindEC2Instance, func(_ *store.Record, d *ec2InstanceDoc) {
		if live[d.Owner] {
			owned[d.Owner]++
		}
	})
	best := s.node
	for n, c := range owned {
		if c < owned[best] || (c == owned[best] && n < best) {
			best = n
		}
	}
	return best, err
}

// ownsInstance reports whether this node may act for instance id: it owns it, ownership is
// not recorded, or the instance is gone (nothing left to protect).
func (s *Service) ownsInstance(tx store.Tx, id string) (bool, error) {
	if s.node == "" {
		return true, nil
	}
	var d ec2InstanceDoc
	if _, err := getDoc(tx, kindEC2Instance, id, &d, func() error { return errSkip }); err != nil {
		return err == errSkip, ignoreSkip(err)
	}
	return d.Owner == "" || d.Owner == s.node, nil
}

// asOwner runs fn in a transaction when this node may act for the instance; otherwise it
// does nothing (a node that lost the instance to another is winding it down).
func (s *Service) asOwner(ctx context.Context, instanceID string, fn func(tx store.Tx) error) error {
	return s.update(ctx, func(tx store.Tx) error {
		ok, err := s.ownsInstance(tx, instanceID)
		if err != nil || !ok {
			return err
		}
		return fn(tx)
	})
}

// assignOwners gives every instance without a live owner to a live node.
func (s *Service) assignOwners(ctx context.Context) error {
	if s.node == "" {
		return nil
	}
	var orphans []string
	err := s.view(ctx, func(tx store.Tx) error {
		orphans = orphans[:0]
		live, err := s.liveNodes(tx)
		if err != nil {
			return err
		}
		return eachRecord(tx, kindEC2Instance, func(_ *store.Record, d *ec2InstanceDoc) {
			if !live[d.Owner] {
				orphans = append(orphans, d.ID)
			}
		})
	})
	if err != nil {
		return err
	}
	for _, id := range orphans {
		if err := ignoreUnchanged(s.update(ctx, func(tx store.Tx) error { return s.takeOver(tx, id) })); err != nil {
			return err
		}
	}
	return nil
}

// takeOver gives instance id to the live node that owns fewest, when its owner is not alive:
// an instance that had an owner is lost and set up again.
func (s *Service) takeOver(tx store.Tx, id string) error {
	var d ec2InstanceDoc
	rec, err := getDoc(tx, kindEC2Instance, id, &d, func() error { return errUnchanged })
	if err != nil {
		return err
	}
	live, err := s.liveNodes(tx)
	if err != nil || live[d.Owner] {
		return cmp.Or(err, errUnchanged)
	}
	owner, err := s.pickOwner(tx)
	if err != nil {
		return err
	}
	if d.Owner != "" {
		if err := s.loseInstance(tx, &d, owner); err != nil {
			return err
		}
	}
	d.Owner = owner
	return putDoc(tx, rec, &d)
}

// loseInstance ends, in tx, what ran on an instance whose node is gone: its live processes
// are TERMINATED and their game sessions TERMINATED with reason INTERRUPTED; a PENDING or
// ACTIVE instance is PENDING again, to be set up from the start; the fleet gets an
// INSTANCE_RECYCLED event.
func (s *Service) loseInstance(tx store.Tx, d *ec2InstanceDoc, newOwner string) error {
	if err := s.endInstanceProcesses(tx, d); err != nil {
		return err
	}
	if d.Status == ec2Active {
		d.Status = ec2Pending
	}
	return s.addEvent(tx, d.FleetID, api.EventCodeInstanceRecycled, fmt.Sprintf(
		"Instance %s was lost with its node %s and is set up again on node %s; its game sessions ended.", d.ID, d.Owner, newOwner))
}

// endInstanceProcesses ends, in tx, the live processes of a lost instance: they are TERMINATED
// and their game sessions TERMINATED with reason INTERRUPTED.
func (s *Service) endInstanceProcesses(tx store.Tx, d *ec2InstanceDoc) error {
	now := s.nowMillis()
	return eachChild(tx, kindProcess, d.FleetID, func(r *store.Record, p *processDoc) error {
		if p.Compute != d.ID || p.Status == processTerminated {
			return nil
		}
		p.Status, p.Ended, p.Connected = processTerminated, now, false
		if err := s.interruptSession(tx, p); err != nil {
			return err
		}
		if err := s.processEnded(tx, p); err != nil {
			return err
		}
		return putDoc(tx, r, p)
	})
}

// interruptSession marks the game session process p hosts, if any and not yet ended,
// INTERRUPTED, so that processEnded ends it with that reason.
func (s *Service) interruptSession(tx store.Tx, p *processDoc) error {
	var link keyDoc
	if _, err := getDoc(tx, kindProcessSession, processKey(p.FleetID, p.ProcessID), &link, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	var gs gameSessionDoc
	rec, err := getDoc(tx, kindGameSession, link.Key, &gs, func() error { return errSkip })
	if err != nil || gs.Status == gsTerminated {
		return ignoreSkip(err)
	}
	gs.Reason = string(api.GameSessionStatusReasonInterrupted)
	return putDoc(tx, rec, &gs)
}
