package gamelift

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// ScalingInterval is how often the autoscaler evaluates each policy in each location: once a
// minute, GameLift's evaluation period (EvaluationPeriods counts minutes).
const ScalingInterval = time.Minute

// scalingCooldown is how long a rule-based policy that changed a location's capacity waits
// before it changes it again ("After changing capacity in response to an auto scaling policy,
// GameLift waits 10 minutes before responding to triggers from the same policy", in the
// guide's rule-based page). Its evaluations go on meanwhile. A target-based policy has no
// trigger to wait on: it computes the capacity its target needs from the busy game sessions,
// so evaluating again while new instances warm up asks for the same count (docs/scaling.md).
const scalingCooldown = 10 * time.Minute

// evalSlack lets an evaluation run this much before a full interval has passed, so that a
// ticker's jitter does not skip a period.
const evalSlack = time.Second

// evalState is a policy's evaluation history in one location, kept in the policy's record
// so that a new leader carries on where the last one stopped.
type evalState struct {
	// Last is when the policy was last evaluated here (Unix milliseconds).
	Last int64 `json:"last"`
	// Held counts the consecutive evaluations in which a rule-based policy's rule held; it
	// starts over when the rule does not hold, after a scaling event, and after a gap of more
	// than two intervals without evaluations.
	Held int32 `json:"held"`
	// Acted is when the policy last changed capacity here.
	Acted int64 `json:"acted,omitempty"`
}

// Autoscaler is the loop that applies the scaling policies of managed fleets: each Step
// evaluates every policy that is due (once per ScalingInterval of the clock, however often
// Step runs) in every location of an ACTIVE fleet where auto-scaling is not stopped, and
// changes the location's desired instances the way UpdateFleetCapacity does. Every change
// is a compare-and-set transaction per fleet, so Step may run on several nodes at once.
type Autoscaler struct{ s *Service }

// Autoscaler returns the autoscaler of s.
func (s *Service) Autoscaler() *Autoscaler { return &Autoscaler{s: s} }

// Run calls Step every interval of the Service's clock until ctx is done.
func (a *Autoscaler) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	clock.Every(ctx, a.s.clock, interval, a.Step, onError)
}

// Step evaluates the policies that are due, fleet by fleet.
func (a *Autoscaler) Step(ctx context.Context) error {
	var fleets []string
	err := a.s.view(ctx, func(tx store.Tx) error {
		fleets = fleets[:0]
		return eachRecord(tx, kindScalingPolicy, func(_ *store.Record, p *scalingPolicyDoc) {
			if !slices.Contains(fleets, p.FleetID) {
				fleets = append(fleets, p.FleetID)
			}
		})
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range fleets {
		errs = append(errs, a.s.update(ctx, func(tx store.Tx) error { return a.s.scaleFleetTx(tx, id) }))
	}
	return errors.Join(errs...)
}

// policyRecord is a stored policy and its record.
type policyRecord struct {
	rec *store.Record
	doc *scalingPolicyDoc
}

// scaleFleetTx evaluates, in tx, the due policies of one fleet. The policies of a deleted
// fleet are removed; a fleet that is not ACTIVE is not scaled.
func (s *Service) scaleFleetTx(tx store.Tx, fleetID string) error {
	var policies []policyRecord
	err := eachChild(tx, kindScalingPolicy, fleetID, func(r *store.Record, p *scalingPolicyDoc) error {
		policies = append(policies, policyRecord{r, p})
		return nil
	})
	if err != nil {
		return err
	}
	f := new(fleetDoc)
	if _, err := getDoc(tx, kindFleet, fleetID, f, func() error { return errNoRecord }); err != nil && err != errNoRecord {
		return err
	}
	if f.Status == fleetTerminated || f.ID == "" {
		for _, p := range policies {
			if err := deleteIfThere(tx, kindScalingPolicy, p.rec.ID); err != nil {
				return err
			}
		}
		return nil
	}
	m := new(managedDoc)
	mrec, err := getDoc(tx, kindManaged, fleetID, m, func() error { return errNoRecord })
	if err != nil || f.Status != fleetActive {
		return ignoreNoRecord(err)
	}
	return s.evaluatePolicies(tx, f, mrec, m, policies)
}

// evaluatePolicies evaluates the due policies of an ACTIVE fleet against its load at this
// moment, taken once for all of them, and writes back those whose history changed.
func (s *Service) evaluatePolicies(tx store.Tx, f *fleetDoc, mrec *store.Record, m *managedDoc, policies []policyRecord) error {
	now := s.nowMillis()
	due, queues := false, false
	for _, p := range policies {
		due = due || s.policyDue(p.doc, m, now)
		queues = queues || p.doc.Metric == string(api.MetricNameQueueDepth) || p.doc.Metric == string(api.MetricNameWaitTime)
	}
	if !due {
		return nil
	}
	loads, err := s.fleetLoad(tx, f, now, queues)
	if err != nil {
		return err
	}
	for _, p := range policies {
		if err := s.evaluatePolicy(tx, f, mrec, m, p.doc, loads, now); err != nil {
			return err
		}
		if err := putDoc(tx, p.rec, p.doc); err != nil {
			return err
		}
	}
	return nil
}

// policyDue reports whether p is due for an evaluation in a location of the fleet.
func (s *Service) policyDue(p *scalingPolicyDoc, m *managedDoc, now int64) bool {
	for loc := range m.Capacity {
		if st := p.Eval[loc]; !m.scalingStopped(loc, s.region) && (st == nil || st.due(now)) {
			return true
		}
	}
	return false
}

func (st *evalState) due(now int64) bool {
	return now-st.Last >= (ScalingInterval - evalSlack).Milliseconds()
}

// evaluatePolicy evaluates p in every location where it is due and applies what it decides.
// Locations where auto-scaling is stopped, or that the fleet no longer has, lose their
// history: evaluation periods start over when auto-scaling resumes.
func (s *Service) evaluatePolicy(tx store.Tx, f *fleetDoc, mrec *store.Record, m *managedDoc, p *scalingPolicyDoc, loads map[string]*locationLoad, now int64) error {
	if p.Eval == nil {
		p.Eval = map[string]*evalState{}
	}
	for loc := range p.Eval {
		if m.Capacity[loc] == nil || m.scalingStopped(loc, s.region) {
			delete(p.Eval, loc)
		}
	}
	for _, loc := range sortedLocations(m) {
		st := p.Eval[loc]
		if st == nil {
			st = &evalState{}
			p.Eval[loc] = st
		}
		if m.scalingStopped(loc, s.region) || !st.due(now) {
			continue
		}
		st.tick(now)
		next, why, act := p.decide(st, loads[loc], *m.Capacity[loc], perInstance(f, loads[loc]), now)
		if !act {
			continue
		}
		next, limited, err := s.roomFor(tx, f.ID, m.InstanceType, loc, *m.Capacity[loc], next)
		if err != nil {
			return err
		}
		if limited && next.Desired == m.Capacity[loc].Desired {
			continue // at the host's instance limit (instancelimits.go)
		}
		if err := s.changeCapacityTx(tx, f, mrec, m, loc, next, fmt.Sprintf("%s in %s.", why, loc)); err != nil {
			return err
		}
		st.Acted, st.Held = now, 0
	}
	return nil
}

// tick records an evaluation at now; after a gap of more than two intervals the rule's
// consecutive periods start over (the periods in between were not observed).
func (st *evalState) tick(now int64) {
	if st.Last != 0 && now-st.Last > 2*ScalingInterval.Milliseconds() {
		st.Held = 0
	}
	st.Last = now
}

// perInstance is how many game sessions an instance of the fleet hosts at once: the
// processes its runtime configuration runs, else what the location's instances show, at
// least 1.
func perInstance(f *fleetDoc, l *locationLoad) int {
	n := 0
	for _, sp := range runtimeOf(f).ServerProcesses {
		n += int(api.Deref(sp.ConcurrentExecutions))
	}
	if n == 0 && l != nil && l.activeInstances > 0 {
		n = l.processes / l.activeInstances
	}
	return max(n, 1)
}

// decide evaluates p once against load l of a location with capacity c: it returns the
// capacity to set, the reason, and whether to change anything. Nothing changes while a
// rule-based policy's cooldown runs, when the capacity would not change, or without data.
func (p *scalingPolicyDoc) decide(st *evalState, l *locationLoad, c capacityDoc, per int, now int64) (capacityDoc, string, bool) {
	if l == nil {
		l = &locationLoad{}
	}
	value, ok := l.metric(p.Metric)
	var want int64
	switch {
	case p.Type == policyTargetBased && ok:
		want = targetCapacity(p.Target, l, per)
	case p.Type == policyTargetBased:
		return c, "", false
	case !ok || !p.holds(value):
		st.Held = 0
		return c, "", false
	default:
		if st.Held++; st.Held < p.Periods {
			return c, "", false
		}
		want = p.adjusted(c.Desired)
	}
	want = min(max(want, int64(c.Min)), int64(c.Max))
	cooling := p.Type == policyRuleBased && st.Acted != 0 && now-st.Acted < scalingCooldown.Milliseconds()
	if cooling || want == int64(c.Desired) {
		return c, "", false
	}
	why := fmt.Sprintf("Scaling policy %q (%s): %s was %g; desired instances %d to %d", p.Name, p.Type, p.Metric, value, c.Desired, want)
	c.Desired = int32(want)
	return c, why, true
}

// targetCapacity is the instance count that keeps PercentAvailableGameSessions at target:
// the busy processes (hosting a live game session) must be (100 - target)% of all, in whole
// instances of per processes. At least one instance stays: with none, the metric has no data
// and the policy could never scale out again.
func targetCapacity(target float64, l *locationLoad, per int) int64 {
	busy := float64(l.processes - l.available)
	processes := math.Ceil(busy/(1-target/100) - 1e-9)
	return max(int64(math.Ceil(processes/float64(per)-1e-9)), 1)
}

// holds reports whether a rule-based policy's rule holds for value.
func (p *scalingPolicyDoc) holds(value float64) bool {
	switch api.ComparisonOperatorType(p.Operator) {
	case api.ComparisonOperatorTypeGreaterThanOrEqualToThreshold:
		return value >= p.Threshold
	case api.ComparisonOperatorTypeGreaterThanThreshold:
		return value > p.Threshold
	case api.ComparisonOperatorTypeLessThanThreshold:
		return value < p.Threshold
	case api.ComparisonOperatorTypeLessThanOrEqualToThreshold:
		return value <= p.Threshold
	}
	return false
}

// adjusted is the desired instance count a rule-based policy asks for, from current.
func (p *scalingPolicyDoc) adjusted(current int32) int64 {
	switch p.AdjustmentType {
	case adjustExact:
		return int64(p.Adjustment)
	case adjustPercent:
		return int64(current) + percentStep(current, p.Adjustment)
	}
	return int64(current) + int64(p.Adjustment)
}

// percentStep is pct percent of current instances, rounded as EC2 Auto Scaling rounds a
// PercentChangeInCapacity: a change smaller than one instance is one instance, a larger one
// is truncated toward zero (12.7 adds 12).
func percentStep(current, pct int32) int64 {
	d := float64(current) * float64(pct) / 100
	switch {
	case d > 0 && d < 1:
		return 1
	case d < 0 && d > -1:
		return -1
	}
	return int64(d)
}
