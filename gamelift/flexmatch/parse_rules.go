package flexmatch

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Rules: each type's properties, their defaults and their checks.

// ruleKind is what Parse knows of a rule type: the keys it takes besides name, description
// and type, and how to read them.
type ruleKind struct {
	keys []string
	read func(*ruleReader) error
	// large is set for the types a large match (more than 40 players) may use.
	large bool
}

// ruleKindOf returns the kind of rule type t.
//
// Hoist: large matches take only batchDistance and latency rules. The guide says "most
// custom rules are not available" there and names only these two (the sort rules order a
// batch around an anchor ticket, which the balanced large-match algorithm does not use),
// and a compound rule is explicitly limited to 40 players or fewer.
func ruleKindOf(t string) (ruleKind, bool) {
	numbers := []string{"measurements", "referenceValue", "operation", "partyAggregation"}
	sorts := []string{"sortDirection", "sortAttribute", "mapKey", "partyAggregation"}
	switch t {
	case RuleComparison:
		return ruleKind{keys: numbers, read: (*ruleReader).comparison}, true
	case RuleDistance:
		return ruleKind{keys: []string{"measurements", "referenceValue", "minDistance", "maxDistance",
			"partyAggregation"}, read: (*ruleReader).distance}, true
	case RuleCollection:
		return ruleKind{keys: append(numbers, "minCount", "maxCount"), read: (*ruleReader).collection}, true
	case RuleLatency:
		return ruleKind{keys: []string{"maxLatency", "maxDistance", "distanceReference", "partyAggregation"},
			read: (*ruleReader).latency, large: true}, true
	case RuleBatchDistance:
		return ruleKind{keys: []string{"batchAttribute", "maxDistance", "partyAggregation"},
			read: (*ruleReader).batchDistance, large: true}, true
	case RuleAbsoluteSort, RuleDistanceSort:
		return ruleKind{keys: sorts, read: (*ruleReader).sort}, true
	case RuleCompound:
		return ruleKind{keys: []string{"statement"}, read: (*ruleReader).compound}, true
	}
	return ruleKind{}, false
}

// ruleTypes lists the rule types, for error messages.
const ruleTypes = "absoluteSort, batchDistance, collection, comparison, compound, distance, distanceSort, latency"

// rules reads the rules.
func (p *parser) rules(top object) error {
	items, _, err := top.list("rules")
	if err != nil {
		return err
	}
	for i, raw := range items {
		r, err := p.rule(i, raw)
		if err != nil {
			return err
		}
		p.rs.Rules = append(p.rs.Rules, r)
	}
	return nil
}

// rule reads rules[i].
func (p *parser) rule(i int, raw json.RawMessage) (Rule, error) {
	o, err := decodeObject(fmt.Sprintf("rules[%d]", i), raw)
	if err != nil {
		return Rule{}, err
	}
	r := Rule{}
	if r.Name, err = o.requiredStr("name"); err != nil {
		return Rule{}, err
	}
	o.where = fmt.Sprintf("rules[%d] %q", i, r.Name)
	if p.findRule(r.Name) != nil {
		return Rule{}, fmt.Errorf("%s: another rule is already named %s", o.where, r.Name)
	}
	if r.Type, err = o.requiredStr("type"); err != nil {
		return Rule{}, err
	}
	kind, ok := ruleKindOf(r.Type)
	if !ok {
		return Rule{}, fmt.Errorf("%s: unknown type %q (one of %s)", o.where, r.Type, ruleTypes)
	}
	if err := o.checkKeys(append([]string{"name", "description", "type"}, kind.keys...)...); err != nil {
		return Rule{}, err
	}
	if p.large && !kind.large {
		return Rule{}, fmt.Errorf("%s: type %q is not available in large matches (the teams add up to %d players; "+
			"only batchDistance and latency rules are)", o.where, r.Type, p.players)
	}
	if r.Description, _, err = o.str("description"); err != nil {
		return Rule{}, err
	}
	err = kind.read(&ruleReader{p: p, o: o, r: &r})
	return r, err
}

// findRule finds a rule read so far by name; nil if there is none.
func (p *parser) findRule(name string) *Rule {
	for i := range p.rs.Rules {
		if p.rs.Rules[i].Name == name {
			return &p.rs.Rules[i]
		}
	}
	return nil
}

// checker checks property expressions against the rule set read so far.
func (p *parser) checker() exprChecker {
	return exprChecker{teams: p.rs.Teams, attrs: p.rs.Attributes}
}

// ruleReader reads the type-specific properties of one rule.
type ruleReader struct {
	p *parser
	o object
	r *Rule
}

// errorf is an error about the rule.
func (rr *ruleReader) errorf(format string, args ...any) error {
	return fmt.Errorf("%s: "+format, append([]any{rr.o.where}, args...)...)
}

// comparison reads a comparison rule: measurements compared with referenceValue by
// operation, or (no referenceValue) all equal (=) or all different (!=).
//
// Hoist: strings compare only with = and != (the guide does not order strings).
func (rr *ruleReader) comparison() error {
	elem, err := rr.measurements(func(t exprType) bool { return t.elem == elemNumber || t.elem == elemString },
		"numbers or strings")
	if err != nil {
		return err
	}
	if rr.r.Operation, err = rr.requiredOneOf("operation", "<", "<=", "=", "!=", ">", ">="); err != nil {
		return err
	}
	equality := rr.r.Operation == "=" || rr.r.Operation == "!="
	switch {
	case !rr.o.has("referenceValue") && !equality:
		return rr.errorf("without a referenceValue the operation must be = or !=, got %s", rr.r.Operation)
	case elem == elemString && !equality:
		return rr.errorf("strings compare only with = or !=, got %s", rr.r.Operation)
	}
	if raw, ok := rr.o.fields["referenceValue"]; ok {
		if rr.r.ReferenceValue, err = rr.p.reference(rr.r, raw); err != nil {
			return rr.errorf("referenceValue %w", err)
		}
	}
	return rr.partyAggregation()
}

// distance reads a distance rule: numeric measurements within minDistance..maxDistance of
// referenceValue.
func (rr *ruleReader) distance() error {
	if _, err := rr.measurements(func(t exprType) bool { return t.elem == elemNumber }, "numbers"); err != nil {
		return err
	}
	raw, ok := rr.o.fields["referenceValue"]
	if !ok {
		return rr.errorf("referenceValue is required")
	}
	var err error
	if rr.r.ReferenceValue, err = rr.p.reference(rr.r, raw); err != nil {
		return rr.errorf("referenceValue %w", err)
	}
	if rr.r.MinDistance, rr.r.MaxDistance, err = rr.bounds("minDistance", "maxDistance", false); err != nil {
		return err
	}
	return rr.partyAggregation()
}

// collection reads a collection rule: a count over string lists within minCount..maxCount.
func (rr *ruleReader) collection() error {
	_, err := rr.measurements(func(t exprType) bool { return t.elem >= elemString && t.strDepth() >= 1 },
		"strings or string lists")
	if err != nil {
		return err
	}
	if rr.r.Operation, err = rr.requiredOneOf("operation", "intersection", "contains", "reference_intersection_count"); err != nil {
		return err
	}
	raw, ok := rr.o.fields["referenceValue"]
	switch {
	case ok && rr.r.Operation == "intersection":
		return rr.errorf("the intersection operation takes no referenceValue")
	case !ok && rr.r.Operation != "intersection":
		return rr.errorf("the %s operation needs a referenceValue", rr.r.Operation)
	case ok:
		if rr.r.ReferenceValue, err = rr.p.reference(rr.r, raw); err != nil {
			return rr.errorf("referenceValue %w", err)
		}
	}
	if rr.r.MinCount, rr.r.MaxCount, err = rr.bounds("minCount", "maxCount", true); err != nil {
		return err
	}
	rr.r.PartyAggregation, err = rr.o.oneOf("partyAggregation", "union", "union", "intersection")
	return err
}

// latency reads a latency rule: maxLatency and/or maxDistance from the distanceReference.
//
// Hoist: in large matches it takes maxLatency only, as the guide says ("setting maxLatency
// is the only available option").
func (rr *ruleReader) latency() error {
	var err error
	if rr.r.MaxLatency, err = rr.o.bounded("maxLatency", 0, false); err != nil {
		return err
	}
	if rr.r.MaxDistance, err = rr.o.bounded("maxDistance", 0, false); err != nil {
		return err
	}
	switch {
	case rr.r.MaxLatency == nil && rr.r.MaxDistance == nil:
		return rr.errorf("a latency rule needs maxLatency or maxDistance")
	case rr.p.large && (rr.r.MaxLatency == nil || rr.r.MaxDistance != nil || rr.o.has("distanceReference")):
		return rr.errorf("in large matches a latency rule takes maxLatency only")
	case rr.r.MaxDistance == nil && rr.o.has("distanceReference"):
		return rr.errorf("distanceReference is used only with maxDistance")
	case rr.r.MaxDistance != nil:
		if rr.r.DistanceReference, err = rr.o.oneOf("distanceReference", "min", "min", "avg"); err != nil {
			return err
		}
	}
	return rr.partyAggregation()
}

// batchDistance reads a batchDistance rule: a number attribute within maxDistance across
// the match, or a string attribute equal across it.
func (rr *ruleReader) batchDistance() error {
	a, err := rr.attribute("batchAttribute")
	if err != nil {
		return err
	}
	rr.r.BatchAttribute = a.Name
	if rr.r.MaxDistance, err = rr.o.bounded("maxDistance", 0, false); err != nil {
		return err
	}
	switch {
	case a.Type != TypeNumber && a.Type != TypeString:
		return rr.errorf("batchAttribute %s is a %s; it must be a number or a string attribute", a.Name, a.Type)
	case a.Type == TypeNumber && rr.r.MaxDistance == nil:
		return rr.errorf("maxDistance is required with the number attribute %s", a.Name)
	case a.Type == TypeString && rr.r.MaxDistance != nil:
		return rr.errorf("maxDistance can't be used with the string attribute %s (strings must be equal)", a.Name)
	}
	return rr.partyAggregation()
}

// sort reads an absoluteSort or distanceSort rule.
//
// Hoist: distanceSort takes number attributes only (a distance needs numbers), absoluteSort
// numbers or a string_number_map with mapKey (the anchor's lowest or highest key).
func (rr *ruleReader) sort() error {
	a, err := rr.attribute("sortAttribute")
	if err != nil {
		return err
	}
	rr.r.SortAttribute = a.Name
	isMap := a.Type == TypeStringNumberMap
	switch {
	case a.Type != TypeNumber && !(isMap && rr.r.Type == RuleAbsoluteSort):
		return rr.errorf("sortAttribute %s is a %s; %s sorts %s", a.Name, a.Type, rr.r.Type, sortableTypes(rr.r.Type))
	case isMap && !rr.o.has("mapKey"):
		return rr.errorf("mapKey (minValue or maxValue) is required with the string_number_map attribute %s", a.Name)
	case !isMap && rr.o.has("mapKey"):
		return rr.errorf("mapKey is used only with a string_number_map attribute, and %s is a %s", a.Name, a.Type)
	}
	if rr.r.MapKey, err = rr.o.oneOf("mapKey", "", "minValue", "maxValue"); err != nil {
		return err
	}
	if rr.r.SortDirection, err = rr.o.oneOf("sortDirection", "ascending", "ascending", "descending"); err != nil {
		return err
	}
	return rr.partyAggregation()
}

// sortableTypes names the attribute types a sort rule type takes, for error messages.
func sortableTypes(t string) string {
	if t == RuleAbsoluteSort {
		return "number or string_number_map attributes"
	}
	return "number attributes"
}

// compound reads a compound rule's statement.
func (rr *ruleReader) compound() error {
	s, err := rr.o.requiredStr("statement")
	if err != nil {
		return err
	}
	st, err := parseStatement(s)
	if err != nil {
		return rr.errorf("statement %q: %w", s, err)
	}
	if err := rr.statementRules(st); err != nil {
		return rr.errorf("statement %q: %w", s, err)
	}
	rr.r.Statement = st
	return nil
}

// statementRules checks the rules a statement names: declared earlier, and rules that
// pass or fail (not batchDistance, which forms batches, nor the sort rules, which order).
//
// Hoist: the guide forbids only batchDistance rules and rules declared later; a compound
// rule declared earlier may be named (it is evaluated through its own statement).
func (rr *ruleReader) statementRules(st *Statement) error {
	if st.Op != "" {
		for _, a := range st.Args {
			if err := rr.statementRules(a); err != nil {
				return err
			}
		}
		return nil
	}
	r := rr.p.findRule(st.Rule)
	switch {
	case r == nil:
		return fmt.Errorf("no rule named %s is declared before this one", st.Rule)
	case r.Type == RuleBatchDistance:
		return fmt.Errorf("rule %s is a batchDistance rule, which a compound rule can't use", st.Rule)
	case r.Type == RuleAbsoluteSort || r.Type == RuleDistanceSort:
		return fmt.Errorf("rule %s is a %s rule, which orders tickets and can't be true or false", st.Rule, r.Type)
	}
	return nil
}

// partyAggregation reads the numeric rules' partyAggregation (min, max or avg; avg by
// default).
func (rr *ruleReader) partyAggregation() error {
	var err error
	rr.r.PartyAggregation, err = rr.o.oneOf("partyAggregation", "avg", "min", "max", "avg")
	return err
}

// requiredOneOf reads a required string property that must be one of values.
func (rr *ruleReader) requiredOneOf(key string, values ...string) (string, error) {
	if !rr.o.has(key) {
		return "", rr.errorf("%s is required (one of %s)", key, strings.Join(values, ", "))
	}
	return rr.o.oneOf(key, "", values...)
}

// attribute reads a property that names a declared attribute.
func (rr *ruleReader) attribute(key string) (*Attribute, error) {
	name, err := rr.o.requiredStr(key)
	if err != nil {
		return nil, err
	}
	a := findAttr(rr.p.rs.Attributes, name)
	if a == nil {
		return nil, rr.errorf("%s: no player attribute named %s", key, name)
	}
	return a, nil
}

// bounds reads a min/max pair of non-negative numbers (whole numbers if whole), at least
// one of which must be given, the min no more than the max.
func (rr *ruleReader) bounds(minKey, maxKey string, whole bool) (lo, hi *float64, err error) {
	if lo, err = rr.o.bounded(minKey, 0, whole); err != nil {
		return nil, nil, err
	}
	if hi, err = rr.o.bounded(maxKey, 0, whole); err != nil {
		return nil, nil, err
	}
	switch {
	case lo == nil && hi == nil:
		return nil, nil, rr.errorf("%s or %s is required", minKey, maxKey)
	case lo != nil && hi != nil && *lo > *hi:
		return nil, nil, rr.errorf("%s %s is more than %s %s", minKey, formatNum(*lo), maxKey, formatNum(*hi))
	}
	return lo, hi, nil
}

// measurements reads measurements (a string or a list of strings, each a property
// expression) whose values must satisfy ok (described by want); it returns the kind of
// their values, which must be the same for all.
func (rr *ruleReader) measurements(ok func(exprType) bool, want string) (elemKind, error) {
	raw, present := rr.o.fields["measurements"]
	if !present {
		return 0, rr.errorf("measurements is required")
	}
	texts, labels, err := measurementTexts(raw)
	if err != nil {
		return 0, rr.errorf("measurements %w", err)
	}
	var elem elemKind
	for i, s := range texts {
		e, t, err := rr.expr(labels[i], s)
		switch {
		case err != nil:
			return 0, err
		case !ok(t):
			return 0, rr.errorf("%s %q: a %s rule measures %s, and this gives %s", labels[i], s, rr.r.Type, want, describeType(t))
		case i > 0 && t.elem != elem:
			return 0, rr.errorf("%s %q gives %s, but the measurements before it give %s", labels[i], s, t.elem, elem)
		}
		elem = t.elem
		rr.r.Measurements = append(rr.r.Measurements, e)
	}
	return elem, nil
}

// measurementTexts reads measurements as a list of expression strings with their labels
// (the guide writes both a bare string and a list). The error reads after "measurements".
func measurementTexts(raw json.RawMessage) (texts, labels []string, err error) {
	if jsonKind(raw) == "a string" {
		var s string
		err = json.Unmarshal(raw, &s)
		return []string{s}, []string{"measurements"}, err
	}
	if texts, err = stringList("list", raw); err != nil {
		return nil, nil, fmt.Errorf("must be a string or a list of strings, got %s", shortJSON(raw))
	}
	if len(texts) == 0 {
		return nil, nil, fmt.Errorf("must not be empty")
	}
	for i := range texts {
		labels = append(labels, fmt.Sprintf("measurements[%d]", i))
	}
	return texts, labels, nil
}

// expr parses and checks one property expression of the rule.
func (rr *ruleReader) expr(label, s string) (*Expr, exprType, error) {
	e, err := parseExpr(s)
	var t exprType
	if err == nil {
		t, err = rr.p.checker().check(e)
	}
	if err != nil {
		return nil, t, rr.errorf("%s %q: %w", label, s, err)
	}
	return e, t, nil
}
