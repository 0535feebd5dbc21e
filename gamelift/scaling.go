package gamelift

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Scaling policies of managed fleets (PutScalingPolicy, DescribeScalingPolicies,
// DeleteScalingPolicy); the autoscaler that applies them is scaling_loop.go. See
// docs/scaling.md.
//
// A policy belongs to a fleet and applies in every location of it, each location evaluated
// on its own metrics and capacity (GameLift: "auto scaling policies apply to an entire fleet,
// but you have the option to turn them on or off for each location"). DescribeScalingPolicies
// lists one ScalingPolicy per policy and location.

// kindScalingPolicy holds scaling policies, with Parent = the fleet ID and ID
// "<fleet>/<name>": a fleet has one policy of a name.
const kindScalingPolicy = "scalingpolicy"

// Policy types and adjustment types as stored.
const (
	policyTargetBased      = string(api.PolicyTypeTargetBased)
	policyRuleBased        = string(api.PolicyTypeRuleBased)
	adjustChange           = string(api.ScalingAdjustmentTypeChangeInCapacity)
	adjustExact            = string(api.ScalingAdjustmentTypeExactCapacity)
	adjustPercent          = string(api.ScalingAdjustmentTypePercentChangeInCapacity)
	metricPercentAvailable = string(api.MetricNamePercentAvailableGameSessions)
)

// scalingPolicyDoc is one scaling policy as stored.
type scalingPolicyDoc struct {
	FleetID string `json:"fleetId"`
	Name    string `json:"name"`
	Type    string `json:"type"` // TargetBased or RuleBased
	Metric  string `json:"metric"`
	// Target is the TargetValue of a target-based policy.
	Target float64 `json:"target,omitempty"`
	// The rule of a rule-based policy.
	Operator       string  `json:"operator,omitempty"`
	Threshold      float64 `json:"threshold,omitempty"`
	Periods        int32   `json:"periods,omitempty"`
	Adjustment     int32   `json:"adjustment,omitempty"`
	AdjustmentType string  `json:"adjustmentType,omitempty"`
	Created        int64   `json:"created"`
	// Eval is the evaluation history per location (scaling_loop.go); a replaced policy
	// starts with none.
	Eval map[string]*evalState `json:"eval,omitempty"`
}

func scalingPolicyKey(fleetID, name string) string { return fleetID + "/" + name }

func (s *Service) scalingHandlers(h *api.Handlers) {
	h.PutScalingPolicy = s.PutScalingPolicy
	h.DescribeScalingPolicies = s.DescribeScalingPolicies
	h.DeleteScalingPolicy = s.DeleteScalingPolicy
	locations := h.DescribeFleetLocationAttributes
	h.DescribeFleetLocationAttributes = func(ctx context.Context, in *api.DescribeFleetLocationAttributesInput) (*api.DescribeFleetLocationAttributesOutput, error) {
		out, err := locations(ctx, in)
		if err != nil {
			return nil, err
		}
		return out, s.decorateStoppedActions(ctx, out)
	}
}

// PutScalingPolicy creates a fleet's scaling policy, or replaces the one of the same name
// (its evaluation history starts over). The policy is ACTIVE, in force in every location of
// the fleet, when the call returns.
func (s *Service) PutScalingPolicy(ctx context.Context, in *api.PutScalingPolicyInput) (*api.PutScalingPolicyOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	p, err := newScalingPolicy(in)
	if err != nil {
		return nil, err
	}
	p.FleetID, p.Created = id, s.nowMillis()
	err = s.update(ctx, func(tx store.Tx) error {
		if _, err := s.scalingFleetTx(tx, id, true); err != nil {
			return err
		}
		if err := checkOneTargetPolicy(tx, p); err != nil {
			return err
		}
		key := scalingPolicyKey(id, p.Name)
		rec, err := getDoc(tx, kindScalingPolicy, key, new(scalingPolicyDoc), func() error { return errNoRecord })
		if err == errNoRecord {
			return insertChild(tx, kindScalingPolicy, key, id, p)
		}
		if err != nil {
			return err
		}
		return putDoc(tx, rec, p)
	})
	if err != nil {
		return nil, err
	}
	return &api.PutScalingPolicyOutput{Name: api.String(p.Name)}, nil
}

// checkOneTargetPolicy refuses a second target-based policy: a fleet has at most one
// (PutScalingPolicy: "you can have one target-based policy, one or multiple rule-based
// scaling policies, or both").
func checkOneTargetPolicy(tx store.Tx, p *scalingPolicyDoc) error {
	if p.Type != policyTargetBased {
		return nil
	}
	return eachChild(tx, kindScalingPolicy, p.FleetID, func(_ *store.Record, q *scalingPolicyDoc) error {
		if q.Type == policyTargetBased && q.Name != p.Name {
			return api.Errorf(api.InvalidRequestException,
				"Fleet %s already has the target-based scaling policy %q; a fleet has at most one (PolicyType TargetBased).", p.FleetID, q.Name)
		}
		return nil
	})
}

// newScalingPolicy checks a PutScalingPolicy request beyond the model and returns the
// policy it describes. PolicyType defaults to RuleBased, the only kind the API first had.
func newScalingPolicy(in *api.PutScalingPolicyInput) (*scalingPolicyDoc, error) {
	p := &scalingPolicyDoc{Name: api.Deref(in.Name), Type: policyRuleBased, Metric: string(api.Deref(in.MetricName))}
	if in.PolicyType != nil {
		p.Type = string(*in.PolicyType)
	}
	if p.Type == policyTargetBased {
		return p, targetPolicy(p, in)
	}
	return p, rulePolicy(p, in)
}

// targetPolicy checks and takes the fields of a target-based policy: MetricName
// PercentAvailableGameSessions, a TargetValue from 0 to below 100 (a buffer of 100% would
// need infinite capacity), and none of the rule's fields.
func targetPolicy(p *scalingPolicyDoc, in *api.PutScalingPolicyInput) error {
	invalid := func(format string, args ...any) error {
		return api.Errorf(api.InvalidRequestException, format, args...)
	}
	switch {
	case p.Metric != metricPercentAvailable:
		return invalid("MetricName must be PercentAvailableGameSessions for a TargetBased policy, not %s.", p.Metric)
	case in.TargetConfiguration == nil:
		return invalid("TargetConfiguration is required for a TargetBased policy.")
	}
	for field, set := range map[string]bool{"ComparisonOperator": in.ComparisonOperator != nil, "Threshold": in.Threshold != nil,
		"EvaluationPeriods": in.EvaluationPeriods != nil, "ScalingAdjustment": in.ScalingAdjustment != nil,
		"ScalingAdjustmentType": in.ScalingAdjustmentType != nil} {
		if set {
			return invalid("%s is for RuleBased policies; a TargetBased policy takes only TargetConfiguration.", field)
		}
	}
	p.Target = api.Deref(in.TargetConfiguration.TargetValue)
	if p.Target < 0 || p.Target >= 100 || math.IsNaN(p.Target) {
		return invalid("TargetConfiguration.TargetValue must be a percentage from 0 to below 100, not %g.", p.Target)
	}
	return nil
}

// rulePolicy checks and takes the fields of a rule-based policy: every part of the rule is
// required, the threshold is not negative (no metric is), an ExactCapacity is not negative,
// and there is no TargetConfiguration.
func rulePolicy(p *scalingPolicyDoc, in *api.PutScalingPolicyInput) error {
	invalid := func(format string, args ...any) error {
		return api.Errorf(api.InvalidRequestException, format, args...)
	}
	if in.TargetConfiguration != nil {
		return invalid("TargetConfiguration is for TargetBased policies; a RuleBased policy takes ComparisonOperator, Threshold, EvaluationPeriods, ScalingAdjustment and ScalingAdjustmentType.")
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"ComparisonOperator", in.ComparisonOperator != nil}, {"Threshold", in.Threshold != nil},
		{"EvaluationPeriods", in.EvaluationPeriods != nil}, {"ScalingAdjustment", in.ScalingAdjustment != nil},
		{"ScalingAdjustmentType", in.ScalingAdjustmentType != nil}} {
		if !f.set {
			return invalid("%s is required for a RuleBased policy.", f.name)
		}
	}
	p.Operator, p.Threshold, p.Periods = string(*in.ComparisonOperator), *in.Threshold, *in.EvaluationPeriods
	p.Adjustment, p.AdjustmentType = *in.ScalingAdjustment, string(*in.ScalingAdjustmentType)
	switch {
	case p.Threshold < 0 || math.IsNaN(p.Threshold) || math.IsInf(p.Threshold, 0):
		return invalid("Threshold must be a number of at least 0, not %g.", p.Threshold)
	case p.AdjustmentType == adjustExact && p.Adjustment < 0:
		return invalid("ScalingAdjustment must be at least 0 with ScalingAdjustmentType ExactCapacity, not %d.", p.Adjustment)
	}
	return nil
}

// scalingFleetTx reads, in tx, a fleet whose scaling policies are asked for: a live managed
// (EC2) fleet, which for a change must not be in ERROR or DELETING.
func (s *Service) scalingFleetTx(tx store.Tx, id string, change bool) (*fleetDoc, error) {
	f, err := s.liveFleet(tx, id)
	if err != nil {
		return nil, err
	}
	if f.ComputeType != string(api.ComputeTypeEc2) {
		return nil, api.Errorf(api.InvalidRequestException,
			"Fleet %s has ComputeType %s; scaling policies are for managed EC2 fleets.", id, f.ComputeType)
	}
	if change && (f.Status == fleetError || f.Status == fleetDeleting) {
		return nil, api.Errorf(api.InvalidRequestException, "Fleet %s is in status %s; its scaling policies cannot change.", id, f.Status)
	}
	return f, nil
}

// DescribeScalingPolicies lists a fleet's scaling policies, one entry per policy and
// location (only Location's when given), in the order the policies were created, a page at a
// time. Every policy Hoist holds is ACTIVE: changes take effect in the call that makes them,
// so a StatusFilter other than ACTIVE finds nothing.
func (s *Service) DescribeScalingPolicies(ctx context.Context, in *api.DescribeScalingPoliciesInput) (*api.DescribeScalingPoliciesOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	status, loc := string(api.Deref(in.StatusFilter)), api.Deref(in.Location)
	var entries []api.ScalingPolicy
	err = s.view(ctx, func(tx store.Tx) error {
		entries = nil
		f, err := s.scalingFleetTx(tx, id, false)
		if err != nil {
			return err
		}
		locs := s.placementLocations(f)
		if loc != "" && !slices.Contains(locs, loc) {
			return api.Errorf(api.InvalidRequestException, "Fleet %s has no location %s.", id, loc)
		}
		if loc != "" {
			locs = []string{loc}
		}
		if status != "" && status != string(api.ScalingStatusTypeActive) {
			return nil
		}
		return eachChild(tx, kindScalingPolicy, id, func(_ *store.Record, p *scalingPolicyDoc) error {
			for _, l := range locs {
				entries = append(entries, s.apiScalingPolicy(p, l))
			}
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return s.pageScalingPolicies(ctx, entries, filterHash("DescribeScalingPolicies", id, status, loc), in)
}

// pageScalingPolicies returns one page of entries (pageNames over their positions).
func (s *Service) pageScalingPolicies(ctx context.Context, entries []api.ScalingPolicy, hash string, in *api.DescribeScalingPoliciesInput) (*api.DescribeScalingPoliciesOutput, error) {
	names := make([]string, len(entries))
	byName := map[string]api.ScalingPolicy{}
	for i, e := range entries {
		names[i] = api.Deref(e.Name) + "\x00" + api.Deref(e.Location)
		byName[names[i]] = e
	}
	page, tok, err := pageNames(s, ctx, names, hash, in.NextToken, pageSize(in.Limit), func(_ store.Tx, name string) (api.ScalingPolicy, error) {
		return byName[name], nil
	})
	if err != nil {
		return nil, err
	}
	return &api.DescribeScalingPoliciesOutput{ScalingPolicies: page, NextToken: tok}, nil
}

// apiScalingPolicy is a policy as DescribeScalingPolicies shows it in location loc.
func (s *Service) apiScalingPolicy(p *scalingPolicyDoc, loc string) api.ScalingPolicy {
	typ, metric, status := api.PolicyType(p.Type), api.MetricName(p.Metric), api.ScalingStatusTypeActive
	out := api.ScalingPolicy{FleetId: api.String(p.FleetID), FleetArn: api.String(s.arn(arnFleet, p.FleetID)),
		Name: api.String(p.Name), PolicyType: &typ, MetricName: &metric, Status: &status, Location: api.String(loc)}
	if p.Type == policyTargetBased {
		out.TargetConfiguration = &api.TargetConfiguration{TargetValue: api.Float64(p.Target)}
		return out
	}
	op, adj := api.ComparisonOperatorType(p.Operator), api.ScalingAdjustmentType(p.AdjustmentType)
	out.ComparisonOperator, out.Threshold, out.EvaluationPeriods = &op, api.Float64(p.Threshold), api.Int32(p.Periods)
	out.ScalingAdjustment, out.ScalingAdjustmentType = api.Int32(p.Adjustment), &adj
	return out
}

// DeleteScalingPolicy removes a fleet's scaling policy at once, in every location.
func (s *Service) DeleteScalingPolicy(ctx context.Context, in *api.DeleteScalingPolicyInput) (*api.DeleteScalingPolicyOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	name := api.Deref(in.Name)
	err = s.update(ctx, func(tx store.Tx) error {
		if _, err := s.scalingFleetTx(tx, id, false); err != nil {
			return err
		}
		err := tx.Delete(kindScalingPolicy, scalingPolicyKey(id, name))
		if errors.Is(err, store.ErrNotFound) {
			return api.Errorf(api.NotFoundException, "Fleet %s has no scaling policy %q.", id, name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteScalingPolicyOutput{}, nil
}

// decorateStoppedActions adds each location's StoppedActions to DescribeFleetLocationAttributes
// of a managed fleet.
func (s *Service) decorateStoppedActions(ctx context.Context, out *api.DescribeFleetLocationAttributesOutput) error {
	var m managedDoc
	if err := s.read(ctx, kindManaged, api.Deref(out.FleetId), &m, func() error { return errSkip }); err != nil {
		return ignoreSkip(err)
	}
	for i, la := range out.LocationAttributes {
		if la.LocationState != nil && m.scalingStopped(api.Deref(la.LocationState.Location), s.region) {
			out.LocationAttributes[i].StoppedActions = []api.FleetAction{api.FleetActionAutoScaling}
		}
	}
	return nil
}
