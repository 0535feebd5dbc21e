package gamelift

import (
	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// The fleet metrics scaling policies watch, per fleet location, computed from the store at
// the moment of an evaluation (docs/scaling.md has the definitions and their sources).

// locationLoad is one location's figures at one moment.
type locationLoad struct {
	activating, active int // live game sessions by status
	// activeInstances are the ACTIVE instances; idleInstances those hosting no live session.
	activeInstances, idleInstances int
	// processes are the ACTIVE server processes on ACTIVE instances; available those of them
	// hosting no live game session (a process hosts one game session at a time).
	processes, available int
	// activatable is how many game sessions could start activating now: the available
	// processes, on each instance at most MaxConcurrentGameSessionActivations minus its
	// ACTIVATING sessions.
	activatable int
	// players are the current (RESERVED or ACTIVE) player sessions of ACTIVE game sessions;
	// openSlots the player slots of those sessions not taken.
	players, openSlots int
	// queueDepth counts the pending placements whose top-priority destination is this fleet
	// location; waitSeconds is how long the oldest of them has waited.
	queueDepth  int
	waitSeconds float64
}

// metric returns the value of a MetricName in l, and false when it has no data: a
// percentage of nothing (no ACTIVE process, no ACTIVE instance).
func (l *locationLoad) metric(name string) (float64, bool) {
	switch api.MetricName(name) {
	case api.MetricNameActivatingGameSessions:
		return float64(l.activating), true
	case api.MetricNameActiveGameSessions:
		return float64(l.active), true
	case api.MetricNameActiveInstances:
		return float64(l.activeInstances), true
	case api.MetricNameAvailableGameSessions:
		return float64(l.available), true
	case api.MetricNameAvailablePlayerSessions:
		return float64(l.openSlots), true
	case api.MetricNameCurrentPlayerSessions:
		return float64(l.players), true
	case api.MetricNameIdleInstances:
		return float64(l.idleInstances), true
	case api.MetricNamePercentAvailableGameSessions:
		return percent(l.available, l.processes)
	case api.MetricNamePercentIdleInstances:
		return percent(l.idleInstances, l.activeInstances)
	case api.MetricNameQueueDepth:
		return float64(l.queueDepth), true
	case api.MetricNameWaitTime:
		return l.waitSeconds, true
	case api.MetricNameConcurrentActivatableGameSessions:
		return float64(l.activatable), true
	}
	return 0, false
}

func percent(part, whole int) (float64, bool) {
	if whole == 0 {
		return 0, false
	}
	return 100 * float64(part) / float64(whole), true
}

// fleetLoad computes, in tx, the figures of every location of managed fleet f at now. The
// queue figures are computed only when withQueues (they read every pending placement).
func (s *Service) fleetLoad(tx store.Tx, f *fleetDoc, now int64, withQueues bool) (map[string]*locationLoad, error) {
	loads := map[string]*locationLoad{}
	for _, l := range s.placementLocations(f) {
		loads[l] = &locationLoad{}
	}
	at := func(loc string) *locationLoad {
		if loads[loc] == nil {
			loads[loc] = &locationLoad{}
		}
		return loads[loc]
	}
	hosts, err := activeInstances(tx, f.ID)
	if err != nil {
		return nil, err
	}
	sessions, err := s.sessionLoad(tx, f.ID, at)
	if err != nil {
		return nil, err
	}
	if err := processLoad(tx, f, hosts, sessions, at); err != nil {
		return nil, err
	}
	if withQueues {
		return loads, s.queueLoad(tx, f.ID, now, at)
	}
	return loads, nil
}

// activeInstances maps the ACTIVE instances of a fleet to their locations.
func activeInstances(tx store.Tx, fleetID string) (map[string]string, error) {
	hosts := map[string]string{}
	err := eachChild(tx, kindEC2Instance, fleetID, func(_ *store.Record, d *ec2InstanceDoc) error {
		if d.Status == ec2Active {
			hosts[d.ID] = d.Location
		}
		return nil
	})
	return hosts, err
}

// sessionsOn is what the live game sessions of a fleet occupy.
type sessionsOn struct {
	processes  map[string]bool // process IDs hosting a live session
	computes   map[string]int  // live sessions per compute
	activating map[string]int  // ACTIVATING sessions per compute
}

// sessionLoad counts a fleet's live game sessions and their players per location and notes
// which processes and computes host them.
func (s *Service) sessionLoad(tx store.Tx, fleetID string, at func(string) *locationLoad) (*sessionsOn, error) {
	on := &sessionsOn{processes: map[string]bool{}, computes: map[string]int{}, activating: map[string]int{}}
	err := eachChild(tx, kindGameSession, fleetID, func(_ *store.Record, g *gameSessionDoc) error {
		if !g.live() {
			return nil
		}
		l := at(g.Location)
		on.processes[g.ProcessID] = true
		on.computes[g.Compute]++
		if g.Status == gsActivating {
			l.activating++
			on.activating[g.Compute]++
			return nil
		}
		l.active++
		l.players += int(g.Players)
		l.openSlots += int(max(g.Max-g.Players, 0))
		return nil
	})
	return on, err
}

// processLoad counts the ACTIVE processes on ACTIVE instances, the available and activatable
// ones, and the active and idle instances, per location.
func processLoad(tx store.Tx, f *fleetDoc, hosts map[string]string, on *sessionsOn, at func(string) *locationLoad) error {
	free := map[string]int{}
	err := eachChild(tx, kindProcess, f.ID, func(_ *store.Record, p *processDoc) error {
		loc, ok := hosts[p.Compute]
		if !ok || p.Status != processActive {
			return nil
		}
		at(loc).processes++
		if !on.processes[p.ProcessID] {
			at(loc).available++
			free[p.Compute]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	limit := int(api.Deref(runtimeOf(f).MaxConcurrentGameSessionActivations))
	for inst, loc := range hosts {
		l := at(loc)
		l.activeInstances++
		if on.computes[inst] == 0 {
			l.idleInstances++
		}
		n := free[inst]
		if limit > 0 {
			n = min(n, max(limit-on.activating[inst], 0))
		}
		l.activatable += n
	}
	return nil
}

// queueLoad counts, per location of fleet fleetID, the pending placements not yet given a
// game session whose best candidate (the top-priority destination) is that location of the
// fleet, and how long the oldest has waited.
func (s *Service) queueLoad(tx store.Tx, fleetID string, now int64, at func(string) *locationLoad) error {
	waiting, err := tx.List(kindPlacementWait, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, w := range waiting {
		var p placementDoc
		if _, err := getDoc(tx, kindPlacement, w.ID, &p, func() error { return errNoRecord }); err != nil {
			if err = ignoreNoRecord(err); err != nil {
				return err
			}
			continue
		}
		if p.Status != placementPending || p.SessionKey != "" {
			continue
		}
		_, q, err := s.readQueueTx(tx, p.Queue)
		if hasErrorCode(err, api.NotFoundException) {
			continue
		}
		if err != nil {
			return err
		}
		cands, err := s.candidates(tx, q, &p, now)
		if err != nil {
			return err
		}
		if len(cands) == 0 || cands[0].fleet.ID != fleetID {
			continue
		}
		l := at(cands[0].location)
		l.queueDepth++
		l.waitSeconds = max(l.waitSeconds, float64(now-p.Start)/1000)
	}
	return nil
}
