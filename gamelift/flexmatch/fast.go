package flexmatch

import (
	"math"
	"slices"
)

// Incremental checks. The two rules that every candidate of a busy pool meets first — a
// numeric or string batchDistance and a latency rule with only maxLatency — do not depend on
// teams, so a build keeps their state (the value range; the Regions still usable) and judges
// a candidate against it in constant time, instead of evaluating the rule over the whole
// partial match again. The complete match is still checked by the ordinary evaluation.

// fastKind says how a rule is checked incrementally.
type fastKind uint8

const (
	fastNone fastKind = iota
	fastBatchNumber
	fastBatchString
	fastMaxLatency
)

// fastRule is the incremental state of one rule in a build.
type fastRule struct {
	kind    fastKind
	started bool
	lo, hi  float64
	str     string
	regions []string
}

// newFast sets up the incremental checks of a build's rules.
func (b *build) newFast() {
	b.fast = make([]fastRule, len(b.rules))
	for i := range b.rules {
		b.fast[i].kind = b.m.plan.fastKind(b.m.rs, &b.rules[i])
	}
}

// fastKind is how a rule can be checked incrementally; fastNone for a rule named in a
// compound statement (enforced only through it).
func (p *plan) fastKind(rs *RuleSet, r *Rule) fastKind {
	switch {
	case p.inCompound[r.Name]:
	case r.Type == RuleBatchDistance && isNumberAttr(rs, r.BatchAttribute):
		return fastBatchNumber
	case r.Type == RuleBatchDistance:
		return fastBatchString
	case r.Type == RuleLatency && r.MaxDistance == nil && r.MaxLatency != nil:
		return fastMaxLatency
	}
	return fastNone
}

// viable reports whether a ticket alone meets a stage's incremental rules: a ticket that
// does not (no Region within the latency limit) cannot be in any match of that stage.
func (p *plan) viable(st *stage, t *Ticket) bool {
	for i := range st.rules {
		r := &st.rules[i]
		if r.Type != RuleLatency || r.MaxDistance != nil || r.MaxLatency == nil || p.inCompound[r.Name] {
			continue
		}
		if _, ok := (fastRule{kind: fastMaxLatency}).with(r, t); !ok {
			return false
		}
	}
	return true
}

// admits reports whether ticket e keeps every incremental rule, counting the results; when
// commit is set it also takes e into the state.
func (b *build) admits(e *entry, commit bool) bool {
	for i := range b.fast {
		f := &b.fast[i]
		if f.kind == fastNone {
			continue
		}
		next, ok := f.with(&b.rules[i], e.t)
		if !commit {
			if !ok {
				b.metrics[i].Failed++
				return false
			}
			continue
		}
		*f = next
		b.metrics[i].Passed++
	}
	return true
}

// with is the state after adding a ticket, and whether the rule still holds.
func (f fastRule) with(r *Rule, t *Ticket) (fastRule, bool) {
	switch f.kind {
	case fastBatchNumber:
		v := partyNumber(t, r.BatchAttribute, r.PartyAggregation)
		if !f.started {
			f.lo, f.hi = v, v
		}
		f.lo, f.hi, f.started = math.Min(f.lo, v), math.Max(f.hi, v), true
		return f, r.MaxDistance == nil || f.hi-f.lo <= *r.MaxDistance
	case fastBatchString:
		for _, p := range t.Players {
			s := p.Attributes[r.BatchAttribute].S
			if f.started && s != f.str {
				return f, false
			}
			f.str, f.started = s, true
		}
		return f, true
	}
	return f.withLatency(r, t)
}

// withLatency narrows the usable Regions to those where every player of t is within
// maxLatency.
func (f fastRule) withLatency(r *Rule, t *Ticket) (fastRule, bool) {
	limit := int(math.Floor(*r.MaxLatency))
	var next []string
	if !f.started {
		for region := range t.Players[0].Latency {
			next = append(next, region)
		}
	} else {
		next = slices.Clone(f.regions)
	}
	next = slices.DeleteFunc(next, func(region string) bool {
		for _, p := range t.Players {
			if ms, ok := p.Latency[region]; !ok || ms > limit {
				return true
			}
		}
		return false
	})
	f.regions, f.started = next, true
	return f, len(next) > 0
}

// partyNumber is a ticket's number attribute combined over its players.
func partyNumber(t *Ticket, attr, agg string) float64 {
	if len(t.Players) == 1 {
		return t.Players[0].Attributes[attr].N
	}
	xs := make([]float64, len(t.Players))
	for i, p := range t.Players {
		xs[i] = p.Attributes[attr].N
	}
	switch agg {
	case "min":
		return slices.Min(xs)
	case "max":
		return slices.Max(xs)
	}
	return mean(xs)
}

// pairCheck returns a test of whether a ticket could share a match with the anchor a under
// the build's incremental rules, used to skip hopeless tickets while looking for candidates
// (so that they do not crowd out the ones that fit).
func (b *build) pairCheck(a *entry) func(*entry) bool {
	var states []fastRule
	var rules []*Rule
	for i := range b.fast {
		if b.fast[i].kind == fastNone || a.t.Backfill {
			continue
		}
		st, ok := b.fast[i].with(&b.rules[i], a.t)
		if !ok {
			return func(*entry) bool { return false }
		}
		states, rules = append(states, st), append(rules, &b.rules[i])
	}
	return func(e *entry) bool {
		for i := range states {
			if !states[i].accepts(rules[i], e.t) {
				return false
			}
		}
		return true
	}
}

// accepts reports, without changing the state, whether the rule would still hold with t.
func (f *fastRule) accepts(r *Rule, t *Ticket) bool {
	switch f.kind {
	case fastBatchNumber:
		v := partyNumber(t, r.BatchAttribute, r.PartyAggregation)
		return r.MaxDistance == nil || math.Max(f.hi, v)-math.Min(f.lo, v) <= *r.MaxDistance
	case fastBatchString:
		for _, p := range t.Players {
			if p.Attributes[r.BatchAttribute].S != f.str {
				return false
			}
		}
		return true
	}
	limit := int(math.Floor(*r.MaxLatency))
	return slices.ContainsFunc(f.regions, func(region string) bool {
		for _, p := range t.Players {
			if ms, ok := p.Latency[region]; !ok || ms > limit {
				return false
			}
		}
		return true
	})
}
