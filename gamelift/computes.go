package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// computeActive is the ComputeStatus GameLift reports for a registered Anywhere compute: the
// mixed-case "Active", outside the enum (the model warns non-container fleets may return
// such values; observed in real RegisterCompute responses, see docs/fleets.md).
const computeActive = "Active"

// computeDoc is a registered compute, stored under computeKey with Parent = the fleet ID.
type computeDoc struct {
	FleetID     string `json:"fleetId"`
	Name        string `json:"name"`
	IPAddress   string `json:"ip,omitempty"`
	DNSName     string `json:"dns,omitempty"`
	Location    string `json:"location"`
	Certificate string `json:"certificatePath,omitempty"`
	Status      string `json:"status"`
	Created     int64  `json:"created"`
	// Agent is set once a host agent has connected for the compute: messages for an agent
	// (outbox_agent.go) are written only for computes that have one.
	Agent bool `json:"agent,omitempty"`
	// Node is the server node the agent last connected to (AdmitAgent): while that node is
	// alive, the compute's endpoints are that node's.
	Node string `json:"node,omitempty"`
}

// computeKey is the store ID of a compute: compute names are unique within a fleet only.
func computeKey(fleetID, name string) string { return fleetID + "/" + name }

func (s *Service) computeHandlers(h *api.Handlers) {
	h.RegisterCompute = s.RegisterCompute
	h.DeregisterCompute = s.DeregisterCompute
	h.DescribeCompute = s.DescribeCompute
	h.ListCompute = s.ListCompute
	h.GetComputeAuthToken = s.GetComputeAuthToken
	h.GetComputeAccess = s.GetComputeAccess
}

func computeNotFound(fleetID, name string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Compute %s not found in fleet %s.", name, fleetID)
	}
}

// apiCompute converts a stored compute. Its endpoints are those of the node its agent is
// connected to, when that node is alive (nodes, from aliveNodes) and reported them; else this
// node's.
func (s *Service) apiCompute(d *computeDoc, nodes map[string]Node) *api.Compute {
	status := api.ComputeStatus(d.Status)
	sdk, agent := s.hosting.sdkEndpoint, s.hosting.agentEndpoint
	if n, ok := nodes[d.Node]; ok && n.SDKEndpoint != "" {
		sdk, agent = n.SDKEndpoint, n.AgentEndpoint
	}
	return &api.Compute{
		FleetId: api.String(d.FleetID), FleetArn: api.String(s.arn(arnFleet, d.FleetID)),
		ComputeName: api.String(d.Name), ComputeArn: api.String(s.arn(arnCompute, d.Name)),
		IpAddress: optional(d.IPAddress), DnsName: optional(d.DNSName), ComputeStatus: &status,
		Location: api.String(d.Location), CreationTime: stamp(d.Created),
		GameLiftServiceSdkEndpoint: optional(sdk), GameLiftAgentEndpoint: optional(agent),
	}
}

// computeRef resolves the FleetId and ComputeName (name or ARN) of a compute request.
func (s *Service) computeRef(fleet, compute *string) (fleetID, name string, err error) {
	if fleetID, err = s.fleetID(fleet); err != nil {
		return "", "", err
	}
	name, err = s.resolveID(api.Deref(compute), arnCompute)
	return fleetID, name, err
}

// RegisterCompute adds a compute to an Anywhere fleet in one of the fleet's custom locations.
// It needs an IpAddress or a DnsName. The fleet must exist and be ACTIVE (a fleet being
// deleted is a ConflictException); a name already registered with the fleet is a
// ConflictException. RegisterCompute models no NotFoundException, so an unknown fleet is an
// InvalidRequestException.
func (s *Service) RegisterCompute(ctx context.Context, in *api.RegisterComputeInput) (*api.RegisterComputeOutput, error) {
	fleetID, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	doc := &computeDoc{FleetID: fleetID, Name: api.Deref(in.ComputeName), IPAddress: api.Deref(in.IpAddress),
		DNSName: api.Deref(in.DnsName), Location: api.Deref(in.Location),
		Certificate: api.Deref(in.CertificatePath), Status: computeActive, Created: s.nowMillis()}
	if doc.Location == "" {
		return nil, api.Errorf(api.InvalidRequestException, "Location is required for Anywhere compute type.")
	}
	if doc.IPAddress == "" && doc.DNSName == "" {
		return nil, api.Errorf(api.InvalidRequestException, "IpAddress or DnsName is required for Anywhere compute type.")
	}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.checkRegistration(tx, doc); err != nil {
			return err
		}
		return insertChild(tx, kindCompute, computeKey(fleetID, doc.Name), fleetID, doc)
	})
	if errors.Is(err, store.ErrExists) {
		return nil, api.Errorf(api.ConflictException,
			"Compute %s is already registered with fleet %s.", doc.Name, fleetID)
	}
	if err != nil {
		return nil, err
	}
	return &api.RegisterComputeOutput{Compute: s.apiCompute(doc, nil)}, nil
}

// checkRegistration checks the fleet a compute registers with.
func (s *Service) checkRegistration(tx store.Tx, c *computeDoc) error {
	var fleet fleetDoc
	_, err := getDoc(tx, kindFleet, c.FleetID, &fleet, func() error {
		return api.Errorf(api.InvalidRequestException, "Fleet %s not found.", c.FleetID)
	})
	switch {
	case err != nil:
		return err
	case fleet.Status == fleetTerminated:
		return api.Errorf(api.InvalidRequestException, "Fleet %s not found.", c.FleetID)
	case fleet.Status != fleetActive:
		return api.Errorf(api.ConflictException,
			"Fleet %s is in status %s; computes can register only with ACTIVE fleets.", c.FleetID, fleet.Status)
	case !slices.Contains(fleet.Locations, c.Location):
		return api.Errorf(api.InvalidRequestException,
			"Location %s is not a custom location of fleet %s (it has %s).", c.Location, c.FleetID,
			strings.Join(fleet.Locations, ", "))
	}
	return nil
}

// insertChild adds a new record holding v, grouped under parent.
func insertChild(tx store.Tx, kind, id, parent string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Insert(&store.Record{Kind: kind, ID: id, Parent: parent, Data: data})
}

// DeregisterCompute removes a compute from its fleet. Its auth tokens stop working, and its
// server processes that are still running are told to terminate.
func (s *Service) DeregisterCompute(ctx context.Context, in *api.DeregisterComputeInput) (*api.DeregisterComputeOutput, error) {
	fleetID, name, err := s.computeRef(in.FleetId, in.ComputeName)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		if _, err := s.liveFleet(tx, fleetID); err != nil {
			return err
		}
		_, c, err := readCompute(tx, fleetID, name)
		if err != nil {
			return err
		}
		if c == nil {
			return computeNotFound(fleetID, name)()
		}
		if err := s.tellAgent(tx, c, MessageAgentStopCompute, AgentNotice{}); err != nil {
			return err
		}
		if err := tx.Delete(kindCompute, computeKey(fleetID, name)); err != nil {
			return err
		}
		if err := deleteTokens(tx, fleetID, name); err != nil {
			return err
		}
		return s.terminateComputeProcesses(tx, fleetID, name, true)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeregisterComputeOutput{}, nil
}

// DescribeCompute returns one compute of a fleet.
func (s *Service) DescribeCompute(ctx context.Context, in *api.DescribeComputeInput) (*api.DescribeComputeOutput, error) {
	fleetID, name, err := s.computeRef(in.FleetId, in.ComputeName)
	if err != nil {
		return nil, err
	}
	var doc computeDoc
	var nodes map[string]Node
	err = s.view(ctx, func(tx store.Tx) error {
		if _, err := s.liveFleet(tx, fleetID); err != nil {
			return err
		}
		if _, err := getDoc(tx, kindCompute, computeKey(fleetID, name), &doc, computeNotFound(fleetID, name)); err != nil {
			return err
		}
		nodes, err = s.aliveNodes(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.DescribeComputeOutput{Compute: s.apiCompute(&doc, nodes)}, nil
}

// ListCompute lists a fleet's computes in registration order, optionally only those in a
// Location or with a ComputeStatus (ACTIVE matches Anywhere computes' "Active"; none is
// IMPAIRED). ListCompute models no NotFoundException, so an unknown fleet is an
// InvalidRequestException.
func (s *Service) ListCompute(ctx context.Context, in *api.ListComputeInput) (*api.ListComputeOutput, error) {
	fleetID, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	loc, status := api.Deref(in.Location), string(api.Deref(in.ComputeStatus))
	hash := filterHash("ListCompute", fleetID, loc, status, api.Deref(in.ContainerGroupDefinitionName))
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[computeDoc]
	var nodes map[string]Node
	err = s.view(ctx, func(tx store.Tx) error {
		if _, err := s.liveFleet(tx, fleetID); err != nil {
			return api.Errorf(api.InvalidRequestException, "Fleet %s not found.", fleetID)
		}
		page, err = scanChildren(tx, kindCompute, fleetID, cursor, pageSize(in.Limit), func(c *computeDoc) bool {
			return (loc == "" || c.Location == loc) && (status == "" || strings.EqualFold(c.Status, status)) &&
				in.ContainerGroupDefinitionName == nil
		})
		if err != nil {
			return err
		}
		nodes, err = s.aliveNodes(tx)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.ListComputeOutput{ComputeList: make([]api.Compute, len(page.Items)), NextToken: next(page, hash)}
	for i, c := range page.Items {
		out.ComputeList[i] = *s.apiCompute(c, nodes)
	}
	return out, nil
}

// GetComputeAccess answers as GameLift does for Anywhere fleets, whose computes it does not
// manage: the operation is not used with them (InvalidRequestException). An unknown fleet or
// compute is a NotFoundException.
func (s *Service) GetComputeAccess(ctx context.Context, in *api.GetComputeAccessInput) (*api.GetComputeAccessOutput, error) {
	fleetID, name, err := s.computeRef(in.FleetId, in.ComputeName)
	if err != nil {
		return nil, err
	}
	err = s.view(ctx, func(tx store.Tx) error {
		if _, err := s.liveFleet(tx, fleetID); err != nil {
			return err
		}
		_, err := getDoc(tx, kindCompute, computeKey(fleetID, name), &computeDoc{}, computeNotFound(fleetID, name))
		return err
	})
	if err != nil {
		return nil, err
	}
	return nil, api.Errorf(api.InvalidRequestException,
		"GetComputeAccess is not supported for fleets with ComputeType ANYWHERE; connect to compute %s directly.", name)
}
