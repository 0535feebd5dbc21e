package gamelift

import (
	"context"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// DescribeFleetUtilization reports, per fleet, the server processes that are ACTIVE and the
// game sessions and player sessions they host (none until game sessions exist). Fleet
// selection and paging are those of DescribeFleetAttributes.
func (s *Service) DescribeFleetUtilization(ctx context.Context, in *api.DescribeFleetUtilizationInput) (*api.DescribeFleetUtilizationOutput, error) {
	fleets, token, err := s.selectFleets(ctx, "DescribeFleetUtilization", in.FleetIds, in.Limit, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := &api.DescribeFleetUtilizationOutput{FleetUtilization: make([]api.FleetUtilization, len(fleets)), NextToken: token}
	err = s.view(ctx, func(tx store.Tx) error {
		for i, d := range fleets {
			active, err := countProcesses(tx, d.ID, processActive)
			if err != nil {
				return err
			}
			out.FleetUtilization[i] = api.FleetUtilization{
				FleetId: api.String(d.ID), FleetArn: api.String(s.arn(arnFleet, d.ID)), Location: api.String(s.region),
				ActiveServerProcessCount: api.Int32(int32(active)), ActiveGameSessionCount: api.Int32(0),
				CurrentPlayerSessionCount: api.Int32(0), MaximumPlayerSessionCount: api.Int32(0),
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DescribeFleetLocationAttributes lists a fleet's locations (its home Region, then its custom
// locations) with their status, optionally only those named in Locations, a page at a time.
func (s *Service) DescribeFleetLocationAttributes(ctx context.Context, in *api.DescribeFleetLocationAttributesInput) (*api.DescribeFleetLocationAttributesOutput, error) {
	doc, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	hash := filterHash("DescribeFleetLocationAttributes", append([]string{doc.ID}, in.Locations...)...)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var states []api.LocationState
	for _, st := range s.locationStates(doc) {
		if len(in.Locations) == 0 || slices.Contains(in.Locations, *st.Location) {
			states = append(states, st)
		}
	}
	start := int(cursor + 1) // the cursor is the index of the last location returned
	end := min(start+pageSize(in.Limit), len(states))
	out := &api.DescribeFleetLocationAttributesOutput{FleetId: api.String(doc.ID),
		FleetArn: api.String(s.arn(arnFleet, doc.ID)), LocationAttributes: []api.LocationAttributes{}}
	for i := start; i < end; i++ {
		out.LocationAttributes = append(out.LocationAttributes, api.LocationAttributes{LocationState: &states[i]})
	}
	if end < len(states) {
		out.NextToken = encodeToken(int64(end-1), hash)
	}
	return out, nil
}
