package matchsim

import (
	"math"
	"slices"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// Metric is a per-match quality statistic of one rule.
type Metric struct {
	// Rule and RuleType name the rule it describes.
	Rule, RuleType string
	// Name says what is measured, Unit in what.
	Name, Unit string
	// measure computes the statistic; ok is false when it does not apply to the match.
	measure func(*flexmatch.Match) (float64, bool)
}

// Metrics lists the quality statistics of a rule set's rules, in rule order:
//   - distance on a number attribute: the spread of the team averages (max − min) and the
//     attribute's spread over the match's players;
//   - batchDistance: the spread of the batch attribute (distinct values for a string);
//
// as the rules see them: each player's number is its party's, combined as the rule's
// partyAggregation says (min, max, or avg by default);
//   - latency: the worst player's latency in the match's first (best) Region.
//
// Other rules get none.
func Metrics(rs *flexmatch.RuleSet) []Metric {
	var out []Metric
	for _, r := range rs.Rules {
		out = append(out, ruleMetrics(rs, r)...)
	}
	return out
}

// ruleMetrics is one rule's statistics.
func ruleMetrics(rs *flexmatch.RuleSet, r flexmatch.Rule) []Metric {
	base := Metric{Rule: r.Name, RuleType: r.Type}
	with := func(name, unit string, f func(*flexmatch.Match) (float64, bool)) Metric {
		m := base
		m.Name, m.Unit, m.measure = name, unit, f
		return m
	}
	switch r.Type {
	case flexmatch.RuleDistance:
		attr := distanceAttr(r)
		if t, _ := declaredType(rs, attr); t != flexmatch.TypeNumber {
			return nil
		}
		agg := r.PartyAggregation
		return []Metric{
			with("team avg diff", attr, func(m *flexmatch.Match) (float64, bool) { return teamAvgDiff(m, attr, agg) }),
			with("spread", attr, func(m *flexmatch.Match) (float64, bool) { return spread(m, attr, agg) }),
		}
	case flexmatch.RuleBatchDistance:
		attr := r.BatchAttribute
		if t, _ := declaredType(rs, attr); t == flexmatch.TypeString {
			return []Metric{with("distinct values", attr, func(m *flexmatch.Match) (float64, bool) { return distinct(m, attr) })}
		}
		agg := r.PartyAggregation
		return []Metric{with("spread", attr, func(m *flexmatch.Match) (float64, bool) { return spread(m, attr, agg) })}
	case flexmatch.RuleLatency:
		return []Metric{with("worst latency", "ms", worstLatency)}
	}
	return nil
}

// distanceAttr is the attribute a distance rule measures (else its reference's).
func distanceAttr(r flexmatch.Rule) string {
	for _, e := range r.Measurements {
		if a := exprAttr(e); a != "" {
			return a
		}
	}
	if r.ReferenceValue != nil {
		return exprAttr(r.ReferenceValue.Expr)
	}
	return ""
}

// exprAttr is the attribute an expression's selector names, "" for none.
func exprAttr(e *flexmatch.Expr) string {
	for e != nil && e.Func != "" {
		e = e.Arg
	}
	if e == nil {
		return ""
	}
	return e.Attribute
}

// measure computes every metric on a match.
func measure(ms []Metric, mt *flexmatch.Match) ([]float64, []bool) {
	vals, oks := make([]float64, len(ms)), make([]bool, len(ms))
	for i, m := range ms {
		vals[i], oks[i] = m.measure(mt)
	}
	return vals, oks
}

// partyNumbers is each team's players' values of attr, each player's value combined over
// its party (a ticket) by agg: "min", "max", or the average.
func partyNumbers(mt *flexmatch.Match, attr, agg string) [][]float64 {
	out := make([][]float64, len(mt.Teams))
	for ti, t := range mt.Teams {
		for _, p := range t.Players {
			out[ti] = append(out[ti], combine(p.Ticket.Players, attr, agg))
		}
	}
	return out
}

// combine is a party's value of a number attribute.
func combine(party []flexmatch.Player, attr, agg string) float64 {
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, p := range party {
		v := p.Attributes[attr].N
		lo, hi, sum = min(lo, v), max(hi, v), sum+v
	}
	switch agg {
	case "min":
		return lo
	case "max":
		return hi
	}
	return sum / float64(len(party))
}

// teamAvgDiff is the highest team average of attr minus the lowest, over teams with players.
func teamAvgDiff(mt *flexmatch.Match, attr, agg string) (float64, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range partyNumbers(mt, attr, agg) {
		if len(vs) == 0 {
			continue
		}
		avg := meanOf(vs)
		lo, hi = min(lo, avg), max(hi, avg)
	}
	return hi - lo, hi >= lo
}

// meanOf is the mean of xs (not empty).
func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// spread is the highest value of attr among the match's players minus the lowest.
func spread(mt *flexmatch.Match, attr, agg string) (float64, bool) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, vs := range partyNumbers(mt, attr, agg) {
		for _, v := range vs {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return hi - lo, hi >= lo
}

// distinct counts the distinct values of a string attribute among the match's players.
func distinct(mt *flexmatch.Match, attr string) (float64, bool) {
	var seen []string
	for _, t := range mt.Teams {
		for _, p := range t.Players {
			if s := p.Player.Attributes[attr].S; !slices.Contains(seen, s) {
				seen = append(seen, s)
			}
		}
	}
	return float64(len(seen)), len(seen) > 0
}

// worstLatency is the highest player latency in the match's first Region.
func worstLatency(mt *flexmatch.Match) (float64, bool) {
	if len(mt.Regions) == 0 {
		return 0, false
	}
	w := 0
	for _, t := range mt.Teams {
		for _, p := range t.Players {
			w = max(w, p.Player.Latency[mt.Regions[0]])
		}
	}
	return float64(w), true
}
