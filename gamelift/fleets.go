package gamelift

import (
	"context"
	"errors"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Record kinds of the hosting operations (fleets, computes, processes, events).
const (
	kindFleet        = "fleet"
	kindCompute      = "compute"
	kindComputeToken = "computetoken"
	kindProcess      = "process"
	kindFleetEvent   = "fleetevent"
)

// Fleet statuses as stored. An Anywhere fleet is ACTIVE as soon as CreateFleet returns (the
// fleet resource is all GameLift sets up for it); DeleteFleet moves it to DELETING, and the
// process monitor to TERMINATED once its server processes have ended.
const (
	fleetActive     = string(api.FleetStatusActive)
	fleetDeleting   = string(api.FleetStatusDeleting)
	fleetTerminated = string(api.FleetStatusTerminated)
)

// fleetDoc is a fleet as stored. Only ANYWHERE fleets exist so far.
type fleetDoc struct {
	ID               string                    `json:"id"`
	Name             string                    `json:"name"`
	Description      string                    `json:"description,omitempty"`
	ComputeType      string                    `json:"computeType"`
	Status           string                    `json:"status"`
	Locations        []string                  `json:"locations"` // custom locations, in request order
	FleetType        string                    `json:"fleetType,omitempty"`
	Protection       string                    `json:"protection"`
	Certificate      string                    `json:"certificate"`
	MetricGroups     []string                  `json:"metricGroups,omitempty"`
	LogPaths         []string                  `json:"logPaths,omitempty"`
	LaunchPath       string                    `json:"launchPath,omitempty"`
	LaunchParameters string                    `json:"launchParameters,omitempty"`
	Cost             string                    `json:"cost,omitempty"`
	PlayerGateway    string                    `json:"playerGateway,omitempty"`
	CreationLimit    *creationLimit            `json:"creationLimit,omitempty"`
	Runtime          *api.RuntimeConfiguration `json:"runtime,omitempty"`
	Created          int64                     `json:"created"`
	DeletingSince    int64                     `json:"deletingSince,omitempty"`
	Terminated       int64                     `json:"terminated,omitempty"`
	BuildID          string                    `json:"buildId,omitempty"`  // empty for ANYWHERE fleets
	ScriptID         string                    `json:"scriptId,omitempty"` // empty for ANYWHERE fleets
	tagged
}

// creationLimit is a fleet's ResourceCreationLimitPolicy.
type creationLimit struct {
	PerCreator    int32 `json:"perCreator"`
	PeriodMinutes int32 `json:"periodMinutes"`
}

func (s *Service) fleetHandlers(h *api.Handlers) {
	h.CreateFleet = s.CreateFleet
	h.DescribeFleetAttributes = s.DescribeFleetAttributes
	h.ListFleets = s.ListFleets
	h.UpdateFleetAttributes = s.UpdateFleetAttributes
	h.DeleteFleet = s.DeleteFleet
	h.DescribeRuntimeConfiguration = s.DescribeRuntimeConfiguration
	h.UpdateRuntimeConfiguration = s.UpdateRuntimeConfiguration
	h.DescribeFleetUtilization = s.DescribeFleetUtilization
	h.DescribeFleetLocationAttributes = s.DescribeFleetLocationAttributes
	h.DescribeFleetEvents = s.DescribeFleetEvents
	s.computeHandlers(h)
}

func fleetNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Fleet %s not found.", id) }
}

// liveFleet reads a fleet that has not been TERMINATED, or answers NotFoundException.
func (s *Service) liveFleet(tx store.Tx, id string) (*fleetDoc, error) {
	doc := new(fleetDoc)
	if _, err := getDoc(tx, kindFleet, id, doc, fleetNotFound(id)); err != nil {
		return nil, err
	}
	if doc.Status == fleetTerminated {
		return nil, fleetNotFound(id)()
	}
	return doc, nil
}

// fleetID turns a FleetId input (ID or ARN) into the ID.
func (s *Service) fleetID(idOrARN *string) (string, error) {
	return s.resolveID(api.Deref(idOrARN), arnFleet)
}

// readFleet loads a fleet by ID or ARN with one store read; TERMINATED fleets are returned.
func (s *Service) readFleet(ctx context.Context, idOrARN *string) (*fleetDoc, error) {
	id, err := s.fleetID(idOrARN)
	if err != nil {
		return nil, err
	}
	doc := new(fleetDoc)
	if err := s.read(ctx, kindFleet, id, doc, fleetNotFound(id)); err != nil {
		return nil, err
	}
	return doc, nil
}

// activeFleetTx reads a fleet for a change that needs it ACTIVE: NotFoundException when it
// is gone, InvalidFleetStatusException while it is being deleted.
func (s *Service) activeFleetTx(tx store.Tx, id string) (*store.Record, *fleetDoc, error) {
	doc := new(fleetDoc)
	rec, err := getDoc(tx, kindFleet, id, doc, fleetNotFound(id))
	if err != nil {
		return nil, nil, err
	}
	if doc.Status == fleetTerminated {
		return nil, nil, fleetNotFound(id)()
	}
	if doc.Status != fleetActive {
		return nil, nil, api.Errorf(api.InvalidFleetStatusException,
			"Fleet %s is in status %s; the operation requires status ACTIVE.", id, doc.Status)
	}
	return rec, doc, nil
}

// apiFleet returns the FleetAttributes of a fleet.
func (s *Service) apiFleet(d *fleetDoc) *api.FleetAttributes {
	status := api.FleetStatus(d.Status)
	ct := api.ComputeType(d.ComputeType)
	cert := api.CertificateType(d.Certificate)
	fa := &api.FleetAttributes{
		FleetId: api.String(d.ID), FleetArn: api.String(s.arn(arnFleet, d.ID)),
		Name: api.String(d.Name), Description: optional(d.Description), Status: &status,
		ComputeType: &ct, CreationTime: stamp(d.Created),
		NewGameSessionProtectionPolicy: (*api.ProtectionPolicy)(optional(d.Protection)),
		CertificateConfiguration:       &api.CertificateConfiguration{CertificateType: &cert},
		MetricGroups:                   metricGroups(d.MetricGroups), LogPaths: d.LogPaths,
		FleetType:        (*api.FleetType)(optional(d.FleetType)),
		ServerLaunchPath: optional(d.LaunchPath), ServerLaunchParameters: optional(d.LaunchParameters),
		PlayerGatewayMode: (*api.PlayerGatewayMode)(optional(d.PlayerGateway)),
	}
	if d.Cost != "" {
		fa.AnywhereConfiguration = &api.AnywhereConfiguration{Cost: api.String(d.Cost)}
	}
	if d.CreationLimit != nil {
		fa.ResourceCreationLimitPolicy = &api.ResourceCreationLimitPolicy{
			NewGameSessionsPerCreator: api.Int32(d.CreationLimit.PerCreator),
			PolicyPeriodInMinutes:     api.Int32(d.CreationLimit.PeriodMinutes),
		}
	}
	if d.Terminated != 0 {
		fa.TerminationTime = stamp(d.Terminated)
	}
	return fa
}

// locationStates lists the fleet's home Region followed by its custom locations, all in the
// fleet's status.
func (s *Service) locationStates(d *fleetDoc) []api.LocationState {
	out := make([]api.LocationState, 0, len(d.Locations)+1)
	for _, loc := range append([]string{s.region}, d.Locations...) {
		status := api.FleetStatus(d.Status)
		out = append(out, api.LocationState{Location: api.String(loc), Status: &status})
	}
	return out
}

// fleetUsingLocation returns InvalidRequestException when a fleet that is not TERMINATED
// uses the custom location name.
func (s *Service) fleetUsingLocation(tx store.Tx, name string) error {
	page, err := scan(tx, kindFleet, startCursor, 1, func(d *fleetDoc) bool {
		return d.Status != fleetTerminated && slices.Contains(d.Locations, name)
	})
	if err != nil || len(page.Items) == 0 {
		return err
	}
	return api.Errorf(api.InvalidRequestException,
		"Location %s is in use by fleet %s; delete the fleet before deleting the location.", name, page.Items[0].ID)
}

// ListFleets lists the IDs of fleets that are not TERMINATED, in creation order, optionally
// only those deployed with a build or script (Anywhere fleets have neither).
func (s *Service) ListFleets(ctx context.Context, in *api.ListFleetsInput) (*api.ListFleetsOutput, error) {
	buildID, err := s.optionalID(in.BuildId, arnBuild)
	if err != nil {
		return nil, err
	}
	scriptID, err := s.optionalID(in.ScriptId, arnScript)
	if err != nil {
		return nil, err
	}
	hash := filterHash("ListFleets", buildID, scriptID)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[fleetDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindFleet, cursor, pageSize(in.Limit), func(d *fleetDoc) bool {
			return d.Status != fleetTerminated && (buildID == "" || d.BuildID == buildID) &&
				(scriptID == "" || d.ScriptID == scriptID)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.ListFleetsOutput{FleetIds: make([]string, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.FleetIds[i] = d.ID
	}
	return out, nil
}

// optionalID resolves an optional ID-or-ARN filter; "" when absent.
func (s *Service) optionalID(idOrARN *string, resourceType string) (string, error) {
	if idOrARN == nil {
		return "", nil
	}
	return s.resolveID(*idOrARN, resourceType)
}

// DescribeFleetAttributes returns the attributes of the fleets named in FleetIds (unknown IDs
// are skipped, Limit and NextToken ignored, as GameLift documents), or of every fleet that is
// not TERMINATED, a page at a time.
func (s *Service) DescribeFleetAttributes(ctx context.Context, in *api.DescribeFleetAttributesInput) (*api.DescribeFleetAttributesOutput, error) {
	fleets, token, err := s.selectFleets(ctx, "DescribeFleetAttributes", in.FleetIds, in.Limit, in.NextToken)
	if err != nil {
		return nil, err
	}
	out := &api.DescribeFleetAttributesOutput{FleetAttributes: make([]api.FleetAttributes, len(fleets)), NextToken: token}
	for i, d := range fleets {
		out.FleetAttributes[i] = *s.apiFleet(d)
	}
	return out, nil
}

// selectFleets is the fleet selection shared by DescribeFleetAttributes and
// DescribeFleetUtilization: the named fleets that exist, or a page of all live fleets.
func (s *Service) selectFleets(ctx context.Context, op string, ids []string, limit *int32, token *string) ([]*fleetDoc, *string, error) {
	if len(ids) > 0 {
		fleets, err := s.namedFleets(ctx, ids)
		return fleets, nil, err
	}
	hash := filterHash(op)
	cursor, err := decodeToken(token, hash)
	if err != nil {
		return nil, nil, err
	}
	var page scanned[fleetDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindFleet, cursor, pageSize(limit), func(d *fleetDoc) bool {
			return d.Status != fleetTerminated
		})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return page.Items, next(page, hash), nil
}

// namedFleets reads the fleets with the given IDs or ARNs, in the order given, skipping those
// that do not exist and repeats.
func (s *Service) namedFleets(ctx context.Context, idsOrARNs []string) ([]*fleetDoc, error) {
	var out []*fleetDoc
	seen := map[string]bool{}
	for _, raw := range idsOrARNs {
		id, err := s.resolveID(raw, arnFleet)
		if err != nil {
			return nil, err
		}
		if seen[id] {
			continue
		}
		seen[id] = true
		doc := new(fleetDoc)
		err = s.read(ctx, kindFleet, id, doc, func() error { return errSkip })
		if errors.Is(err, errSkip) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, doc)
	}
	return out, nil
}

// errSkip marks a record that a lookup should pass over.
var errSkip = errors.New("skip")

// UpdateFleetAttributes changes a fleet's name, description, protection policy, creation limit
// policy, metric group and Anywhere cost. The fleet must be ACTIVE.
func (s *Service) UpdateFleetAttributes(ctx context.Context, in *api.UpdateFleetAttributesInput) (*api.UpdateFleetAttributesOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := s.activeFleetTx(tx, id)
		if err != nil {
			return err
		}
		before := doc.Protection
		applyFleetUpdate(doc, in)
		if doc.Protection != before {
			if err := s.addEvent(tx, id, api.EventCodeFleetNewGameSessionProtectionPolicyUpdated,
				"New game session protection policy changed from "+before+" to "+doc.Protection+"."); err != nil {
				return err
			}
		}
		return putDoc(tx, rec, doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateFleetAttributesOutput{FleetId: api.String(id), FleetArn: api.String(s.arn(arnFleet, id))}, nil
}

func applyFleetUpdate(doc *fleetDoc, in *api.UpdateFleetAttributesInput) {
	if in.Name != nil {
		doc.Name = *in.Name
	}
	if in.Description != nil {
		doc.Description = *in.Description
	}
	if in.NewGameSessionProtectionPolicy != nil {
		doc.Protection = string(*in.NewGameSessionProtectionPolicy)
	}
	if in.ResourceCreationLimitPolicy != nil {
		doc.CreationLimit = creationLimitOf(in.ResourceCreationLimitPolicy)
	}
	if in.MetricGroups != nil {
		doc.MetricGroups = in.MetricGroups
	}
	if in.AnywhereConfiguration != nil {
		doc.Cost = api.Deref(in.AnywhereConfiguration.Cost)
	}
}

func creationLimitOf(p *api.ResourceCreationLimitPolicy) *creationLimit {
	if p == nil {
		return nil
	}
	return &creationLimit{PerCreator: api.Deref(p.NewGameSessionsPerCreator), PeriodMinutes: api.Deref(p.PolicyPeriodInMinutes)}
}

// DeleteFleet starts deleting a fleet: it becomes DELETING, and each of its server processes
// that is still running is told to terminate (a TerminateProcess push in the outbox). The process monitor
// finishes the deletion (TERMINATED) once the processes have ended or the grace period has
// passed. Deleting a fleet that is already DELETING is InvalidFleetStatusException.
func (s *Service) DeleteFleet(ctx context.Context, in *api.DeleteFleetInput) (*api.DeleteFleetOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := s.activeFleetTx(tx, id)
		if err != nil {
			return err
		}
		doc.Status, doc.DeletingSince = fleetDeleting, s.nowMillis()
		if err := putDoc(tx, rec, doc); err != nil {
			return err
		}
		if err := s.tellAgents(tx, id, MessageAgentStopCompute, AgentNotice{}); err != nil {
			return err
		}
		return s.terminateFleetProcesses(tx, id, true)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteFleetOutput{}, nil
}
