package flexmatch

import (
	"math"
	"slices"
)

// latencyRegions is the Regions where latency rule r holds on v: every player reported a
// latency for the Region, every party's latency there (combined over the party as
// partyAggregation says) is within maxDistance of the reference (the lowest or the average
// latency in the Region), and every player's own latency there is at most maxLatency. With all unset it stops at the first Region
// found.
func (v *view) latencyRegions(r *Rule, all bool) []string {
	var out []string
	for _, region := range v.commonRegions() {
		if r.MaxLatency != nil && float64(v.worstLatency(region)) > *r.MaxLatency {
			continue
		}
		lats := v.partyLatencies(region, r.PartyAggregation)
		if latencyHolds(r, lats) {
			out = append(out, region)
			if !all {
				break
			}
		}
	}
	return out
}

// commonRegions is the Regions every player of v reported a latency for.
func (v *view) commonRegions() []string {
	var out []string
	first := true
	for ti := range v.teams {
		for _, p := range v.teams[ti].players {
			if first {
				for region := range p.Player.Latency {
					out = append(out, region)
				}
				slices.Sort(out)
				first = false
				continue
			}
			out = slices.DeleteFunc(out, func(region string) bool { _, ok := p.Player.Latency[region]; return !ok })
		}
	}
	return out
}

// partyLatencies is each party's latency in a Region.
func (v *view) partyLatencies(region, agg string) []float64 {
	var out []float64
	for ti := range v.teams {
		ps := v.teams[ti].players
		for i := 0; i < len(ps); {
			j := i + 1
			for j < len(ps) && ps[j].Ticket == ps[i].Ticket {
				j++
			}
			party := make([]float64, 0, j-i)
			for _, p := range ps[i:j] {
				party = append(party, float64(p.Player.Latency[region]))
			}
			out = append(out, aggregateNums(numVals(party), agg).num)
			i = j
		}
	}
	return out
}

// numVals wraps numbers as vals.
func numVals(xs []float64) []val {
	out := make([]val, len(xs))
	for i, x := range xs {
		out[i] = num(x)
	}
	return out
}

// latencyHolds checks one Region's latencies against the rule.
func latencyHolds(r *Rule, lats []float64) bool {
	if len(lats) == 0 {
		return true
	}
	if r.MaxDistance == nil {
		return true
	}
	ref := slices.Min(lats)
	if r.DistanceReference == "avg" {
		ref = mean(lats)
	}
	for _, l := range lats {
		if math.Abs(l-ref) > *r.MaxDistance {
			return false
		}
	}
	return true
}

// worstLatency is the highest latency of any player of v in a Region.
func (v *view) worstLatency(region string) int {
	w := 0
	for ti := range v.teams {
		for _, p := range v.teams[ti].players {
			w = max(w, p.Player.Latency[region])
		}
	}
	return w
}
