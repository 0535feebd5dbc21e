package flexmatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Parse reads and checks a rule set body the way CreateMatchmakingRuleSet and
// ValidateMatchmakingRuleSet do. The error names the offending part of the body (e.g.
// `rules[2] "FairSkill": maxDistance must be a number, got "abc"`) and what is wrong with it.
//
// The choices Hoist made where the FlexMatch documentation is silent or contradicts itself
// are noted where they are made: search this file and parse_*.go, expr_parse.go for "Hoist:".
func Parse(body []byte) (*RuleSet, error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	top, err := decodeObject("the rule set", body,
		"name", "ruleLanguageVersion", "playerAttributes", "algorithm", "teams", "rules", "expansions")
	if err != nil {
		return nil, err
	}
	p := &parser{rs: &RuleSet{}}
	for _, part := range []func(object) error{
		p.header, p.attributes, p.teams, p.algorithm, p.rules, p.expansions,
	} {
		if err := part(top); err != nil {
			return nil, err
		}
	}
	p.rs.buildStages() // stages: built by buildStages (stages.go)
	return p.rs, nil
}

// checkBody checks the body's length (in characters, as the API counts) and that it is
// strict JSON.
func checkBody(body []byte) error {
	switch n := utf8.RuneCount(body); {
	case n == 0:
		return errors.New("the rule set body is empty")
	case n > MaxBodyLength:
		return fmt.Errorf("the rule set body is %d characters long; the limit is %d", n, MaxBodyLength)
	}
	return checkStrictJSON(body)
}

// parser holds the rule set being built by one Parse call.
type parser struct {
	rs *RuleSet
	// players is the sum over teams of maxPlayers × quantity; large is players > 40.
	players int
	large   bool
}

// header reads name and ruleLanguageVersion.
func (p *parser) header(top object) error {
	name, _, err := top.str("name")
	if err != nil {
		return err
	}
	p.rs.Name = name
	v, ok, err := top.str("ruleLanguageVersion")
	switch {
	case err != nil:
		return errors.New(`ruleLanguageVersion must be the string "1.0"`)
	case !ok:
		return errors.New(`ruleLanguageVersion is required (it must be "1.0")`)
	case v != "1.0":
		return fmt.Errorf(`ruleLanguageVersion must be "1.0", got %q`, v)
	}
	return nil
}

// attributes reads playerAttributes.
func (p *parser) attributes(top object) error {
	items, _, err := top.list("playerAttributes")
	if err != nil {
		return err
	}
	for i, raw := range items {
		a, err := p.attribute(i, raw)
		if err != nil {
			return err
		}
		p.rs.Attributes = append(p.rs.Attributes, a)
	}
	return nil
}

// attribute reads one player attribute declaration.
func (p *parser) attribute(i int, raw json.RawMessage) (Attribute, error) {
	o, err := decodeObject(fmt.Sprintf("playerAttributes[%d]", i), raw, "name", "type", "default")
	if err != nil {
		return Attribute{}, err
	}
	name, err := o.requiredStr("name")
	if err != nil {
		return Attribute{}, err
	}
	o.where = fmt.Sprintf("playerAttributes[%d] %q", i, name)
	if findAttr(p.rs.Attributes, name) != nil {
		return Attribute{}, fmt.Errorf("%s: another attribute is already named %s", o.where, name)
	}
	types := []string{string(TypeString), string(TypeNumber), string(TypeStringList), string(TypeStringNumberMap)}
	typ, err := o.oneOf("type", "", types...)
	if err == nil && typ == "" {
		err = fmt.Errorf("%s: type is required (one of %s)", o.where, strings.Join(types, ", "))
	}
	if err != nil {
		return Attribute{}, err
	}
	a := Attribute{Name: name, Type: AttrType(typ)}
	if def, ok := o.fields["default"]; ok {
		if a.Default, err = parseDefault(a.Type, def); err != nil {
			return Attribute{}, fmt.Errorf("%s: default %w", o.where, err)
		}
	}
	return a, nil
}

// parseDefault reads an attribute's default value, which must fit the attribute's type.
// The error reads after "default".
func parseDefault(t AttrType, raw json.RawMessage) (*Value, error) {
	v := &Value{Type: t}
	var err error
	switch t {
	case TypeString:
		if jsonKind(raw) != "a string" || json.Unmarshal(raw, &v.S) != nil {
			err = fmt.Errorf("must be a string, got %s", shortJSON(raw))
		}
	case TypeNumber:
		v.N, err = jsonNumber(raw)
	case TypeStringList:
		if v.SL, err = stringList("list", raw); err != nil {
			err = fmt.Errorf("must be a list of strings, got %s", shortJSON(raw))
		}
	case TypeStringNumberMap:
		v.SDM, err = numberMap(raw)
	}
	return v, err
}

// numberMap reads an object of numbers (a string_number_map value).
func numberMap(raw json.RawMessage) (map[string]float64, error) {
	var fields map[string]json.RawMessage
	if jsonKind(raw) != "an object" || json.Unmarshal(raw, &fields) != nil {
		return nil, fmt.Errorf("must be an object of numbers, got %s", shortJSON(raw))
	}
	m := make(map[string]float64, len(fields))
	for _, k := range sortedKeys(fields) {
		n, err := jsonNumber(fields[k])
		if err != nil {
			return nil, fmt.Errorf("key %q %w", k, err)
		}
		m[k] = n
	}
	return m, nil
}

// teams reads the team definitions and sizes the match.
func (p *parser) teams(top object) error {
	items, _, err := top.list("teams")
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return errors.New("teams: at least one team is required")
	}
	taken := map[string]string{} // every team name a match will have → its definition
	for i, raw := range items {
		t, err := p.team(i, raw, taken)
		if err != nil {
			return err
		}
		p.rs.Teams = append(p.rs.Teams, t)
		p.players += t.MaxPlayers * t.Quantity // at most 200 × 200 each: no overflow
	}
	if p.players > MaxMatchPlayers {
		return fmt.Errorf("teams: the teams add up to %d players (maxPlayers × quantity); a match holds at most %d",
			p.players, MaxMatchPlayers)
	}
	p.large = p.players > MaxStandardMatchPlayers
	return nil
}

// team reads one team definition; taken holds the team names of earlier definitions (a
// definition with a quantity makes <name>_1 ... <name>_N) and gets this one's.
func (p *parser) team(i int, raw json.RawMessage, taken map[string]string) (Team, error) {
	o, err := decodeObject(fmt.Sprintf("teams[%d]", i), raw,
		"name", "maxPlayers", "minPlayers", "quantity")
	if err != nil {
		return Team{}, err
	}
	t := Team{Quantity: 1}
	if t.Name, err = o.requiredStr("name"); err != nil {
		return Team{}, err
	}
	if err := checkTeamName(t.Name); err != nil {
		return Team{}, fmt.Errorf("%s: %w", o.where, err)
	}
	o.where = fmt.Sprintf("teams[%d] %q", i, t.Name)
	if err := readTeamSizes(o, &t); err != nil {
		return Team{}, err
	}
	if slices.ContainsFunc(p.rs.Teams, func(d Team) bool { return d.Name == t.Name }) {
		return Team{}, fmt.Errorf("%s: another team is already named %s", o.where, t.Name)
	}
	for _, n := range instanceNames(t) {
		if def, ok := taken[n]; ok {
			return Team{}, fmt.Errorf("%s: its team name %s is already used by team %q", o.where, n, def)
		}
		taken[n] = t.Name
	}
	return t, nil
}

// readTeamSizes reads maxPlayers, minPlayers and quantity.
func readTeamSizes(o object, t *Team) error {
	var ok bool
	var err error
	if t.MaxPlayers, ok, err = o.integer("maxPlayers", 1); err == nil && !ok {
		err = fmt.Errorf("%s: maxPlayers is required", o.where)
	}
	if err != nil {
		return err
	}
	if t.MaxPlayers > MaxMatchPlayers {
		return fmt.Errorf("%s: maxPlayers %d is more than %d, the most players a match holds", o.where, t.MaxPlayers, MaxMatchPlayers)
	}
	if t.MinPlayers, ok, err = o.integer("minPlayers", 0); err == nil && !ok {
		err = fmt.Errorf("%s: minPlayers is required", o.where)
	}
	if err != nil {
		return err
	}
	if t.MinPlayers > t.MaxPlayers {
		return fmt.Errorf("%s: minPlayers %d is more than maxPlayers %d", o.where, t.MinPlayers, t.MaxPlayers)
	}
	if q, ok, err := o.integer("quantity", 1); err != nil || !ok {
		return err
	} else if q > MaxMatchPlayers {
		return fmt.Errorf("%s: quantity %d is more than %d, the most players a match holds", o.where, q, MaxMatchPlayers)
	} else {
		t.Quantity = q
	}
	return nil
}

// checkTeamName rejects team names that property expressions could not name.
//
// Hoist: the documentation does not restrict team names; Hoist rejects "*", brackets,
// commas and surrounding spaces, which teams[...] selectors and targets cannot express.
func checkTeamName(name string) error {
	switch {
	case name == "*" || strings.ContainsAny(name, "[],"):
		return fmt.Errorf("team name %q can't be used in teams[...]: it must not be * or contain [ ] or ,", name)
	case strings.TrimSpace(name) != name:
		return fmt.Errorf("team name %q must not start or end with a space", name)
	}
	return nil
}

// instanceNames are the names of the teams a definition stands for in a match: its own
// name, or <name>_1 ... <name>_N when its quantity is N > 1.
func instanceNames(t Team) []string {
	if t.Quantity <= 1 {
		return []string{t.Name}
	}
	names := make([]string, t.Quantity)
	for i := range names {
		names[i] = fmt.Sprintf("%s_%d", t.Name, i+1)
	}
	return names
}

// algorithm reads the algorithm object (optional) and fills in its defaults.
//
// Hoist: the guide says balanced is meant for 41-200 players, yet its Example 10 uses it
// with 2 × 20 = 40 players and compound rules; Hoist allows either strategy at any size
// (and, like the current guide, does not require an algorithm block for large matches).
func (p *parser) algorithm(top object) error {
	o := object{where: "algorithm"}
	if raw, ok := top.fields["algorithm"]; ok {
		var err error
		if o, err = decodeObject("algorithm", raw, "strategy", "batchingPreference",
			"sortByAttributes", "balancedAttribute", "backfillPriority", "expansionAgeSelection"); err != nil {
			return err
		}
	}
	a := &p.rs.Algorithm
	var err error
	if a.Strategy, err = o.oneOf("strategy", StrategyExhaustive, StrategyExhaustive, StrategyBalanced); err != nil {
		return err
	}
	batching := BatchingRandom
	if a.Strategy == StrategyBalanced {
		batching = BatchingLargestPopulation
	}
	for _, f := range []struct {
		key, def string
		dst      *string
		values   []string
	}{
		{"batchingPreference", batching, &a.BatchingPreference,
			[]string{BatchingRandom, BatchingSorted, BatchingLargestPopulation, BatchingFastestRegion}},
		{"backfillPriority", PriorityNormal, &a.BackfillPriority, []string{PriorityNormal, PriorityHigh, PriorityLow}},
		{"expansionAgeSelection", AgeNewest, &a.ExpansionAgeSelection, []string{AgeNewest, AgeOldest}},
	} {
		if *f.dst, err = o.oneOf(f.key, f.def, f.values...); err != nil {
			return err
		}
	}
	if err := p.batching(o, a); err != nil {
		return err
	}
	return p.balancing(o, a)
}

// batching checks batchingPreference against the strategy and reads sortByAttributes.
func (p *parser) batching(o object, a *Algorithm) error {
	balancedOnly := a.BatchingPreference == BatchingLargestPopulation || a.BatchingPreference == BatchingFastestRegion
	switch {
	case a.BatchingPreference == BatchingSorted && a.Strategy != StrategyExhaustive:
		return fmt.Errorf("algorithm: batchingPreference sorted works only with strategy %s", StrategyExhaustive)
	case balancedOnly && a.Strategy != StrategyBalanced:
		return fmt.Errorf("algorithm: batchingPreference %s works only with strategy %s", a.BatchingPreference, StrategyBalanced)
	case !o.has("sortByAttributes") && a.BatchingPreference == BatchingSorted:
		return errors.New("algorithm: batchingPreference sorted needs sortByAttributes")
	case !o.has("sortByAttributes"):
		return nil
	case a.BatchingPreference != BatchingSorted:
		return errors.New("algorithm: sortByAttributes is used only with batchingPreference sorted")
	}
	names, err := stringList("algorithm: sortByAttributes", o.fields["sortByAttributes"])
	if err == nil && len(names) == 0 {
		err = errors.New("algorithm: sortByAttributes must name at least one attribute")
	}
	for i := 0; err == nil && i < len(names); i++ {
		err = p.sortByAttribute(names, i)
	}
	a.SortByAttributes = names
	return err
}

// sortByAttribute checks the i-th attribute of sortByAttributes: declared, once, and a
// string or a number (the values are sorted alphanumerically).
func (p *parser) sortByAttribute(names []string, i int) error {
	a := findAttr(p.rs.Attributes, names[i])
	switch {
	case a == nil:
		return fmt.Errorf("algorithm: sortByAttributes[%d]: no player attribute named %s", i, names[i])
	case slices.Contains(names[:i], names[i]):
		return fmt.Errorf("algorithm: sortByAttributes[%d]: %s is listed twice", i, names[i])
	case a.Type != TypeString && a.Type != TypeNumber:
		return fmt.Errorf("algorithm: sortByAttributes[%d]: %s is a %s; only string and number attributes sort", i, a.Name, a.Type)
	}
	return nil
}

// balancing reads balancedAttribute: required with the balanced strategy, a declared
// number attribute, and not used otherwise.
func (p *parser) balancing(o object, a *Algorithm) error {
	name, ok, err := o.str("balancedAttribute")
	switch {
	case err != nil:
		return err
	case !ok && a.Strategy == StrategyBalanced:
		return errors.New("algorithm: strategy balanced needs balancedAttribute")
	case !ok:
		return nil
	case a.Strategy != StrategyBalanced:
		return errors.New("algorithm: balancedAttribute is used only with strategy balanced")
	}
	attr := findAttr(p.rs.Attributes, name)
	switch {
	case attr == nil:
		return fmt.Errorf("algorithm: balancedAttribute: no player attribute named %s", name)
	case attr.Type != TypeNumber:
		return fmt.Errorf("algorithm: balancedAttribute %s is a %s; it must be a number attribute", name, attr.Type)
	}
	a.BalancedAttribute = name
	return nil
}
