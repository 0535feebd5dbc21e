package flexmatch

import (
	"math"
	"slices"
)

// Rule evaluation. Every rule is evaluated on a view of a whole (or partial) match; a rule
// that has nothing to measure yet (an average of no players) passes.
//
// Rules named in a compound rule's statement are enforced only through that statement, not
// on their own: that is what lets a compound rule offer alternatives (or(A, B)). Sort rules
// order candidates and always pass.

// evalRule reports whether rule r holds on v. rules are the rules in force (for compound
// references).
func (v *view) evalRule(r *Rule, rules []Rule) bool {
	switch r.Type {
	case RuleComparison:
		return v.comparison(r)
	case RuleDistance:
		return v.distance(r)
	case RuleCollection:
		return v.collection(r)
	case RuleBatchDistance:
		return v.batchDistance(r)
	case RuleLatency:
		return len(v.latencyRegions(r, false)) > 0
	case RuleCompound:
		return v.statement(r.Statement, rules)
	}
	return true
}

// measure evaluates a rule's measurements into their scalar leaves.
func (v *view) measure(r *Rule) []val {
	var out []val
	for _, e := range r.Measurements {
		out = leaves(v.eval(e, partyAgg(e, r.PartyAggregation)), out)
	}
	return out
}

// noAggregation makes a selector give every player's own value.
const noAggregation = "none"

// partyAgg is the party aggregation an expression is evaluated with: the rule's for
// player-level values (a selector, possibly flattened), none for values a function computed
// from the players (the function sees every player's own value).
func partyAgg(e *Expr, agg string) string {
	for ; e != nil; e = e.Arg {
		if e.Func != "" && e.Func != "flatten" {
			return noAggregation
		}
	}
	return agg
}

// reference evaluates a rule's reference value into its scalar leaves.
func (v *view) reference(r *Rule) []val {
	ref := r.ReferenceValue
	switch {
	case ref == nil:
		return nil
	case ref.Expr != nil:
		return leaves(v.eval(ref.Expr, partyAgg(ref.Expr, r.PartyAggregation)), nil)
	case ref.Num != nil:
		return []val{num(*ref.Num)}
	case ref.Str != nil:
		return []val{{kind: vStr, str: *ref.Str}}
	}
	return nil
}

// comparison: each measured value against the reference, or (no reference) all measured
// values equal (=) or all different (!=).
func (v *view) comparison(r *Rule) bool {
	ms := v.measure(r)
	if r.ReferenceValue == nil {
		return compareAcross(ms, r.Operation)
	}
	for _, ref := range v.reference(r) {
		for _, m := range ms {
			if !compare(m, ref, r.Operation) {
				return false
			}
		}
	}
	return true
}

// compareAcross is the comparison without a reference value.
func compareAcross(ms []val, op string) bool {
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			c, ok := order(ms[i], ms[j])
			eq := ok && c == 0
			if (op == "=" && !eq) || (op == "!=" && eq) {
				return false
			}
		}
	}
	return true
}

// compare applies a comparison operator; numbers compare as numbers, strings as strings, a
// number never equals a string.
func compare(a, b val, op string) bool {
	c, comparable := order(a, b)
	switch op {
	case "=":
		return comparable && c == 0
	case "!=":
		return !comparable || c != 0
	case "<":
		return comparable && c < 0
	case "<=":
		return comparable && c <= 0
	case ">":
		return comparable && c > 0
	case ">=":
		return comparable && c >= 0
	}
	return false
}

// order compares two scalars of the same kind.
func order(a, b val) (int, bool) {
	switch {
	case a.kind == vNum && b.kind == vNum:
		switch {
		case a.num < b.num:
			return -1, true
		case a.num > b.num:
			return 1, true
		}
		return 0, true
	case a.kind == vStr && b.kind == vStr:
		switch {
		case a.str < b.str:
			return -1, true
		case a.str > b.str:
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// distance: every measured number is within [minDistance, maxDistance] of every reference
// number.
func (v *view) distance(r *Rule) bool {
	refs := v.reference(r)
	for _, m := range v.measure(r) {
		for _, ref := range refs {
			if m.kind != vNum || ref.kind != vNum {
				continue
			}
			if !within(math.Abs(m.num-ref.num), r.MinDistance, r.MaxDistance) {
				return false
			}
		}
	}
	return true
}

// within reports min <= x <= max, a nil bound being open.
func within(x float64, min, max *float64) bool {
	return (min == nil || x >= *min) && (max == nil || x <= *max)
}

// collection counts over the measured string lists and checks the count against minCount
// and maxCount.
func (v *view) collection(r *Rule) bool {
	var lists [][]string
	for _, e := range r.Measurements {
		lists = stringLists(v.eval(e, partyAgg(e, r.PartyAggregation)), lists)
	}
	if len(lists) == 0 {
		return true
	}
	switch r.Operation {
	case "intersection":
		return within(float64(len(intersect(lists))), r.MinCount, r.MaxCount)
	case "contains":
		return within(float64(containing(lists, v.referenceStrings(r))), r.MinCount, r.MaxCount)
	case "reference_intersection_count":
		ref := v.referenceStrings(r)
		for _, l := range lists {
			if !within(float64(len(intersect([][]string{l, ref}))), r.MinCount, r.MaxCount) {
				return false
			}
		}
	}
	return true
}

// referenceStrings is a collection rule's reference value as a list of strings.
func (v *view) referenceStrings(r *Rule) []string {
	ref := r.ReferenceValue
	switch {
	case ref == nil:
		return nil
	case ref.Str != nil:
		return []string{*ref.Str}
	case ref.Expr == nil:
		return ref.List
	case ref.Expr != nil:
		val := v.eval(ref.Expr, partyAgg(ref.Expr, r.PartyAggregation))
		var out []string
		for _, l := range stringLists(val, nil) {
			out = append(out, l...)
		}
		for _, s := range leaves(val, nil) {
			if s.kind == vStr {
				out = append(out, s.str)
			}
		}
		return out
	}
	return nil
}

// containing counts the lists that hold every one of want (normally a single value).
func containing(lists [][]string, want []string) int {
	n := 0
	for _, l := range lists {
		all := true
		for _, w := range want {
			all = all && slices.Contains(l, w)
		}
		if all && len(want) > 0 {
			n++
		}
	}
	return n
}

// batchDistance: every party's value of the attribute is within maxDistance of every other
// (numbers), or equal to every other (strings).
func (v *view) batchDistance(r *Rule) bool {
	var lo, hi float64
	var str string
	first := true
	for ti := range v.teams {
		for _, pv := range v.teams[ti].values(&Expr{Attribute: r.BatchAttribute}, r.PartyAggregation).list {
			switch {
			case first:
				lo, hi, str, first = pv.num, pv.num, pv.str, false
			case pv.kind == vStr && pv.str != str:
				return false
			case pv.kind == vNum:
				lo, hi = min(lo, pv.num), max(hi, pv.num)
			}
		}
	}
	return r.MaxDistance == nil || hi-lo <= *r.MaxDistance
}

// statement evaluates a compound statement.
func (v *view) statement(s *Statement, rules []Rule) bool {
	switch s.Op {
	case "":
		for i := range rules {
			if rules[i].Name == s.Rule {
				return v.evalRule(&rules[i], rules)
			}
		}
		return false
	case "not":
		return !v.statement(s.Args[0], rules)
	case "and":
		for _, a := range s.Args {
			if !v.statement(a, rules) {
				return false
			}
		}
		return true
	case "or":
		for _, a := range s.Args {
			if v.statement(a, rules) {
				return true
			}
		}
		return false
	}
	n := 0 // xor: exactly one
	for _, a := range s.Args {
		if v.statement(a, rules) {
			n++
		}
	}
	return n == 1
}
