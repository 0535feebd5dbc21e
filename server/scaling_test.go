package server_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
)

// newScalingRig is a managed rig (the example game server as a hoist-local build) whose fake
// clock the test holds: the autoscaler evaluates once a minute of it.
func newScalingRig(t *testing.T) (*managedRig, *clock.Fake) {
	clk := clock.NewFake(time.Now())
	return newRig(t, "", clk), clk
}

// evaluate advances the clock by a minute, the autoscaler's period, and steps the loops.
func (r *managedRig) evaluate(clk *clock.Fake) {
	clk.Advance(time.Minute)
	if err := r.srv.StepLoops(context.Background()); err != nil {
		r.t.Fatalf("stepping the loops: %v", err)
	}
}

func (r *managedRig) desired(fleet string) int32 {
	out, err := r.gl.DescribeFleetCapacity(context.Background(), &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetCapacity) != 1 {
		r.t.Fatalf("DescribeFleetCapacity: %v", err)
	}
	return aws.ToInt32(out.FleetCapacity[0].InstanceCounts.DESIRED)
}

// fill starts n game sessions and waits until they are ACTIVE; it returns their IDs.
func (r *managedRig) fill(fleet string, n int) []string {
	ctx := context.Background()
	var ids []string
	for range n {
		gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
		if err != nil {
			r.t.Fatalf("CreateGameSession: %v", err)
		}
		ids = append(ids, aws.ToString(gs.GameSession.GameSessionId))
	}
	eventually(r.t, 30*time.Second, "game sessions ACTIVE", func() bool {
		out, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(fleet), StatusFilter: aws.String("ACTIVE")})
		return err == nil && len(out.GameSessions) == n
	})
	return ids
}

func (r *managedRig) scalingEvents(fleet, policy string) int {
	n := 0
	for _, e := range r.events(fleet) {
		if e.EventCode == types.EventCodeFleetScalingEvent && strings.Contains(aws.ToString(e.Message), `"`+policy+`"`) {
			n++
		}
	}
	return n
}

// TestTargetBasedScaling: a target-based policy (50% of the game sessions available) grows
// a fleet of real processes when its sessions fill it, StopFleetActions freezes it, and once
// actions start again it shrinks back to one instance when the sessions have ended.
func TestTargetBasedScaling(t *testing.T) {
	r, clk := newScalingRig(t)
	ctx := context.Background()
	fleet := r.createFleet(2)
	eventually(t, 60*time.Second, "fleet ACTIVE with 1 instance", func() bool {
		return r.fleet(fleet).Status == types.FleetStatusActive && r.settled(fleet, 1, 2)
	})
	r.setCapacity(fleet, 1)
	_, err := r.gl.PutScalingPolicy(ctx, &gamelift.PutScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String("buffer"),
		PolicyType: types.PolicyTypeTargetBased, MetricName: types.MetricNamePercentAvailableGameSessions,
		TargetConfiguration: &types.TargetConfiguration{TargetValue: aws.Float64(50)}})
	if err != nil {
		t.Fatalf("PutScalingPolicy: %v", err)
	}
	pols, err := r.gl.DescribeScalingPolicies(ctx, &gamelift.DescribeScalingPoliciesInput{FleetId: aws.String(fleet)})
	if err != nil || len(pols.ScalingPolicies) != 1 || pols.ScalingPolicies[0].Status != types.ScalingStatusTypeActive {
		t.Fatalf("DescribeScalingPolicies: %+v, %v", pols, err)
	}
	sessions := r.fill(fleet, 2)
	r.evaluate(clk)
	if d := r.desired(fleet); d != 2 || r.scalingEvents(fleet, "buffer") != 1 {
		t.Fatalf("desired %d, %d scaling events after the instance filled; want 2, 1", d, r.scalingEvents(fleet, "buffer"))
	}
	eventually(t, 60*time.Second, "2 ACTIVE instances with 2 processes each", func() bool { return r.settled(fleet, 2, 2) })

	actions := []types.FleetAction{types.FleetActionAutoScaling}
	if _, err := r.gl.StopFleetActions(ctx, &gamelift.StopFleetActionsInput{FleetId: aws.String(fleet), Actions: actions}); err != nil {
		t.Fatalf("StopFleetActions: %v", err)
	}
	for _, id := range sessions {
		if _, err := r.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: aws.String(id),
			TerminationMode: types.TerminationModeForceTerminate}); err != nil {
			t.Fatalf("TerminateGameSession: %v", err)
		}
	}
	eventually(t, 60*time.Second, "the ended sessions' processes replaced", func() bool { return r.settled(fleet, 2, 2) })
	r.evaluate(clk)
	if d := r.desired(fleet); d != 2 || !slices.Equal(r.fleet(fleet).StoppedActions, actions) {
		t.Fatalf("desired %d while auto-scaling is stopped, want 2", d)
	}
	if _, err := r.gl.StartFleetActions(ctx, &gamelift.StartFleetActionsInput{FleetId: aws.String(fleet), Actions: actions}); err != nil {
		t.Fatalf("StartFleetActions: %v", err)
	}
	r.evaluate(clk)
	if d := r.desired(fleet); d != 1 || r.scalingEvents(fleet, "buffer") != 2 {
		t.Fatalf("desired %d after the sessions ended, want 1", d)
	}
	eventually(t, 60*time.Second, "back to 1 instance", func() bool { return r.settled(fleet, 1, 2) })
}

// TestRuleBasedScaling: a rule-based policy on AvailableGameSessions ("fewer than 1 for 2
// minutes: add an instance") acts at its second evaluation of a full fleet, not its first.
func TestRuleBasedScaling(t *testing.T) {
	r, clk := newScalingRig(t)
	ctx := context.Background()
	fleet := r.createFleet(1)
	eventually(t, 60*time.Second, "fleet ACTIVE with 1 instance", func() bool {
		return r.fleet(fleet).Status == types.FleetStatusActive && r.settled(fleet, 1, 1)
	})
	r.setCapacity(fleet, 1)
	_, err := r.gl.PutScalingPolicy(ctx, &gamelift.PutScalingPolicyInput{FleetId: aws.String(fleet), Name: aws.String("full"),
		PolicyType: types.PolicyTypeRuleBased, MetricName: types.MetricNameAvailableGameSessions,
		ComparisonOperator: types.ComparisonOperatorTypeLessThanThreshold, Threshold: aws.Float64(1),
		EvaluationPeriods: aws.Int32(2), ScalingAdjustmentType: types.ScalingAdjustmentTypeChangeInCapacity, ScalingAdjustment: aws.Int32(1)})
	if err != nil {
		t.Fatalf("PutScalingPolicy: %v", err)
	}
	// The fake clock moves at most 2 minutes in all: the processes' health reports come every
	// minute of real time, so 3 fake minutes without one would end them.
	if err := r.srv.StepLoops(ctx); err != nil || r.desired(fleet) != 1 {
		t.Fatalf("desired %d with free capacity (%v), want 1", r.desired(fleet), err)
	}
	r.fill(fleet, 1)
	r.evaluate(clk)
	if d := r.desired(fleet); d != 1 {
		t.Fatalf("desired %d after one full period, want 1", d)
	}
	r.evaluate(clk)
	if d := r.desired(fleet); d != 2 || r.scalingEvents(fleet, "full") != 1 {
		t.Fatalf("desired %d after two full periods, want 2", d)
	}
	eventually(t, 60*time.Second, "2 ACTIVE instances", func() bool { return r.settled(fleet, 2, 1) })
}
