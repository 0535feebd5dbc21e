package gamelift

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Managed (EC2) fleets run a build on instances Hoist provides: local sandboxes on the
// server's host (package hostd acts on the host; this package decides). See
// docs/managed-fleets.md.

// kindManaged holds what only a managed fleet has (instance type, capacity, port settings),
// one record per fleet, stored apart from the fleet record so that code that rewrites a
// fleetDoc cannot drop it.
const kindManaged = "fleetmanaged"

// Statuses a managed fleet passes through before ACTIVE (GameLift's FleetStatus).
const (
	fleetNew         = string(api.FleetStatusNew)
	fleetDownloading = string(api.FleetStatusDownloading)
	fleetValidating  = string(api.FleetStatusValidating)
	fleetBuilding    = string(api.FleetStatusBuilding)
	fleetActivating  = string(api.FleetStatusActivating)
	fleetError       = string(api.FleetStatusError)
)

// fleetProgress orders the statuses of a fleet being created; a fleet only moves forward.
var fleetProgress = map[string]int{fleetNew: 0, fleetDownloading: 1, fleetValidating: 2,
	fleetBuilding: 3, fleetActivating: 4, fleetActive: 5}

// DefaultInstanceLimit is how many instances of one type a location may run at once
// (DescribeEC2InstanceLimits). Every local instance shares this host, so the limit is what a
// loopback /24 and one machine sensibly hold, not an AWS account quota.
const DefaultInstanceLimit = 100

// managedDoc is the managed-fleet part of a fleet.
type managedDoc struct {
	FleetID         string                  `json:"fleetId"`
	InstanceType    string                  `json:"instanceType"`
	OperatingSystem string                  `json:"os,omitempty"`
	InstanceRoleArn string                  `json:"roleArn,omitempty"`
	Inbound         []api.IpPermission      `json:"inbound,omitempty"`
	Capacity        map[string]*capacityDoc `json:"capacity"` // by location
	// Stopped lists the locations where AUTO_SCALING is stopped (StopFleetActions).
	Stopped []string `json:"stopped,omitempty"`
	// StoppedActions is the form of the home Region's stop before Stopped existed.
	StoppedActions bool `json:"stoppedActions,omitempty"`
}

// scalingStopped reports whether StopFleetActions stopped AUTO_SCALING in loc (home: the
// fleet's home Region).
func (m *managedDoc) scalingStopped(loc, home string) bool {
	return slices.Contains(m.Stopped, loc) || (loc == home && m.StoppedActions)
}

// capacityDoc is one location's instance counts as set by UpdateFleetCapacity.
type capacityDoc struct {
	Desired int32 `json:"desired"`
	Min     int32 `json:"min"`
	Max     int32 `json:"max"`
}

func (s *Service) managedHandlers(h *api.Handlers) {
	describe, del := h.DescribeFleetAttributes, h.DeleteFleet
	h.DescribeFleetAttributes = func(ctx context.Context, in *api.DescribeFleetAttributesInput) (*api.DescribeFleetAttributesOutput, error) {
		out, err := describe(ctx, in)
		if err != nil {
			return nil, err
		}
		for i := range out.FleetAttributes {
			if err := s.decorateManaged(ctx, &out.FleetAttributes[i]); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	h.DeleteFleet = func(ctx context.Context, in *api.DeleteFleetInput) (*api.DeleteFleetOutput, error) {
		if doc, err := s.readFleet(ctx, in.FleetId); err == nil && doc.ComputeType == string(api.ComputeTypeEc2) {
			return s.deleteManagedFleet(ctx, doc.ID)
		}
		return del(ctx, in)
	}
	h.UpdateFleetCapacity = s.UpdateFleetCapacity
	h.DescribeFleetCapacity = s.DescribeFleetCapacity
	h.DescribeFleetPortSettings = s.DescribeFleetPortSettings
	h.UpdateFleetPortSettings = s.UpdateFleetPortSettings
	h.StartFleetActions = s.StartFleetActions
	h.StopFleetActions = s.StopFleetActions
	h.DescribeEC2InstanceLimits = s.DescribeEC2InstanceLimits
	s.instanceHandlers(h)
	s.fleetLocationHandlers(h)
}

func managedNotFound(id string) func() error {
	return func() error {
		return api.Errorf(api.InvalidRequestException, "Fleet %s is not a managed EC2 fleet.", id)
	}
}

// decorateManaged adds the managed-fleet attributes (build, instance type, OS, stopped
// actions) to the FleetAttributes of an EC2 fleet.
func (s *Service) decorateManaged(ctx context.Context, fa *api.FleetAttributes) error {
	if api.Deref(fa.ComputeType) != api.ComputeTypeEc2 {
		return nil
	}
	var m managedDoc
	if err := s.read(ctx, kindManaged, api.Deref(fa.FleetId), &m, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	var f fleetDoc
	if err := s.read(ctx, kindFleet, api.Deref(fa.FleetId), &f, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	s.applyManaged(fa, &f, &m)
	return nil
}

func ignoreSkip(err error) error {
	if err == errSkip {
		return nil
	}
	return err
}

// applyManaged sets the managed-fleet fields of fa.
func (s *Service) applyManaged(fa *api.FleetAttributes, f *fleetDoc, m *managedDoc) {
	it, os := api.EC2InstanceType(m.InstanceType), api.OperatingSystem(m.OperatingSystem)
	fa.BuildId, fa.BuildArn = api.String(f.BuildID), api.String(s.arn(arnBuild, f.BuildID))
	fa.InstanceType, fa.InstanceRoleArn = &it, optional(m.InstanceRoleArn)
	if m.OperatingSystem != "" {
		fa.OperatingSystem = &os
	}
	if m.scalingStopped(s.region, s.region) {
		fa.StoppedActions = []api.FleetAction{api.FleetActionAutoScaling}
	}
}

// createManagedFleet creates an EC2 fleet: status NEW, one instance desired in every
// location, the build (which must be READY) to be installed on each.
func (s *Service) createManagedFleet(ctx context.Context, in *api.CreateFleetInput) (*api.CreateFleetOutput, error) {
	doc, m, err := s.newManagedFleet(in)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.checkFleetBuild(tx, doc, m); err != nil {
			return err
		}
		if err := s.checkFleetRoom(tx, m); err != nil {
			return err
		}
		if err := insertDoc(tx, kindFleet, doc.ID, doc); err != nil {
			return err
		}
		if err := insertDoc(tx, kindManaged, doc.ID, m); err != nil {
			return err
		}
		if err := s.addEvent(tx, doc.ID, api.EventCodeFleetCreated, "Fleet "+doc.ID+" created."); err != nil {
			return err
		}
		return s.reconcileFleet(tx, doc, m)
	})
	if err != nil {
		return nil, err
	}
	fa := s.apiFleet(doc)
	s.applyManaged(fa, doc, m)
	return &api.CreateFleetOutput{FleetAttributes: fa, LocationStates: s.locationStates(doc)}, nil
}

// newManagedFleet checks a CreateFleet request for an EC2 fleet beyond the model.
func (s *Service) newManagedFleet(in *api.CreateFleetInput) (*fleetDoc, *managedDoc, error) {
	switch {
	case in.ScriptId != nil:
		return nil, nil, api.Errorf(api.NotImplementedException,
			"Hoist does not host Realtime script fleets (ScriptId) yet; create the fleet with a BuildId.")
	case in.BuildId == nil:
		return nil, nil, api.Errorf(api.InvalidRequestException, "BuildId is required for fleets with ComputeType EC2.")
	case in.EC2InstanceType == nil:
		return nil, nil, api.Errorf(api.InvalidRequestException, "EC2InstanceType is required for fleets with ComputeType EC2.")
	case in.AnywhereConfiguration != nil:
		return nil, nil, api.Errorf(api.InvalidRequestException, "AnywhereConfiguration is only for fleets with ComputeType ANYWHERE.")
	case in.RuntimeConfiguration == nil && in.ServerLaunchPath == nil:
		return nil, nil, api.Errorf(api.InvalidRequestException, "A RuntimeConfiguration (or ServerLaunchPath) is required for fleets with ComputeType EC2.")
	}
	buildID, err := s.resolveID(api.Deref(in.BuildId), arnBuild)
	if err != nil {
		return nil, nil, err
	}
	rc := in.RuntimeConfiguration
	if rc == nil {
		rc = &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{{LaunchPath: in.ServerLaunchPath,
			Parameters: in.ServerLaunchParameters, ConcurrentExecutions: api.Int32(1)}}}
	}
	if err := checkRuntime(rc); err != nil {
		return nil, nil, err
	}
	if err := checkPermissions(in.EC2InboundPermissions); err != nil {
		return nil, nil, err
	}
	locs, err := s.fleetLocations(in.Locations)
	if err != nil {
		return nil, nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, nil, err
	}
	doc := &fleetDoc{
		ID: "fleet-" + s.newID(), Name: api.Deref(in.Name), Description: api.Deref(in.Description),
		ComputeType: string(api.ComputeTypeEc2), Status: fleetNew, Locations: locs, BuildID: buildID,
		FleetType: string(api.FleetTypeOnDemand), MetricGroups: metricGroups(in.MetricGroups), LogPaths: in.LogPaths,
		Protection: string(api.ProtectionPolicyNoProtection), Certificate: string(api.CertificateTypeDisabled),
		LaunchPath: api.Deref(in.ServerLaunchPath), LaunchParameters: api.Deref(in.ServerLaunchParameters),
		CreationLimit: creationLimitOf(in.ResourceCreationLimitPolicy), Runtime: rc,
		Created: s.nowMillis(), tagged: tagged{Tags: tags},
	}
	if in.FleetType != nil {
		doc.FleetType = string(*in.FleetType)
	}
	if in.NewGameSessionProtectionPolicy != nil {
		doc.Protection = string(*in.NewGameSessionProtectionPolicy)
	}
	if c := in.CertificateConfiguration; c != nil && c.CertificateType != nil {
		doc.Certificate = string(*c.CertificateType)
	}
	m := &managedDoc{FleetID: doc.ID, InstanceType: string(*in.EC2InstanceType), InstanceRoleArn: api.Deref(in.InstanceRoleArn),
		Inbound: in.EC2InboundPermissions, Capacity: map[string]*capacityDoc{}}
	for _, l := range append([]string{s.region}, locs...) {
		m.Capacity[l] = &capacityDoc{Desired: 1, Min: 0, Max: 1} // GameLift's initial capacity
	}
	return doc, m, nil
}

// fleetLocations checks a managed fleet's Locations: when given, they must include the home
// Region, once each. It returns the remote locations (all of them are run on this host).
func (s *Service) fleetLocations(in []api.LocationConfiguration) ([]string, error) {
	var remote []string
	home := len(in) == 0
	seen := map[string]bool{}
	for _, l := range in {
		name := api.Deref(l.Location)
		switch {
		case seen[name]:
			return nil, api.Errorf(api.InvalidRequestException, "Location %s is listed more than once.", name)
		case name == s.region:
			home = true
		default:
			remote = append(remote, name)
		}
		seen[name] = true
	}
	if !home {
		return nil, api.Errorf(api.InvalidRequestException, "Locations must include the fleet's home Region %s.", s.region)
	}
	return slices.Clip(remote), nil
}

// checkFleetBuild checks, in tx, that the fleet's build exists and is READY, and takes its
// operating system.
func (s *Service) checkFleetBuild(tx store.Tx, f *fleetDoc, m *managedDoc) error {
	var b buildDoc
	if _, err := getDoc(tx, kindBuild, f.BuildID, &b, buildNotFound(f.BuildID)); err != nil {
		return err
	}
	if b.Status != buildReady || b.Files == "" {
		return api.Errorf(api.InvalidRequestException, "Build %s is %s; a fleet needs a READY build.", b.ID, b.Status)
	}
	m.OperatingSystem = b.OperatingSystem
	return nil
}

// checkPermissions checks EC2 inbound permissions: ports 1-60000, FromPort <= ToPort.
func checkPermissions(ps []api.IpPermission) error {
	for _, p := range ps {
		from, to := api.Deref(p.FromPort), api.Deref(p.ToPort)
		if from < 1 || to > 60000 || from > to {
			return api.Errorf(api.InvalidRequestException,
				"Inbound permission ports %d-%d are not valid: use 1 to 60000 with FromPort <= ToPort.", from, to)
		}
	}
	return nil
}

// managedFleetTx reads a managed fleet and its managed part for a change; the fleet must not
// be DELETING or TERMINATED.
func (s *Service) managedFleetTx(tx store.Tx, id string) (*store.Record, *fleetDoc, *store.Record, *managedDoc, error) {
	f := new(fleetDoc)
	frec, err := getDoc(tx, kindFleet, id, f, fleetNotFound(id))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if f.Status == fleetTerminated {
		return nil, nil, nil, nil, fleetNotFound(id)()
	}
	if f.Status == fleetDeleting {
		return nil, nil, nil, nil, api.Errorf(api.InvalidFleetStatusException, "Fleet %s is being deleted.", id)
	}
	m := new(managedDoc)
	mrec, err := getDoc(tx, kindManaged, id, m, managedNotFound(id))
	if err != nil {
		return nil, nil, nil, nil, err
	}
	return frec, f, mrec, m, nil
}

// UpdateFleetCapacity sets a location's desired, minimum and maximum instance counts (the
// home Region when Location is absent). Instances are started or stopped to match at once;
// scale-down never stops an instance with a protected live game session.
// Raising the desired count past what the host holds (DescribeEC2InstanceLimits: what every
// live instance leaves of it) is refused with LimitExceededException.
func (s *Service) UpdateFleetCapacity(ctx context.Context, in *api.UpdateFleetCapacityInput) (*api.UpdateFleetCapacityOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	loc := api.Deref(in.Location)
	if loc == "" {
		loc = s.region
	}
	err = s.update(ctx, func(tx store.Tx) error {
		_, f, mrec, m, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		if f.Status == fleetError {
			return api.Errorf(api.InvalidFleetStatusException, "Fleet %s is in status ERROR; delete it and create a new one.", id)
		}
		c, ok := m.Capacity[loc]
		if !ok {
			return api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", id, loc)
		}
		next := requestedCapacity(*c, in)
		if err := checkCapacity(next); err != nil {
			return err // a request that is wrong in itself, before the host's room
		}
		if next.Desired > c.Desired {
			if err := s.checkCapacityRoom(tx, id, m.InstanceType, loc, next.Desired); err != nil {
				return err
			}
		}
		return s.changeCapacityTx(tx, f, mrec, m, loc, next, "")
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateFleetCapacityOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id)),
		Location: api.String(loc)}, nil
}

// changeCapacityTx sets, in tx, a location's desired, minimum and maximum instance counts
// (checked as UpdateFleetCapacity checks them), records FLEET_SCALING_EVENT (why, when not
// empty, opens its message) and starts or stops instances to match. UpdateFleetCapacity and
// the autoscaler both change capacity through it.
func (s *Service) changeCapacityTx(tx store.Tx, f *fleetDoc, mrec *store.Record, m *managedDoc, loc string, next capacityDoc, why string) error {
	if err := checkCapacity(next); err != nil {
		return err
	}
	*m.Capacity[loc] = next
	if err := putDoc(tx, mrec, m); err != nil {
		return err
	}
	msg := fmt.Sprintf("Capacity of location %s set to desired %d, minimum %d, maximum %d.", loc, next.Desired, next.Min, next.Max)
	if why != "" {
		msg = why + " " + msg
	}
	if err := s.addEvent(tx, f.ID, api.EventCodeFleetScalingEvent, msg); err != nil {
		return err
	}
	return s.reconcileFleet(tx, f, m)
}

// requestedCapacity is c with the counts given in an UpdateFleetCapacity request.
func requestedCapacity(c capacityDoc, in *api.UpdateFleetCapacityInput) capacityDoc {
	if in.DesiredInstances != nil {
		c.Desired = *in.DesiredInstances
	}
	if in.MinSize != nil {
		c.Min = *in.MinSize
	}
	if in.MaxSize != nil {
		c.Max = *in.MaxSize
	}
	return c
}

// checkCapacity checks that min <= desired <= max <= the instance limit.
func checkCapacity(c capacityDoc) error {
	if c.Min > c.Max || c.Desired < c.Min || c.Desired > c.Max {
		return api.Errorf(api.InvalidRequestException,
			"Capacity must satisfy MinSize <= DesiredInstances <= MaxSize; got %d <= %d <= %d.", c.Min, c.Desired, c.Max)
	}
	if c.Max > DefaultInstanceLimit {
		return api.Errorf(api.LimitExceededException, "MaxSize %d is above the instance limit %d.", c.Max, DefaultInstanceLimit)
	}
	return nil
}

// DescribeFleetCapacity returns the instance counts of the named fleets' home Regions (or of
// every live fleet, paged). Anywhere fleets have no instances and are left out.
func (s *Service) DescribeFleetCapacity(ctx context.Context, in *api.DescribeFleetCapacityInput) (*api.DescribeFleetCapacityOutput, error) {
	fleets, token, err := s.selectFleets(ctx, "DescribeFleetCapacity", in.FleetIds, in.Limit, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := &api.DescribeFleetCapacityOutput{FleetCapacity: []api.FleetCapacity{}, NextToken: token}
	for _, f := range fleets {
		if f.ComputeType != string(api.ComputeTypeEc2) {
			continue
		}
		fc, err := s.fleetCapacity(ctx, f.ID, s.region)
		if err != nil {
			return nil, err
		}
		out.FleetCapacity = append(out.FleetCapacity, *fc)
	}
	return out, nil
}

// fleetCapacity counts a location's instances by status next to its capacity settings.
func (s *Service) fleetCapacity(ctx context.Context, fleetID, loc string) (*api.FleetCapacity, error) {
	var m managedDoc
	var busy int32
	counts := map[string]int32{}
	err := s.view(ctx, func(tx store.Tx) error {
		if _, err := getDoc(tx, kindManaged, fleetID, &m, managedNotFound(fleetID)); err != nil {
			return err
		}
		clear(counts)
		sessions, _, err := instanceSessions(tx, fleetID)
		if err != nil {
			return err
		}
		busy = 0
		return eachChild(tx, kindEC2Instance, fleetID, func(_ *store.Record, d *ec2InstanceDoc) error {
			if d.Location == loc {
				counts[d.Status]++
				if d.Status == ec2Active && sessions[d.ID] > 0 {
					busy++
				}
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	c := m.Capacity[loc]
	if c == nil {
		return nil, api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", fleetID, loc)
	}
	it := api.EC2InstanceType(m.InstanceType)
	idle := counts[ec2Active] - busy
	return &api.FleetCapacity{FleetId: api.String(fleetID), FleetArn: api.String(s.arn(arnFleet, fleetID)),
		InstanceType: &it, Location: api.String(loc), InstanceCounts: &api.EC2InstanceCounts{
			DESIRED: api.Int32(c.Desired), MINIMUM: api.Int32(c.Min), MAXIMUM: api.Int32(c.Max),
			PENDING: api.Int32(counts[ec2Pending]), ACTIVE: api.Int32(counts[ec2Active]),
			IDLE: api.Int32(idle), TERMINATING: api.Int32(counts[ec2Terminating])}}, nil
}

// DescribeFleetPortSettings returns a managed fleet's inbound permissions.
func (s *Service) DescribeFleetPortSettings(ctx context.Context, in *api.DescribeFleetPortSettingsInput) (*api.DescribeFleetPortSettingsOutput, error) {
	f, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	var m managedDoc
	if err := s.read(ctx, kindManaged, f.ID, &m, managedNotFound(f.ID)); err != nil {
		return nil, err
	}
	out := &api.DescribeFleetPortSettingsOutput{FleetId: api.String(f.ID), FleetArn: api.String(s.arn(arnFleet, f.ID)),
		InboundPermissions: m.Inbound, Location: in.Location}
	if out.InboundPermissions == nil {
		out.InboundPermissions = []api.IpPermission{}
	}
	return out, nil
}

// UpdateFleetPortSettings adds and removes inbound permissions. Local instances share the
// host's loopback network, so the permissions are recorded and reported, not enforced.
func (s *Service) UpdateFleetPortSettings(ctx context.Context, in *api.UpdateFleetPortSettingsInput) (*api.UpdateFleetPortSettingsOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	if err := checkPermissions(in.InboundPermissionAuthorizations); err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		_, _, mrec, m, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		m.Inbound = slices.DeleteFunc(m.Inbound, func(p api.IpPermission) bool {
			return slices.ContainsFunc(in.InboundPermissionRevocations, func(r api.IpPermission) bool { return samePermission(p, r) })
		})
		for _, p := range in.InboundPermissionAuthorizations {
			if !slices.ContainsFunc(m.Inbound, func(q api.IpPermission) bool { return samePermission(p, q) }) {
				m.Inbound = append(m.Inbound, p)
			}
		}
		if len(m.Inbound) > 50 {
			return api.Errorf(api.LimitExceededException, "A fleet has at most 50 inbound permissions.")
		}
		return putDoc(tx, mrec, m)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateFleetPortSettingsOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id))}, nil
}

func samePermission(a, b api.IpPermission) bool {
	return api.Deref(a.FromPort) == api.Deref(b.FromPort) && api.Deref(a.ToPort) == api.Deref(b.ToPort) &&
		api.Deref(a.IpRange) == api.Deref(b.IpRange) && api.Deref(a.Protocol) == api.Deref(b.Protocol)
}

// StartFleetActions resumes auto-scaling (the scaling policies) in the fleet's home Region
// or in Location; its evaluation periods start over.
func (s *Service) StartFleetActions(ctx context.Context, in *api.StartFleetActionsInput) (*api.StartFleetActionsOutput, error) {
	id, err := s.setFleetActions(ctx, in.FleetId, in.Location, false)
	if err != nil {
		return nil, err
	}
	return &api.StartFleetActionsOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id))}, nil
}

// StopFleetActions suspends auto-scaling (the scaling policies, which stay ACTIVE) in the
// fleet's home Region or in Location, shown as StoppedActions in FleetAttributes (home
// Region) and LocationAttributes. UpdateFleetCapacity still works.
func (s *Service) StopFleetActions(ctx context.Context, in *api.StopFleetActionsInput) (*api.StopFleetActionsOutput, error) {
	id, err := s.setFleetActions(ctx, in.FleetId, in.Location, true)
	if err != nil {
		return nil, err
	}
	return &api.StopFleetActionsOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id))}, nil
}

func (s *Service) setFleetActions(ctx context.Context, fleet, location *string, stopped bool) (string, error) {
	id, err := s.fleetID(fleet)
	if err != nil {
		return "", err
	}
	loc := cmp.Or(api.Deref(location), s.region)
	return id, s.update(ctx, func(tx store.Tx) error {
		_, _, mrec, m, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		if _, ok := m.Capacity[loc]; !ok {
			return api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", id, loc)
		}
		if m.StoppedActions && !slices.Contains(m.Stopped, s.region) {
			m.Stopped = append(m.Stopped, s.region)
		}
		m.StoppedActions = false
		m.Stopped = slices.DeleteFunc(m.Stopped, func(l string) bool { return l == loc })
		if stopped {
			m.Stopped = append(m.Stopped, loc)
		}
		return putDoc(tx, mrec, m)
	})
}

// DescribeEC2InstanceLimits reports, per instance type in use (or the one asked for), how
// many local instances run and how many this host holds (those and as many more as fit in
// what the live instances leave of it; instancelimits.go), for the home Region or the
// location asked for.
func (s *Service) DescribeEC2InstanceLimits(ctx context.Context, in *api.DescribeEC2InstanceLimitsInput) (*api.DescribeEC2InstanceLimitsOutput, error) {
	loc := api.Deref(in.Location)
	if loc == "" {
		loc = s.region
	}
	var c *census
	err := s.view(ctx, func(tx store.Tx) (err error) {
		c, err = s.takeCensus(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	counts := c.byLoc[loc]
	if in.EC2InstanceType != nil {
		counts = map[string]int32{string(*in.EC2InstanceType): counts[string(*in.EC2InstanceType)]}
	}
	out := &api.DescribeEC2InstanceLimitsOutput{EC2InstanceLimits: []api.EC2InstanceLimit{}}
	for _, t := range slices.Sorted(mapKeys(counts)) {
		it := api.EC2InstanceType(t)
		out.EC2InstanceLimits = append(out.EC2InstanceLimits, api.EC2InstanceLimit{EC2InstanceType: &it,
			CurrentInstances: api.Int32(counts[t]), InstanceLimit: api.Int32(c.limit(t, loc)), Location: api.String(loc)})
	}
	return out, nil
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// deleteManagedFleet starts deleting a managed fleet in any status but DELETING: it becomes
// DELETING, its processes TERMINATING and its instances to stop: the host stops the processes
// (SIGTERM, then SIGKILL after the grace period) and removes the sandboxes. The process monitor makes it TERMINATED once the processes have
// ended or the grace period has passed.
func (s *Service) deleteManagedFleet(ctx context.Context, id string) (*api.DeleteFleetOutput, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		frec, f, _, _, err := s.managedFleetTx(tx, id)
		if err != nil {
			return err
		}
		f.Status, f.DeletingSince = fleetDeleting, s.nowMillis()
		if err := putDoc(tx, frec, f); err != nil {
			return err
		}
		if err := s.terminateFleetProcesses(tx, id, false); err != nil {
			return err
		}
		return eachChild(tx, kindEC2Instance, id, func(r *store.Record, d *ec2InstanceDoc) error {
			d.Status = ec2Terminating
			return putDoc(tx, r, d)
		})
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteFleetOutput{}, nil
}
