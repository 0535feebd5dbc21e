package gamelift

// FleetIQ: game server groups (this file), game servers (gameserver.go), claims and placement
// (gameserver_claim.go), the status loop (fleetiq_loop.go) and Hoist's instance admin
// operation (fleetiq_admin.go). docs/fleetiq.md states the behaviour and its sources.
//
// Game server group lifecycle, driven by FleetIQLoop.Step (never by a timer in a handler):
//
//	CreateGameServerGroup -> NEW -> ACTIVATING -> ACTIVE
//	DeleteGameServerGroup (from ACTIVE or ERROR) -> DELETE_SCHEDULED -> DELETING -> DELETED -> (gone)
//
// DELETE_SCHEDULED waits, for SAFE_DELETE and RETAIN, until no game server is UTILIZED.

import (
	"context"
	"errors"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Game server group statuses as stored.
const (
	groupNew             = string(api.GameServerGroupStatusNew)
	groupActivating      = string(api.GameServerGroupStatusActivating)
	groupActive          = string(api.GameServerGroupStatusActive)
	groupDeleteScheduled = string(api.GameServerGroupStatusDeleteScheduled)
	groupDeleting        = string(api.GameServerGroupStatusDeleting)
	groupDeleted         = string(api.GameServerGroupStatusDeleted)
	groupError           = string(api.GameServerGroupStatusError)
)

// groupDoc is a game server group as stored.
type groupDoc struct {
	Name           string                                `json:"name"`
	RoleARN        string                                `json:"role"`
	MinSize        int32                                 `json:"min"`
	MaxSize        int32                                 `json:"max"`
	LaunchTemplate api.LaunchTemplateSpecification       `json:"launchTemplate"`
	Instances      []api.InstanceDefinition              `json:"instanceDefinitions"`
	AutoScaling    *api.GameServerGroupAutoScalingPolicy `json:"autoScaling,omitempty"`
	Balancing      string                                `json:"balancing"`
	Protection     string                                `json:"protection"`
	Subnets        []string                              `json:"subnets,omitempty"`
	Status         string                                `json:"status"`
	StatusReason   string                                `json:"statusReason,omitempty"`
	Suspended      []string                              `json:"suspended,omitempty"`
	DeleteOption   string                                `json:"deleteOption,omitempty"`
	ASGARN         string                                `json:"asg,omitempty"`
	Created        int64                                 `json:"created"`
	Updated        int64                                 `json:"updated"`
	tagged
}

func (s *Service) fleetIQHandlers(h *api.Handlers) {
	h.CreateGameServerGroup = s.CreateGameServerGroup
	h.DescribeGameServerGroup = s.DescribeGameServerGroup
	h.ListGameServerGroups = s.ListGameServerGroups
	h.UpdateGameServerGroup = s.UpdateGameServerGroup
	h.DeleteGameServerGroup = s.DeleteGameServerGroup
	h.SuspendGameServerGroup = s.SuspendGameServerGroup
	h.ResumeGameServerGroup = s.ResumeGameServerGroup
	h.DescribeGameServerInstances = s.DescribeGameServerInstances
	h.RegisterGameServer = s.RegisterGameServer
	h.DescribeGameServer = s.DescribeGameServer
	h.ListGameServers = s.ListGameServers
	h.UpdateGameServer = s.UpdateGameServer
	h.DeregisterGameServer = s.DeregisterGameServer
	h.ClaimGameServer = s.ClaimGameServer
}

func (s *Service) apiGroup(d *groupDoc) *api.GameServerGroup {
	status := api.GameServerGroupStatus(d.Status)
	bal := api.BalancingStrategy(d.Balancing)
	prot := api.GameServerProtectionPolicy(d.Protection)
	g := &api.GameServerGroup{
		GameServerGroupName:        api.String(d.Name),
		GameServerGroupArn:         api.String(s.arn(arnGameServerGroup, d.Name)),
		RoleArn:                    api.String(d.RoleARN),
		InstanceDefinitions:        d.Instances,
		BalancingStrategy:          &bal,
		GameServerProtectionPolicy: &prot,
		AutoScalingGroupArn:        optional(d.ASGARN),
		Status:                     &status,
		StatusReason:               optional(d.StatusReason),
		CreationTime:               stamp(d.Created),
		LastUpdatedTime:            stamp(d.Updated),
	}
	for _, a := range d.Suspended {
		g.SuspendedActions = append(g.SuspendedActions, api.GameServerGroupAction(a))
	}
	return g
}

// groupNotFound answers a missing group with code (NotFoundException for most operations;
// operations whose model lists no NotFoundException answer InvalidRequestException).
func groupNotFound(code api.ErrorCode, name string) func() error {
	return func() error { return api.Errorf(code, "Game server group %s not found.", name) }
}

// groupName resolves a GameServerGroupNameOrArn input to the group name.
func (s *Service) groupName(nameOrARN *string) (string, error) {
	return s.resolveID(api.Deref(nameOrARN), arnGameServerGroup)
}

// readGroup loads a group outside a transaction.
func (s *Service) readGroup(ctx context.Context, nameOrARN *string, code api.ErrorCode) (*groupDoc, error) {
	name, err := s.groupName(nameOrARN)
	if err != nil {
		return nil, err
	}
	doc := new(groupDoc)
	if err := s.read(ctx, kindGameServerGroup, name, doc, groupNotFound(code, name)); err != nil {
		return nil, err
	}
	return doc, nil
}

// checkGroupInput enforces what the model cannot: MinSize <= MaxSize, a launch template named
// by ID or name, and instance definitions of distinct types.
func checkGroupInput(in *api.CreateGameServerGroupInput) error {
	if api.Deref(in.MinSize) > api.Deref(in.MaxSize) {
		return api.Errorf(api.InvalidRequestException, "MinSize (%d) must not exceed MaxSize (%d).",
			api.Deref(in.MinSize), api.Deref(in.MaxSize))
	}
	lt := in.LaunchTemplate
	if (lt.LaunchTemplateId == nil) == (lt.LaunchTemplateName == nil) {
		return api.Errorf(api.InvalidRequestException,
			"LaunchTemplate needs exactly one of LaunchTemplateId and LaunchTemplateName.")
	}
	return checkInstanceDefinitions(in.InstanceDefinitions)
}

func checkInstanceDefinitions(defs []api.InstanceDefinition) error {
	seen := map[api.GameServerGroupInstanceType]bool{}
	for _, d := range defs {
		t := api.Deref(d.InstanceType)
		if seen[t] {
			return api.Errorf(api.InvalidRequestException,
				"InstanceDefinitions lists instance type %s more than once.", t)
		}
		seen[t] = true
	}
	return nil
}

// CreateGameServerGroup creates a group in status NEW; FleetIQLoop activates it.
func (s *Service) CreateGameServerGroup(ctx context.Context, in *api.CreateGameServerGroupInput) (*api.CreateGameServerGroupOutput, error) {
	if err := checkGroupInput(in); err != nil {
		return nil, err
	}
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	now := s.nowMillis()
	doc := &groupDoc{
		Name: api.Deref(in.GameServerGroupName), RoleARN: api.Deref(in.RoleArn),
		MinSize: api.Deref(in.MinSize), MaxSize: api.Deref(in.MaxSize),
		LaunchTemplate: *in.LaunchTemplate, Instances: withDefaultWeights(in.InstanceDefinitions),
		AutoScaling: in.AutoScalingPolicy, Subnets: in.VpcSubnets, Status: groupNew,
		Balancing:  string(orDefault(in.BalancingStrategy, api.BalancingStrategySpotPreferred)),
		Protection: string(orDefault(in.GameServerProtectionPolicy, api.GameServerProtectionPolicyNoProtection)),
		Created:    now, Updated: now, tagged: tagged{Tags: tags},
	}
	err = s.update(ctx, func(tx store.Tx) error {
		err := insertDoc(tx, kindGameServerGroup, doc.Name, doc)
		if errors.Is(err, store.ErrExists) {
			return api.Errorf(api.ConflictException, "A game server group named %s already exists.", doc.Name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateGameServerGroupOutput{GameServerGroup: s.apiGroup(doc)}, nil
}

// withDefaultWeights fills in WeightedCapacity "1", GameLift's documented default.
func withDefaultWeights(defs []api.InstanceDefinition) []api.InstanceDefinition {
	out := slices.Clone(defs)
	for i := range out {
		if out[i].WeightedCapacity == nil {
			out[i].WeightedCapacity = api.String("1")
		}
	}
	return out
}

func orDefault[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// DescribeGameServerGroup returns a group by name or ARN.
func (s *Service) DescribeGameServerGroup(ctx context.Context, in *api.DescribeGameServerGroupInput) (*api.DescribeGameServerGroupOutput, error) {
	doc, err := s.readGroup(ctx, in.GameServerGroupName, api.NotFoundException)
	if err != nil {
		return nil, err
	}
	return &api.DescribeGameServerGroupOutput{GameServerGroup: s.apiGroup(doc)}, nil
}

// ListGameServerGroups lists groups in creation order.
func (s *Service) ListGameServerGroups(ctx context.Context, in *api.ListGameServerGroupsInput) (*api.ListGameServerGroupsOutput, error) {
	hash := filterHash("ListGameServerGroups")
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[groupDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kindGameServerGroup, cursor, pageSize(in.Limit), func(*groupDoc) bool { return true })
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.ListGameServerGroupsOutput{GameServerGroups: make([]api.GameServerGroup, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.GameServerGroups[i] = *s.apiGroup(d)
	}
	return out, nil
}

// editGroup applies edit to the stored group named by nameOrARN and stamps LastUpdatedTime.
func (s *Service) editGroup(ctx context.Context, nameOrARN *string, edit func(*groupDoc) error) (*api.GameServerGroup, error) {
	name, err := s.groupName(nameOrARN)
	if err != nil {
		return nil, err
	}
	var doc groupDoc
	err = s.update(ctx, func(tx store.Tx) error {
		doc = groupDoc{}
		rec, err := getDoc(tx, kindGameServerGroup, name, &doc, groupNotFound(api.NotFoundException, name))
		if err != nil {
			return err
		}
		if err := edit(&doc); err != nil {
			return err
		}
		doc.Updated = s.nowMillis()
		return putDoc(tx, rec, &doc)
	})
	if err != nil {
		return nil, err
	}
	return s.apiGroup(&doc), nil
}

// UpdateGameServerGroup changes the role, instance definitions, balancing strategy and/or
// protection policy of a group.
func (s *Service) UpdateGameServerGroup(ctx context.Context, in *api.UpdateGameServerGroupInput) (*api.UpdateGameServerGroupOutput, error) {
	if err := checkInstanceDefinitions(in.InstanceDefinitions); err != nil {
		return nil, err
	}
	g, err := s.editGroup(ctx, in.GameServerGroupName, func(d *groupDoc) error {
		if err := checkNotDeleting(d); err != nil {
			return err
		}
		if in.RoleArn != nil {
			d.RoleARN = *in.RoleArn
		}
		if in.InstanceDefinitions != nil {
			d.Instances = withDefaultWeights(in.InstanceDefinitions)
		}
		if in.BalancingStrategy != nil {
			d.Balancing = string(*in.BalancingStrategy)
		}
		if in.GameServerProtectionPolicy != nil {
			d.Protection = string(*in.GameServerProtectionPolicy)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateGameServerGroupOutput{GameServerGroup: g}, nil
}

// checkNotDeleting refuses changes to a group on its way out.
func checkNotDeleting(d *groupDoc) error {
	switch d.Status {
	case groupDeleteScheduled, groupDeleting, groupDeleted:
		return api.Errorf(api.InvalidRequestException,
			"Game server group %s is in status %s and cannot be changed.", d.Name, d.Status)
	}
	return nil
}

// DeleteGameServerGroup schedules a group's deletion; FleetIQLoop carries it out. Only ACTIVE
// and ERROR groups can be deleted (GameLift's documented rule).
func (s *Service) DeleteGameServerGroup(ctx context.Context, in *api.DeleteGameServerGroupInput) (*api.DeleteGameServerGroupOutput, error) {
	opt := string(orDefault(in.DeleteOption, api.GameServerGroupDeleteOptionSafeDelete))
	g, err := s.editGroup(ctx, in.GameServerGroupName, func(d *groupDoc) error {
		if d.Status != groupActive && d.Status != groupError {
			return api.Errorf(api.InvalidRequestException,
				"Game server group %s is in status %s; only ACTIVE or ERROR groups can be deleted.", d.Name, d.Status)
		}
		d.Status, d.StatusReason, d.DeleteOption = groupDeleteScheduled, "", opt
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteGameServerGroupOutput{GameServerGroup: g}, nil
}

// SuspendGameServerGroup suspends the named FleetIQ activities (REPLACE_INSTANCE_TYPES).
func (s *Service) SuspendGameServerGroup(ctx context.Context, in *api.SuspendGameServerGroupInput) (*api.SuspendGameServerGroupOutput, error) {
	g, err := s.editGroup(ctx, in.GameServerGroupName, func(d *groupDoc) error {
		if err := checkNotDeleting(d); err != nil {
			return err
		}
		for _, a := range in.SuspendActions {
			if !slices.Contains(d.Suspended, string(a)) {
				d.Suspended = append(d.Suspended, string(a))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &api.SuspendGameServerGroupOutput{GameServerGroup: g}, nil
}

// ResumeGameServerGroup resumes suspended FleetIQ activities.
func (s *Service) ResumeGameServerGroup(ctx context.Context, in *api.ResumeGameServerGroupInput) (*api.ResumeGameServerGroupOutput, error) {
	g, err := s.editGroup(ctx, in.GameServerGroupName, func(d *groupDoc) error {
		if err := checkNotDeleting(d); err != nil {
			return err
		}
		d.Suspended = slices.DeleteFunc(d.Suspended, func(a string) bool {
			return slices.Contains(in.ResumeActions, api.GameServerGroupAction(a))
		})
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &api.ResumeGameServerGroupOutput{GameServerGroup: g}, nil
}
