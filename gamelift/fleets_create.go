package gamelift

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// CreateFleet creates a fleet. An ANYWHERE fleet lives in the custom locations listed in
// Locations (the home Region may be listed too) and, as in GameLift, is ACTIVE at once: there
// is nothing to download or build; computes register with it and server processes connect.
// An EC2 fleet (the default ComputeType) is a managed fleet whose instances are local
// sandboxes (createManagedFleet, fleets_managed.go).
func (s *Service) CreateFleet(ctx context.Context, in *api.CreateFleetInput) (*api.CreateFleetOutput, error) {
	if ct := api.Deref(in.ComputeType); ct == "" || ct == api.ComputeTypeEc2 {
		return s.createManagedFleet(ctx, in)
	}
	doc, err := s.newFleet(in)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		for _, loc := range doc.Locations {
			if _, err := tx.Get(kindLocation, loc); errors.Is(err, store.ErrNotFound) {
				return locationNotFound(loc)()
			} else if err != nil {
				return err
			}
		}
		if err := insertDoc(tx, kindFleet, doc.ID, doc); err != nil {
			return err
		}
		if err := s.addEvent(tx, doc.ID, api.EventCodeFleetCreated, "Fleet "+doc.ID+" created."); err != nil {
			return err
		}
		return s.addEvent(tx, doc.ID, api.EventCodeFleetStateActive, "Fleet "+doc.ID+" status changed to ACTIVE.")
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateFleetOutput{FleetAttributes: s.apiFleet(doc), LocationStates: s.locationStates(doc)}, nil
}

// newFleet checks a CreateFleet request beyond the model and returns the document to store.
func (s *Service) newFleet(in *api.CreateFleetInput) (*fleetDoc, error) {
	if err := anywhereOnly(in); err != nil {
		return nil, err
	}
	locs, err := s.customLocations(in.Locations)
	if err != nil {
		return nil, err
	}
	if in.RuntimeConfiguration != nil {
		if err := checkRuntime(in.RuntimeConfiguration); err != nil {
			return nil, err
		}
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	doc := &fleetDoc{
		ID: "fleet-" + s.newID(), Name: api.Deref(in.Name), Description: api.Deref(in.Description),
		ComputeType: string(api.ComputeTypeAnywhere), Status: fleetActive, Locations: locs,
		FleetType: string(api.Deref(in.FleetType)), MetricGroups: metricGroups(in.MetricGroups), LogPaths: in.LogPaths,
		Protection:  string(api.ProtectionPolicyNoProtection),
		Certificate: string(api.CertificateTypeDisabled),
		LaunchPath:  api.Deref(in.ServerLaunchPath), LaunchParameters: api.Deref(in.ServerLaunchParameters),
		PlayerGateway: string(api.Deref(in.PlayerGatewayMode)),
		CreationLimit: creationLimitOf(in.ResourceCreationLimitPolicy), Runtime: in.RuntimeConfiguration,
		Created: s.nowMillis(), tagged: tagged{Tags: tags},
	}
	if in.NewGameSessionProtectionPolicy != nil {
		doc.Protection = string(*in.NewGameSessionProtectionPolicy)
	}
	if c := in.CertificateConfiguration; c != nil && c.CertificateType != nil {
		doc.Certificate = string(*c.CertificateType)
	}
	if in.AnywhereConfiguration != nil {
		doc.Cost = api.Deref(in.AnywhereConfiguration.Cost)
	}
	return doc, nil
}

// anywhereOnly refuses what Hoist cannot host yet (EC2 fleets) and the EC2-only parameters an
// Anywhere fleet has no use for.
func anywhereOnly(in *api.CreateFleetInput) error {
	ct := api.Deref(in.ComputeType)
	if ct != api.ComputeTypeAnywhere {
		if ct == "" {
			ct = api.ComputeTypeEc2
		}
		return api.Errorf(api.NotImplementedException,
			"Hoist supports only ANYWHERE fleets so far: CreateFleet with ComputeType %s is not implemented yet. "+
				"Set ComputeType to ANYWHERE and register your own computes.", ct)
	}
	ec2Only := map[string]bool{
		"BuildId": in.BuildId != nil, "ScriptId": in.ScriptId != nil, "EC2InstanceType": in.EC2InstanceType != nil,
		"EC2InboundPermissions": in.EC2InboundPermissions != nil, "InstanceRoleArn": in.InstanceRoleArn != nil,
		"PeerVpcId": in.PeerVpcId != nil, "PeerVpcAwsAccountId": in.PeerVpcAwsAccountId != nil,
	}
	for _, name := range []string{"BuildId", "ScriptId", "EC2InstanceType", "EC2InboundPermissions",
		"InstanceRoleArn", "PeerVpcId", "PeerVpcAwsAccountId"} {
		if ec2Only[name] {
			return api.Errorf(api.InvalidRequestException, "%s is not supported for fleets with ComputeType ANYWHERE.", name)
		}
	}
	return nil
}

// customLocations checks an Anywhere fleet's Locations: at least one custom location, no
// repeats, no AWS Region other than the home Region (which every fleet has anyway). It returns
// the custom locations in request order; their existence is checked in the transaction.
func (s *Service) customLocations(in []api.LocationConfiguration) ([]string, error) {
	var locs []string
	seen := map[string]bool{}
	for _, l := range in {
		name := api.Deref(l.Location)
		if seen[name] {
			return nil, api.Errorf(api.InvalidRequestException, "Location %s is listed more than once.", name)
		}
		seen[name] = true
		switch {
		case name == s.region:
		case strings.HasPrefix(name, "custom-"):
			locs = append(locs, name)
		default:
			return nil, api.Errorf(api.InvalidRequestException,
				"Location %s is not a custom location; fleets with ComputeType ANYWHERE use custom locations.", name)
		}
	}
	if len(locs) == 0 {
		return nil, api.Errorf(api.InvalidRequestException,
			"Fleets with ComputeType ANYWHERE require at least one custom location in Locations.")
	}
	return slices.Clip(locs), nil
}
