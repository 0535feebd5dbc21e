package gamelift

import (
	"context"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Remote locations of a managed fleet are further sets of local instances on this host, each
// with its own capacity (docs/managed-fleets.md). The home Region cannot be added or removed.

// maxFleetLocations is how many locations a fleet may have besides its home Region.
const maxFleetLocations = 100

func (s *Service) fleetLocationHandlers(h *api.Handlers) {
	h.CreateFleetLocations = s.CreateFleetLocations
	h.DeleteFleetLocations = s.DeleteFleetLocations
	h.DescribeFleetLocationCapacity = s.DescribeFleetLocationCapacity
	h.DescribeFleetLocationUtilization = s.DescribeFleetLocationUtilization
}

// CreateFleetLocations adds remote locations to an ACTIVE managed fleet; each starts with
// desired 1, minimum 0, maximum 1 instances (as a new fleet does) and its instances start at once.
func (s *Service) CreateFleetLocations(ctx context.Context, in *api.CreateFleetLocationsInput) (*api.CreateFleetLocationsOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	var added []string
	err = s.update(ctx, func(tx store.Tx) error {
		frec, f, mrec, m, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		if f.Status != fleetActive {
			return api.Errorf(api.InvalidFleetStatusException, "Fleet %s is in status %s; locations can be added to an ACTIVE fleet.", id, f.Status)
		}
		if added, err = s.newLocations(f, in.Locations); err != nil {
			return err
		}
		for _, l := range added {
			m.Capacity[l] = &capacityDoc{Desired: 1, Min: 0, Max: 1}
		}
		f.Locations = append(f.Locations, added...)
		if err := putDoc(tx, frec, f); err != nil {
			return err
		}
		if err := putDoc(tx, mrec, m); err != nil {
			return err
		}
		if err := s.addEvent(tx, id, api.EventCodeFleetCreated, "Locations added to fleet "+id+": "+strings.Join(added, ", ")+"."); err != nil {
			return err
		}
		return s.reconcileFleet(tx, f, m)
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateFleetLocationsOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id)),
		LocationStates: locationStatesOf(added, api.FleetStatusNew)}, nil
}

// newLocations checks the locations to add: not the home Region, not already the fleet's, not
// an Anywhere custom location, once each, within the limit.
func (s *Service) newLocations(f *fleetDoc, in []api.LocationConfiguration) ([]string, error) {
	var out []string
	for _, l := range in {
		name := api.Deref(l.Location)
		switch {
		case name == s.region || slices.Contains(f.Locations, name) || slices.Contains(out, name):
			return nil, api.Errorf(api.InvalidRequestException, "Fleet %s already has location %s.", f.ID, name)
		case strings.HasPrefix(name, "custom-"):
			return nil, api.Errorf(api.InvalidRequestException, "%s is a custom location; a managed fleet's locations are Regions.", name)
		}
		out = append(out, name)
	}
	if len(f.Locations)+len(out) > maxFleetLocations {
		return nil, api.Errorf(api.LimitExceededException, "A fleet has at most %d locations besides its home Region.", maxFleetLocations)
	}
	return out, nil
}

func locationStatesOf(locs []string, status api.FleetStatus) []api.LocationState {
	out := make([]api.LocationState, len(locs))
	for i, l := range locs {
		out[i] = api.LocationState{Location: api.String(l), Status: &status}
	}
	return out
}

// DeleteFleetLocations removes remote locations from a managed fleet: their instances stop at
// once (game sessions there end with them), and the locations answer DELETING.
func (s *Service) DeleteFleetLocations(ctx context.Context, in *api.DeleteFleetLocationsInput) (*api.DeleteFleetLocationsOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		frec, f, mrec, m, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		for _, l := range in.Locations {
			if l == s.region {
				return api.Errorf(api.InvalidRequestException, "The home Region %s cannot be removed from fleet %s; delete the fleet.", l, id)
			}
			if !slices.Contains(f.Locations, l) {
				return api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", id, l)
			}
			f.Locations = slices.DeleteFunc(f.Locations, func(x string) bool { return x == l })
			delete(m.Capacity, l)
		}
		if err := putDoc(tx, frec, f); err != nil {
			return err
		}
		if err := putDoc(tx, mrec, m); err != nil {
			return err
		}
		return s.stopLocationInstances(tx, id, in.Locations)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteFleetLocationsOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id)),
		LocationStates: locationStatesOf(in.Locations, api.FleetStatusDeleting)}, nil
}

// stopLocationInstances marks every instance of the fleet in locs TERMINATING, with its
// processes.
func (s *Service) stopLocationInstances(tx store.Tx, fleetID string, locs []string) error {
	return eachChild(tx, kindEC2Instance, fleetID, func(r *store.Record, d *ec2InstanceDoc) error {
		if !slices.Contains(locs, d.Location) || d.Status == ec2Terminating {
			return nil
		}
		d.Status = ec2Terminating
		if err := putDoc(tx, r, d); err != nil {
			return err
		}
		return s.terminateComputeProcesses(tx, fleetID, d.ID, false)
	})
}

// DescribeFleetLocationCapacity returns the instance counts of one location of a managed fleet.
func (s *Service) DescribeFleetLocationCapacity(ctx context.Context, in *api.DescribeFleetLocationCapacityInput) (*api.DescribeFleetLocationCapacityOutput, error) {
	f, err := s.locationFleet(ctx, in.FleetId, api.Deref(in.Location), true)
	if err != nil {
		return nil, err
	}
	fc, err := s.fleetCapacity(ctx, f.ID, api.Deref(in.Location))
	if err != nil {
		return nil, err
	}
	return &api.DescribeFleetLocationCapacityOutput{FleetCapacity: fc}, nil
}

// locationFleet reads a fleet that is not TERMINATED and checks that it has the location (and
// is a managed fleet when managedOnly).
func (s *Service) locationFleet(ctx context.Context, fleet *string, loc string, managedOnly bool) (*fleetDoc, error) {
	f, err := s.readFleet(ctx, fleet)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Status == fleetTerminated:
		return nil, fleetNotFound(f.ID)()
	case managedOnly && f.ComputeType != string(api.ComputeTypeEc2):
		return nil, api.Errorf(api.InvalidRequestException, "Fleet %s has ComputeType %s; location capacity is for EC2 fleets.", f.ID, f.ComputeType)
	case loc != s.region && !slices.Contains(f.Locations, loc):
		return nil, api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", f.ID, loc)
	}
	return f, nil
}

// DescribeFleetLocationUtilization reports one location of a fleet: its ACTIVE server
// processes, live game sessions and their player sessions.
func (s *Service) DescribeFleetLocationUtilization(ctx context.Context, in *api.DescribeFleetLocationUtilizationInput) (*api.DescribeFleetLocationUtilizationOutput, error) {
	loc := api.Deref(in.Location)
	f, err := s.locationFleet(ctx, in.FleetId, loc, false)
	if err != nil {
		return nil, err
	}
	var procs, sessions, players, maxPlayers int32
	err = s.view(ctx, func(tx store.Tx) error {
		procs, sessions, players, maxPlayers = 0, 0, 0, 0
		where := map[string]string{} // compute -> location
		if err := eachChild(tx, kindCompute, f.ID, func(_ *store.Record, c *computeDoc) error { where[c.Name] = c.Location; return nil }); err != nil {
			return err
		}
		if err := eachChild(tx, kindProcess, f.ID, func(_ *store.Record, p *processDoc) error {
			if p.Status == processActive && where[p.Compute] == loc {
				procs++
			}
			return nil
		}); err != nil {
			return err
		}
		return eachChild(tx, kindGameSession, f.ID, func(_ *store.Record, g *gameSessionDoc) error {
			if g.live() && g.Location == loc {
				sessions, players, maxPlayers = sessions+1, players+g.Players, maxPlayers+g.Max
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return &api.DescribeFleetLocationUtilizationOutput{FleetUtilization: &api.FleetUtilization{
		FleetId: api.String(f.ID), FleetArn: api.String(s.arn(arnFleet, f.ID)), Location: api.String(loc),
		ActiveServerProcessCount: api.Int32(procs), ActiveGameSessionCount: api.Int32(sessions),
		CurrentPlayerSessionCount: api.Int32(players), MaximumPlayerSessionCount: api.Int32(maxPlayers)}}, nil
}
