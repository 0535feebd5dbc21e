package flexmatch

// plan is what a Matcher derives from its rule set once: the attribute the pool is ordered
// by, how candidates are ordered, which rules are checked as tickets are added and which
// only on a complete match.
type plan struct {
	// keyAttr is the number attribute the pool is ordered by; "" orders by arrival.
	keyAttr string
	// absolute orders candidates by the key itself (absoluteSort) rather than by distance
	// from the anchor's key; descending reverses it.
	absolute, descending bool
	// balanceAttr is the number attribute teams are balanced on; "" for none.
	balanceAttr string
	// local[i] reports that rule i can be checked on a partial match: once it fails, no
	// ticket added later can make it hold, so a candidate that breaks it is skipped.
	local []bool
	// inCompound[name] reports that a rule is named in a compound statement, so it is
	// enforced only through that statement.
	inCompound map[string]bool
	// batchRule is the index of a batchDistance rule on keyAttr (bounding the candidate scan
	// by its maxDistance), or -1.
	batchRule int
}

// newPlan analyses rs.
func newPlan(rs *RuleSet) plan {
	p := plan{inCompound: map[string]bool{}, batchRule: -1}
	p.keyAttr = p.chooseKey(rs)
	p.balanceAttr = rs.Algorithm.BalancedAttribute
	if p.balanceAttr == "" {
		p.balanceAttr = p.keyAttr
	}
	p.local = make([]bool, len(rs.Rules))
	for i := range rs.Rules {
		r := &rs.Rules[i]
		p.local[i] = isLocal(r)
		if r.Statement != nil {
			markStatement(r.Statement, p.inCompound)
		}
		if r.Type == RuleBatchDistance && r.BatchAttribute == p.keyAttr && p.keyAttr != "" {
			p.batchRule = i
		}
	}
	return p
}

// chooseKey picks the pool's order: a sort rule's attribute, the sorted batching
// preference's first attribute, a batchDistance attribute, the balanced attribute, or the
// attribute a distance rule measures — the first of those that is a number attribute.
func (p *plan) chooseKey(rs *RuleSet) string {
	for _, r := range rs.Rules {
		if (r.Type == RuleDistanceSort || r.Type == RuleAbsoluteSort) && isNumberAttr(rs, r.SortAttribute) {
			p.absolute = r.Type == RuleAbsoluteSort
			p.descending = r.SortDirection == "descending"
			return r.SortAttribute
		}
	}
	var names []string
	if rs.Algorithm.BatchingPreference == BatchingSorted {
		names = append(names, rs.Algorithm.SortByAttributes...)
	}
	for _, r := range rs.Rules {
		if r.Type == RuleBatchDistance {
			names = append(names, r.BatchAttribute)
		}
	}
	names = append(names, rs.Algorithm.BalancedAttribute)
	for _, r := range rs.Rules {
		if r.Type == RuleDistance || r.Type == RuleComparison {
			for _, e := range r.Measurements {
				names = append(names, exprAttribute(e))
			}
		}
	}
	for _, n := range names {
		if isNumberAttr(rs, n) {
			return n
		}
	}
	return ""
}

// isNumberAttr reports whether name is a declared number attribute.
func isNumberAttr(rs *RuleSet, name string) bool {
	for _, a := range rs.Attributes {
		if a.Name == name {
			return a.Type == TypeNumber
		}
	}
	return false
}

// exprAttribute is the attribute an expression selects, "" for none.
func exprAttribute(e *Expr) string {
	for e != nil && e.Func != "" {
		e = e.Arg
	}
	if e == nil {
		return ""
	}
	return e.Attribute
}

// isLocal reports whether a rule can only go from holding to failing as tickets are added:
// a pairwise or per-player condition. Rules over aggregates (averages, counts, intersections
// compared with a maximum) may fail on a partial match and hold on the complete one; they
// are checked on complete matches only.
func isLocal(r *Rule) bool {
	switch r.Type {
	case RuleBatchDistance, RuleLatency:
		return true
	case RuleComparison, RuleDistance:
		return bareSelectors(r.Measurements) && (r.ReferenceValue == nil || r.ReferenceValue.Expr == nil)
	case RuleCollection:
		if !bareSelectors(r.Measurements) {
			return false
		}
		switch r.Operation {
		case "reference_intersection_count":
			return true
		case "intersection":
			return r.MaxCount == nil
		case "contains":
			return r.MinCount == nil
		}
	}
	return false
}

// bareSelectors reports whether every expression is a selector without functions.
func bareSelectors(es []*Expr) bool {
	for _, e := range es {
		if e.Func != "" {
			return false
		}
	}
	return len(es) > 0
}

// markStatement records the rules a statement names.
func markStatement(s *Statement, into map[string]bool) {
	if s.Op == "" {
		into[s.Rule] = true
	}
	for _, a := range s.Args {
		markStatement(a, into)
	}
}

// key is a ticket's position in the pool: its players' average of the key attribute.
func (p *plan) key(t *Ticket) float64 {
	if p.keyAttr == "" || len(t.Players) == 0 {
		return 0
	}
	s := 0.0
	for _, pl := range t.Players {
		s += pl.Attributes[p.keyAttr].N
	}
	return s / float64(len(t.Players))
}

// balance is a ticket's total of the balance attribute.
func (p *plan) balance(t *Ticket) float64 {
	s := 0.0
	for _, pl := range t.Players {
		s += pl.Attributes[p.balanceAttr].N
	}
	return s
}
