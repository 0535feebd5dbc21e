package gamelift

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// scalingFleet creates a managed fleet (2 processes per instance) with room for maxSize
// instances and makes its first instance ACTIVE with both processes ACTIVE.
func (f *fixture) scalingFleet(t *testing.T, maxSize int32) string {
	t.Helper()
	fleet := f.managedFleet(t)
	ok(f.h.UpdateFleetCapacity(f.ctx, &api.UpdateFleetCapacityInput{FleetId: api.String(fleet), MaxSize: api.Int32(maxSize)}))(t)
	f.activateInstances(t, fleet)
	return fleet
}

// activateInstances walks every PENDING instance of fleet to ACTIVE, with two ACTIVE
// processes each, as the host and the processes would.
func (f *fixture) activateInstances(t *testing.T, fleet string) {
	t.Helper()
	for _, li := range f.localInstances(t, fleet) {
		if li.Status != "PENDING" {
			continue
		}
		for _, stage := range []string{StageDownloading, StageValidating, StageBuilding, StageActivating} {
			must(t, f.svc.InstanceProgress(f.ctx, fleet, li.InstanceID, stage))
		}
		token, _ := ok2(f.svc.InstanceAuthToken(f.ctx, fleet, li.InstanceID))(t)
		for i := range 2 {
			ref := ProcessRef{FleetID: fleet, ComputeName: li.InstanceID, ProcessID: fmt.Sprintf("%s-p%d", li.InstanceID, i)}
			must(t, f.svc.AdmitProcess(f.ctx, ref, token))
			must(t, f.svc.ActivateServerProcess(f.ctx, ref, ProcessActivation{Port: 7000 + i}))
		}
		must(t, f.svc.ManagedProcessReady(f.ctx, fleet))
	}
}

// activeSession creates a game session on fleet and activates it; it returns its ID.
func (f *fixture) activeSession(t *testing.T, fleet string) string {
	t.Helper()
	gs := ok(f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{FleetId: api.String(fleet),
		MaximumPlayerSessionCount: api.Int32(4)}))(t).GameSession
	ref := ok(f.svc.GameSessionProcess(f.ctx, *gs.GameSessionId))(t)
	must(t, f.svc.ActivateGameSession(f.ctx, ref, *gs.GameSessionId))
	return *gs.GameSessionId
}

func (f *fixture) endSession(t *testing.T, id string) {
	t.Helper()
	force := api.TerminationModeForceTerminate
	ok(f.h.TerminateGameSession(f.ctx, &api.TerminateGameSessionInput{GameSessionId: api.String(id), TerminationMode: &force}))(t)
}

// autoscale advances the clock by d and runs one autoscaler step.
func (f *fixture) autoscale(t *testing.T, d time.Duration) {
	t.Helper()
	f.clock.Advance(d)
	must(t, f.svc.Autoscaler().Step(f.ctx))
}

func (f *fixture) desired(t *testing.T, fleet string) int32 {
	t.Helper()
	fc := ok(f.h.DescribeFleetCapacity(f.ctx, &api.DescribeFleetCapacityInput{FleetIds: []string{fleet}}))(t).FleetCapacity
	return *fc[0].InstanceCounts.DESIRED
}

func rulePolicyInput(fleet, name string, metric api.MetricName, op api.ComparisonOperatorType, threshold float64,
	periods, adj int32, typ api.ScalingAdjustmentType) *api.PutScalingPolicyInput {
	rule := api.PolicyTypeRuleBased
	return &api.PutScalingPolicyInput{FleetId: api.String(fleet), Name: api.String(name), PolicyType: &rule,
		MetricName: &metric, ComparisonOperator: &op, Threshold: api.Float64(threshold), EvaluationPeriods: api.Int32(periods),
		ScalingAdjustment: api.Int32(adj), ScalingAdjustmentType: &typ}
}

func targetPolicyInput(fleet, name string, target float64) *api.PutScalingPolicyInput {
	typ, metric := api.PolicyTypeTargetBased, api.MetricNamePercentAvailableGameSessions
	return &api.PutScalingPolicyInput{FleetId: api.String(fleet), Name: api.String(name), PolicyType: &typ,
		MetricName: &metric, TargetConfiguration: &api.TargetConfiguration{TargetValue: api.Float64(target)}}
}

// TestScalingPolicyValidation: bad combinations are InvalidRequestException naming the
// field; unknown fleets NotFoundException; Anywhere fleets cannot have policies.
func TestScalingPolicyValidation(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	gt, change := api.ComparisonOperatorTypeGreaterThanThreshold, api.ScalingAdjustmentTypeChangeInCapacity
	cases := map[string]func(*api.PutScalingPolicyInput){
		"MetricName":                      func(in *api.PutScalingPolicyInput) { m := api.MetricNameIdleInstances; in.MetricName = &m },
		"TargetValue":                     func(in *api.PutScalingPolicyInput) { in.TargetConfiguration.TargetValue = api.Float64(100) },
		"ComparisonOperator":              func(in *api.PutScalingPolicyInput) { in.ComparisonOperator = &gt },
		"ScalingAdjustmentType":           func(in *api.PutScalingPolicyInput) { in.ScalingAdjustmentType = &change },
		"TargetConfiguration is required": func(in *api.PutScalingPolicyInput) { in.TargetConfiguration = nil },
	}
	for want, change := range cases {
		in := targetPolicyInput(fleet, "t", 20)
		change(in)
		if msg := wantCode(t, errOf(f.h.PutScalingPolicy(f.ctx, in)), api.InvalidRequestException); !strings.Contains(msg, want) {
			t.Errorf("%s: message %q", want, msg)
		}
	}
	rule := func() *api.PutScalingPolicyInput {
		return rulePolicyInput(fleet, "r", api.MetricNameIdleInstances, gt, 2, 3, -1, change)
	}
	ruleCases := map[string]func(*api.PutScalingPolicyInput){
		"Threshold":         func(in *api.PutScalingPolicyInput) { in.Threshold = nil },
		"EvaluationPeriods": func(in *api.PutScalingPolicyInput) { in.EvaluationPeriods = nil },
		"TargetConfiguration": func(in *api.PutScalingPolicyInput) {
			in.TargetConfiguration = &api.TargetConfiguration{TargetValue: api.Float64(1)}
		},
		"at least 0": func(in *api.PutScalingPolicyInput) { in.Threshold = api.Float64(-1) },
		"ExactCapacity": func(in *api.PutScalingPolicyInput) {
			exact := api.ScalingAdjustmentTypeExactCapacity
			in.ScalingAdjustmentType = &exact
		},
	}
	for want, change := range ruleCases {
		in := rule()
		change(in)
		if msg := wantCode(t, errOf(f.h.PutScalingPolicy(f.ctx, in)), api.InvalidRequestException); !strings.Contains(msg, want) {
			t.Errorf("%s: message %q", want, msg)
		}
	}
	in := rule()
	in.PolicyType = nil // RuleBased by default
	ok(f.h.PutScalingPolicy(f.ctx, in))(t)
	wantCode(t, errOf(f.h.PutScalingPolicy(f.ctx, targetPolicyInput("fleet-nope", "t", 20))), api.NotFoundException)
	wantCode(t, errOf(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(f.anywhereFleet(t, "a"), "t", 20))), api.InvalidRequestException)
	ok(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(fleet, "t", 20)))(t)
	ok(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(fleet, "t", 30)))(t) // replaced
	msg := wantCode(t, errOf(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(fleet, "t2", 20))), api.InvalidRequestException)
	if !strings.Contains(msg, "at most one") {
		t.Errorf("second target-based policy: %q", msg)
	}
}

// TestDescribeAndDeleteScalingPolicies: one entry per policy and location, the filters, paging
// and deletion.
func TestDescribeAndDeleteScalingPolicies(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.scalingFleet(t, 2)
	ok(f.h.CreateFleetLocations(f.ctx, &api.CreateFleetLocationsInput{FleetId: api.String(fleet),
		Locations: []api.LocationConfiguration{{Location: api.String("eu-west-1")}}}))(t)
	ok(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(fleet, "buffer", 25)))(t)
	ok(f.h.PutScalingPolicy(f.ctx, rulePolicyInput(fleet, "idle", api.MetricNameIdleInstances,
		api.ComparisonOperatorTypeGreaterThanOrEqualToThreshold, 2, 5, -10, api.ScalingAdjustmentTypePercentChangeInCapacity)))(t)
	describe := func(in *api.DescribeScalingPoliciesInput) []string {
		in.FleetId = api.String(fleet)
		var got []string
		for {
			out := ok(f.h.DescribeScalingPolicies(f.ctx, in))(t)
			for _, p := range out.ScalingPolicies {
				if *p.Status != api.ScalingStatusTypeActive || *p.FleetArn != f.svc.arn(arnFleet, fleet) {
					t.Fatalf("policy %+v", p)
				}
				got = append(got, *p.Name+"@"+*p.Location)
			}
			if out.NextToken == nil {
				return got
			}
			in.NextToken = out.NextToken
		}
	}
	all := []string{"buffer@" + testRegion, "buffer@eu-west-1", "idle@" + testRegion, "idle@eu-west-1"}
	if got := describe(&api.DescribeScalingPoliciesInput{Limit: api.Int32(1)}); !slices.Equal(got, all) {
		t.Fatalf("policies %v, want %v", got, all)
	}
	if got := describe(&api.DescribeScalingPoliciesInput{Location: api.String("eu-west-1")}); !slices.Equal(got, []string{"buffer@eu-west-1", "idle@eu-west-1"}) {
		t.Fatalf("policies in eu-west-1 %v", got)
	}
	deleted := api.ScalingStatusTypeDeleted
	if got := describe(&api.DescribeScalingPoliciesInput{StatusFilter: &deleted}); len(got) != 0 {
		t.Fatalf("DELETED policies %v", got)
	}
	out := ok(f.h.DescribeScalingPolicies(f.ctx, &api.DescribeScalingPoliciesInput{FleetId: api.String(fleet), Location: api.String(testRegion)}))(t)
	if p := out.ScalingPolicies[1]; *p.ScalingAdjustment != -10 || *p.EvaluationPeriods != 5 || *p.Threshold != 2 || p.TargetConfiguration != nil ||
		*out.ScalingPolicies[0].TargetConfiguration.TargetValue != 25 {
		t.Fatalf("policies %+v", out.ScalingPolicies)
	}
	wantCode(t, errOf(f.h.DescribeScalingPolicies(f.ctx, &api.DescribeScalingPoliciesInput{FleetId: api.String(fleet), Location: api.String("ap-south-1")})), api.InvalidRequestException)
	ok(f.h.DeleteScalingPolicy(f.ctx, &api.DeleteScalingPolicyInput{FleetId: api.String(fleet), Name: api.String("buffer")}))(t)
	wantCode(t, errOf(f.h.DeleteScalingPolicy(f.ctx, &api.DeleteScalingPolicyInput{FleetId: api.String(fleet), Name: api.String("buffer")})), api.NotFoundException)
	if got := describe(&api.DescribeScalingPoliciesInput{}); !slices.Equal(got, all[2:]) {
		t.Fatalf("after deletion %v", got)
	}
}

// TestScalingMetricValues: every metric and its no-data cases.
func TestScalingMetricValues(t *testing.T) {
	l := &locationLoad{activating: 1, active: 2, activeInstances: 4, idleInstances: 1, processes: 8, available: 2,
		activatable: 1, players: 5, openSlots: 3, queueDepth: 6, waitSeconds: 42}
	want := map[api.MetricName]float64{api.MetricNameActivatingGameSessions: 1, api.MetricNameActiveGameSessions: 2,
		api.MetricNameActiveInstances: 4, api.MetricNameAvailableGameSessions: 2, api.MetricNameAvailablePlayerSessions: 3,
		api.MetricNameCurrentPlayerSessions: 5, api.MetricNameIdleInstances: 1, api.MetricNamePercentAvailableGameSessions: 25,
		api.MetricNamePercentIdleInstances: 25, api.MetricNameQueueDepth: 6, api.MetricNameWaitTime: 42,
		api.MetricNameConcurrentActivatableGameSessions: 1}
	for _, name := range enumMetricNames() {
		if v, ok := l.metric(string(name)); !ok || v != want[name] {
			t.Errorf("%s = %g, %v; want %g", name, v, ok, want[name])
		}
	}
	empty := &locationLoad{}
	for _, name := range []api.MetricName{api.MetricNamePercentAvailableGameSessions, api.MetricNamePercentIdleInstances} {
		if _, ok := empty.metric(string(name)); ok {
			t.Errorf("%s of an empty location has data", name)
		}
	}
}

// enumMetricNames lists the MetricName values of the model (the test fails when one is added
// without a definition).
func enumMetricNames() []api.MetricName {
	return []api.MetricName{api.MetricNameActivatingGameSessions, api.MetricNameActiveGameSessions, api.MetricNameActiveInstances,
		api.MetricNameAvailableGameSessions, api.MetricNameAvailablePlayerSessions, api.MetricNameCurrentPlayerSessions,
		api.MetricNameIdleInstances, api.MetricNamePercentAvailableGameSessions, api.MetricNamePercentIdleInstances,
		api.MetricNameQueueDepth, api.MetricNameWaitTime, api.MetricNameConcurrentActivatableGameSessions}
}

// TestScalingRuleArithmetic: comparisons, adjustment types and the target computation.
func TestScalingRuleArithmetic(t *testing.T) {
	for _, c := range []struct {
		op   api.ComparisonOperatorType
		v    float64
		want bool
	}{{api.ComparisonOperatorTypeGreaterThanOrEqualToThreshold, 5, true}, {api.ComparisonOperatorTypeGreaterThanThreshold, 5, false},
		{api.ComparisonOperatorTypeLessThanThreshold, 4, true}, {api.ComparisonOperatorTypeLessThanOrEqualToThreshold, 5, true},
		{api.ComparisonOperatorTypeLessThanThreshold, 5, false}, {api.ComparisonOperatorTypeGreaterThanThreshold, 6, true}} {
		p := &scalingPolicyDoc{Operator: string(c.op), Threshold: 5}
		if got := p.holds(c.v); got != c.want {
			t.Errorf("%g %s 5 = %v", c.v, c.op, got)
		}
	}
	for _, c := range []struct {
		typ          api.ScalingAdjustmentType
		adj, current int32
		want         int64
	}{{api.ScalingAdjustmentTypeChangeInCapacity, -10, 12, 2}, {api.ScalingAdjustmentTypeExactCapacity, 7, 3, 7},
		{api.ScalingAdjustmentTypePercentChangeInCapacity, 20, 50, 60}, {api.ScalingAdjustmentTypePercentChangeInCapacity, 10, 3, 4},
		{api.ScalingAdjustmentTypePercentChangeInCapacity, -10, 3, 2}, {api.ScalingAdjustmentTypePercentChangeInCapacity, 25, 51, 63}} {
		p := &scalingPolicyDoc{AdjustmentType: string(c.typ), Adjustment: c.adj}
		if got := p.adjusted(c.current); got != c.want {
			t.Errorf("%s %d from %d = %d, want %d", c.typ, c.adj, c.current, got, c.want)
		}
	}
	for _, c := range []struct {
		target    float64
		busy, per int
		want      int64
	}{{50, 2, 2, 2}, {20, 4, 1, 5}, {0, 3, 2, 2}, {50, 0, 2, 1}, {90, 1, 10, 1}, {10, 9, 1, 10}} {
		l := &locationLoad{processes: c.busy + 1, available: 1}
		if got := targetCapacity(c.target, l, c.per); got != c.want {
			t.Errorf("target %g%%, %d busy, %d per instance: %d instances, want %d", c.target, c.busy, c.per, got, c.want)
		}
	}
}

// TestFleetLoad: the metrics as computed from a fleet's instances, processes, game sessions,
// player sessions and queued placements.
func TestFleetLoad(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.scalingFleet(t, 2)
	gs := f.activeSession(t, fleet)
	ok(f.h.CreatePlayerSession(f.ctx, &api.CreatePlayerSessionInput{GameSessionId: api.String(gs), PlayerId: api.String("p1")}))(t)
	load := f.load(t, fleet)
	if load.active != 1 || load.available != 1 || load.processes != 2 || load.activeInstances != 1 || load.idleInstances != 0 ||
		load.players != 1 || load.openSlots != 3 || load.activatable != 1 || load.queueDepth != 0 {
		t.Fatalf("load %+v", load)
	}
	f.activeSession(t, fleet)
	ok(f.h.CreateGameSessionQueue(f.ctx, &api.CreateGameSessionQueueInput{Name: api.String("q"), TimeoutInSeconds: api.Int32(600),
		Destinations: []api.GameSessionQueueDestination{{DestinationArn: api.String(f.svc.arn(arnFleet, fleet))}}}))(t)
	ok(f.h.StartGameSessionPlacement(f.ctx, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl-1"),
		GameSessionQueueName: api.String("q"), MaximumPlayerSessionCount: api.Int32(4)}))(t)
	f.clock.Advance(30 * time.Second)
	load = f.load(t, fleet)
	if load.available != 0 || load.queueDepth != 1 || load.waitSeconds != 30 || load.activatable != 0 {
		t.Fatalf("load with a full fleet and a waiting placement %+v", load)
	}
}

func (f *fixture) load(t *testing.T, fleet string) *locationLoad {
	t.Helper()
	var loads map[string]*locationLoad
	must(t, f.svc.view(f.ctx, func(tx store.Tx) error {
		fd, err := f.svc.liveFleet(tx, fleet)
		if err != nil {
			return err
		}
		loads, err = f.svc.fleetLoad(tx, fd, f.svc.nowMillis(), true)
		return err
	}))
	return loads[testRegion]
}

// TestAutoscalerRuleBased: a rule acts after its evaluation periods (counted once a minute
// however often the loop steps, and carried over to another Service on the same store, as
// to a new leader), then waits out its cooldown.
func TestAutoscalerRuleBased(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.scalingFleet(t, 4)
	f.activeSession(t, fleet)
	f.activeSession(t, fleet)
	ok(f.h.PutScalingPolicy(f.ctx, rulePolicyInput(fleet, "full", api.MetricNameAvailableGameSessions,
		api.ComparisonOperatorTypeLessThanThreshold, 1, 3, 1, api.ScalingAdjustmentTypeChangeInCapacity)))(t)
	f.autoscale(t, 0)
	f.autoscale(t, 0) // the same minute: not a second period
	f.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 1 {
		t.Fatalf("desired %d after 2 periods, want 1", d)
	}
	other, _ := hostFixtureOn(t, f.store, f.clock, "other")
	other.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d after 3 periods, want 2", d)
	}
	codes := f.eventCodes(t, fleet)
	if codes[len(codes)-1] != string(api.EventCodeFleetScalingEvent) {
		t.Fatalf("events %v", codes)
	}
	for range 9 {
		f.autoscale(t, time.Minute) // cooldown
	}
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d during the cooldown, want 2", d)
	}
	f.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 3 {
		t.Fatalf("desired %d after the cooldown, want 3", d)
	}
}

// TestAutoscalerTargetBased: a target-based policy scales out when the buffer is short, asks
// for the same count again while the new instance warms up, does nothing while
// StopFleetActions holds it, and scales in keeping the instance with a protected game session.
func TestAutoscalerTargetBased(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.scalingFleet(t, 3)
	ok(f.h.PutScalingPolicy(f.ctx, targetPolicyInput(fleet, "buffer", 50)))(t)
	f.autoscale(t, 0)
	if d := f.desired(t, fleet); d != 1 {
		t.Fatalf("desired %d with an empty fleet, want 1", d)
	}
	a, b := f.activeSession(t, fleet), f.activeSession(t, fleet)
	f.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d with a full instance, want 2", d)
	}
	f.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d while the new instance is PENDING, want 2", d)
	}
	f.activateInstances(t, fleet)
	ok(f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(fleet),
		NewGameSessionProtectionPolicy: ptr(api.ProtectionPolicyFullProtection)}))(t)
	f.endSession(t, a)
	f.endSession(t, b)
	f.activeSession(t, fleet) // protected, on the new instance: the only ACTIVE processes left
	protected := f.instanceOf(t, fleet)
	ok(f.h.StopFleetActions(f.ctx, &api.StopFleetActionsInput{FleetId: api.String(fleet), Actions: []api.FleetAction{api.FleetActionAutoScaling}}))(t)
	f.autoscale(t, 15*time.Minute)
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d while stopped, want 2", d)
	}
	ok(f.h.StartFleetActions(f.ctx, &api.StartFleetActionsInput{FleetId: api.String(fleet), Actions: []api.FleetAction{api.FleetActionAutoScaling}}))(t)
	f.autoscale(t, time.Minute)
	if d := f.desired(t, fleet); d != 1 {
		t.Fatalf("desired %d after the sessions ended, want 1", d)
	}
	for _, li := range f.localInstances(t, fleet) {
		if (li.Status == InstanceTerminating) == (li.InstanceID == protected) {
			t.Fatalf("instance %s is %s; the protected one is %s", li.InstanceID, li.Status, protected)
		}
	}
}

// instanceOf returns the instance hosting the fleet's only live game session.
func (f *fixture) instanceOf(t *testing.T, fleet string) string {
	t.Helper()
	out := ok(f.h.DescribeGameSessions(f.ctx, &api.DescribeGameSessionsInput{FleetId: api.String(fleet), StatusFilter: api.String("ACTIVE")}))(t)
	if len(out.GameSessions) != 1 {
		t.Fatalf("%d ACTIVE game sessions", len(out.GameSessions))
	}
	ref := ok(f.svc.GameSessionProcess(f.ctx, *out.GameSessions[0].GameSessionId))(t)
	return ref.ComputeName
}

// TestFleetActionsPerLocation: StopFleetActions and StartFleetActions act on the home Region
// or on Location, shown in FleetAttributes and LocationAttributes.
func TestFleetActionsPerLocation(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.scalingFleet(t, 2)
	ok(f.h.CreateFleetLocations(f.ctx, &api.CreateFleetLocationsInput{FleetId: api.String(fleet),
		Locations: []api.LocationConfiguration{{Location: api.String("eu-west-1")}}}))(t)
	scaling := []api.FleetAction{api.FleetActionAutoScaling}
	ok(f.h.StopFleetActions(f.ctx, &api.StopFleetActionsInput{FleetId: api.String(fleet), Actions: scaling, Location: api.String("eu-west-1")}))(t)
	if got := f.attributes(t, fleet).StoppedActions; len(got) != 0 {
		t.Fatalf("home Region StoppedActions %v", got)
	}
	stopped := func() map[string]bool {
		out := ok(f.h.DescribeFleetLocationAttributes(f.ctx, &api.DescribeFleetLocationAttributesInput{FleetId: api.String(fleet)}))(t)
		m := map[string]bool{}
		for _, la := range out.LocationAttributes {
			m[*la.LocationState.Location] = slices.Equal(la.StoppedActions, scaling)
		}
		return m
	}
	if got := stopped(); !got["eu-west-1"] || got[testRegion] {
		t.Fatalf("stopped %v", got)
	}
	ok(f.h.StopFleetActions(f.ctx, &api.StopFleetActionsInput{FleetId: api.String(fleet), Actions: scaling}))(t)
	ok(f.h.StartFleetActions(f.ctx, &api.StartFleetActionsInput{FleetId: api.String(fleet), Actions: scaling, Location: api.String("eu-west-1")}))(t)
	if got := stopped(); got["eu-west-1"] || !got[testRegion] || !slices.Equal(f.attributes(t, fleet).StoppedActions, scaling) {
		t.Fatalf("stopped %v", got)
	}
	wantCode(t, errOf(f.h.StopFleetActions(f.ctx, &api.StopFleetActionsInput{FleetId: api.String(fleet), Actions: scaling,
		Location: api.String("ap-south-1")})), api.InvalidRequestException)
}
