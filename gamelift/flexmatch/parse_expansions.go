package flexmatch

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Expansions: targets, steps, and the team sizes they lead to.

// maxWaitSeconds is the longest expansion wait that can matter: the longest request
// timeout a matchmaking configuration may have (RequestTimeoutSeconds ≤ 43,200).
const maxWaitSeconds = 43200

// expansions reads the expansions.
func (p *parser) expansions(top object) error {
	items, _, err := top.list("expansions")
	if err != nil {
		return err
	}
	for i, raw := range items {
		e, err := p.expansion(i, raw)
		if err != nil {
			return err
		}
		if j := p.overlapping(e.Target); j >= 0 {
			return fmt.Errorf("expansions[%d]: %s is already expanded by expansions[%d]", i, targetString(e.Target), j)
		}
		p.rs.Expansions = append(p.rs.Expansions, e)
	}
	return p.checkExpandedTeams()
}

// stepReader reads one step's value of a target; the error reads after "value".
type stepReader func(raw json.RawMessage) (Operand, error)

// expansion reads expansions[i].
func (p *parser) expansion(i int, raw json.RawMessage) (Expansion, error) {
	o, err := decodeObject(fmt.Sprintf("expansions[%d]", i), raw, "target", "steps")
	if err != nil {
		return Expansion{}, err
	}
	text, err := o.requiredStr("target")
	if err != nil {
		return Expansion{}, err
	}
	var e Expansion
	var read stepReader
	e.Target, err = parseTarget(text)
	if err == nil {
		read, err = p.target(e.Target)
	}
	if err != nil {
		return Expansion{}, fmt.Errorf("%s.target %q: %w", o.where, text, err)
	}
	items, ok, err := o.list("steps")
	switch {
	case err != nil:
		return Expansion{}, err
	case !ok || len(items) == 0:
		return Expansion{}, fmt.Errorf("%s: steps must list at least one step", o.where)
	}
	for j, raw := range items {
		s, err := readStep(fmt.Sprintf("%s.steps[%d]", o.where, j), raw, read)
		if err == nil && j > 0 && s.Wait <= e.Steps[j-1].Wait {
			err = fmt.Errorf("%s.steps[%d]: waitTimeSeconds %d must be more than the step before's %d (waits "+
				"count from the start, not from the step before)", o.where, j, s.Wait/time.Second, e.Steps[j-1].Wait/time.Second)
		}
		if err != nil {
			return Expansion{}, err
		}
		e.Steps = append(e.Steps, s)
	}
	return e, nil
}

// readStep reads one step: waitTimeSeconds and value.
//
// Hoist: the guide does not bound waitTimeSeconds; Hoist takes whole seconds from 1 (a
// step at 0 would simply replace the rule's own value) to 43,200, the longest request
// timeout (a later step could never apply).
func readStep(where string, raw json.RawMessage, read stepReader) (Step, error) {
	o, err := decodeObject(where, raw, "waitTimeSeconds", "value")
	if err != nil {
		return Step{}, err
	}
	wait, ok, err := o.integer("waitTimeSeconds", 1)
	switch {
	case err != nil:
		return Step{}, err
	case !ok:
		return Step{}, fmt.Errorf("%s: waitTimeSeconds is required", where)
	case wait > maxWaitSeconds:
		return Step{}, fmt.Errorf("%s: waitTimeSeconds %d is more than %d, the longest request timeout", where, wait, maxWaitSeconds)
	}
	v, ok := o.fields["value"]
	if !ok {
		return Step{}, fmt.Errorf("%s: value is required", where)
	}
	val, err := read(v)
	if err != nil {
		return Step{}, fmt.Errorf("%s: value %w", where, err)
	}
	return Step{Wait: time.Duration(wait) * time.Second, Value: val}, nil
}

// parseTarget parses rules[<name>].<property> or teams[<name>, ...].<property>.
func parseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	open, dot := strings.IndexByte(s, '['), strings.LastIndexByte(s, '.')
	head := strings.TrimSpace(s[:max(dot, 0)])
	if open < 0 || dot < open || !strings.HasSuffix(head, "]") {
		return Target{}, fmt.Errorf("a target is rules[<name>].<property> or teams[<name>,...].<property>")
	}
	t := Target{
		Component: strings.TrimSpace(s[:open]),
		Property:  strings.TrimSpace(s[dot+1:]),
	}
	inner := head[open+1 : len(head)-1]
	switch t.Component {
	case "rules":
		t.Names = []string{strings.TrimSpace(inner)}
	case "teams":
		t.Names = strings.Split(inner, ",")
		for i := range t.Names {
			t.Names[i] = strings.TrimSpace(t.Names[i])
		}
	default:
		return Target{}, fmt.Errorf("unknown component %q (a target starts with rules[ or teams[)", t.Component)
	}
	for i, n := range t.Names {
		switch {
		case n == "":
			return Target{}, fmt.Errorf("empty name in %s[%s]", t.Component, inner)
		case slices.Contains(t.Names[:i], n):
			return Target{}, fmt.Errorf("%s is named twice", n)
		}
	}
	if t.Property == "" {
		return Target{}, fmt.Errorf("the property after %s[...]. is missing", t.Component)
	}
	return t, nil
}

// target checks that a target names existing teams or an existing rule and a property an
// expansion may relax, and returns the reader of its step values.
func (p *parser) target(t Target) (stepReader, error) {
	if t.Component == "teams" {
		return p.teamTarget(t)
	}
	r := p.findRule(t.Names[0])
	if r == nil {
		return nil, fmt.Errorf("no rule named %s", t.Names[0])
	}
	props := relaxable(r.Type)
	switch {
	case r.Type == RuleCompound:
		return nil, fmt.Errorf("a compound rule can't be expanded (expand the rules its statement names)")
	case len(props) == 0:
		return nil, fmt.Errorf("a %s rule has no property an expansion can relax", r.Type)
	case !slices.Contains(props, t.Property):
		return nil, fmt.Errorf("a %s rule can relax %s, not %s", r.Type, strings.Join(props, ", "), t.Property)
	case !ruleSets(r, t.Property):
		return nil, fmt.Errorf("rule %s does not set %s, so there is nothing to relax", r.Name, t.Property)
	case t.Property == "referenceValue":
		return func(raw json.RawMessage) (Operand, error) {
			op, err := p.reference(r, raw)
			if err != nil {
				return Operand{}, err
			}
			return *op, nil
		}, nil
	}
	whole := t.Property == "minCount" || t.Property == "maxCount"
	return numberStep(0, whole), nil
}

// relaxable lists the properties of a rule type that an expansion may relax.
func relaxable(ruleType string) []string {
	switch ruleType {
	case RuleComparison:
		return []string{"referenceValue"}
	case RuleDistance:
		return []string{"referenceValue", "minDistance", "maxDistance"}
	case RuleCollection:
		return []string{"referenceValue", "minCount", "maxCount"}
	case RuleLatency:
		return []string{"maxLatency", "maxDistance"}
	case RuleBatchDistance:
		return []string{"maxDistance"}
	}
	return nil
}

// ruleSets reports whether rule r sets property prop.
//
// Hoist: an expansion relaxes what a rule sets; it can't add a bound the rule does not have.
func ruleSets(r *Rule, prop string) bool {
	switch prop {
	case "referenceValue":
		return r.ReferenceValue != nil
	case "minDistance":
		return r.MinDistance != nil
	case "maxDistance":
		return r.MaxDistance != nil
	case "minCount":
		return r.MinCount != nil
	case "maxCount":
		return r.MaxCount != nil
	case "maxLatency":
		return r.MaxLatency != nil
	}
	return false
}

// numberStep reads a step value that is a number of at least lo (whole if whole).
func numberStep(lo float64, whole bool) stepReader {
	return func(raw json.RawMessage) (Operand, error) {
		n, err := jsonNumber(raw)
		if err == nil {
			err = checkBound(n, lo, whole)
		}
		return Operand{Num: &n}, err
	}
}

// teamTarget checks a teams[...] target: team definitions (or * for all) and minPlayers or
// maxPlayers.
//
// Hoist: a target names team definitions (an expansion of a definition with a quantity
// applies to all its teams, as the guide's Example 8 says), not the red_2 names of single
// teams; "*" alone names every definition.
func (p *parser) teamTarget(t Target) (stepReader, error) {
	for _, n := range t.Names {
		if n == "*" && len(t.Names) > 1 {
			return nil, fmt.Errorf("* must be the only name in teams[...]")
		}
		if n != "*" && !slices.ContainsFunc(p.rs.Teams, func(d Team) bool { return d.Name == n }) {
			return nil, fmt.Errorf("no team named %s (an expansion names team definitions: %s)", n, p.teamNames())
		}
	}
	switch t.Property {
	case "minPlayers":
		return numberStep(0, true), nil
	case "maxPlayers":
		return numberStep(1, true), nil
	}
	return nil, fmt.Errorf("teams can relax minPlayers and maxPlayers, not %s", t.Property)
}

// teamNames lists the team definitions' names, for error messages.
func (p *parser) teamNames() string {
	names := make([]string, len(p.rs.Teams))
	for i, t := range p.rs.Teams {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// overlapping returns the index of an earlier expansion of the same property of the same
// rule or team, or -1.
func (p *parser) overlapping(t Target) int {
	for i, e := range p.rs.Expansions {
		o := e.Target
		if o.Component != t.Component || o.Property != t.Property {
			continue
		}
		if slices.Contains(o.Names, "*") || slices.Contains(t.Names, "*") ||
			slices.ContainsFunc(o.Names, func(n string) bool { return slices.Contains(t.Names, n) }) {
			return i
		}
	}
	return -1
}

// targetString writes a target back as a rule set would.
func targetString(t Target) string {
	return fmt.Sprintf("%s[%s].%s", t.Component, strings.Join(t.Names, ", "), t.Property)
}

// checkExpandedTeams checks the teams at every expansion wait: each team's minPlayers no
// more than its maxPlayers, and the match size within its class (a standard match stays
// at 40 players or fewer; a large one at 200 or fewer).
func (p *parser) checkExpandedTeams() error {
	limit := MaxStandardMatchPlayers
	if p.large {
		limit = MaxMatchPlayers
	}
	for _, w := range p.teamWaits() {
		total := 0
		for _, t := range p.rs.Teams {
			lo, hi := p.teamSizeAt(t, "minPlayers", w), p.teamSizeAt(t, "maxPlayers", w)
			if lo > hi {
				return fmt.Errorf("expansions: from %d seconds on, team %s would need at least %d players but "+
					"hold at most %d", w/time.Second, t.Name, lo, hi)
			}
			total += hi * t.Quantity
		}
		if total > limit {
			return fmt.Errorf("expansions: from %d seconds on, the teams would add up to %d players; the %s "+
				"match this rule set describes holds at most %d", w/time.Second, total, p.sizeClass(), limit)
		}
	}
	return nil
}

// sizeClass names the rule set's kind of match.
func (p *parser) sizeClass() string {
	if p.large {
		return "large"
	}
	return "standard"
}

// teamWaits are the distinct waits of the team expansions, in order.
func (p *parser) teamWaits() []time.Duration {
	var waits []time.Duration
	for _, e := range p.rs.Expansions {
		if e.Target.Component == "teams" {
			for _, s := range e.Steps {
				waits = append(waits, s.Wait)
			}
		}
	}
	slices.Sort(waits)
	return slices.Compact(waits)
}

// teamSizeAt is a team's minPlayers or maxPlayers (prop) once expansions have applied the
// steps with waits up to w.
func (p *parser) teamSizeAt(t Team, prop string, w time.Duration) int {
	n := t.MinPlayers
	if prop == "maxPlayers" {
		n = t.MaxPlayers
	}
	for _, e := range p.rs.Expansions {
		tg := e.Target
		if tg.Component != "teams" || tg.Property != prop ||
			!(slices.Contains(tg.Names, t.Name) || slices.Contains(tg.Names, "*")) {
			continue
		}
		for _, s := range e.Steps {
			if s.Wait <= w && s.Value.Num != nil {
				n = int(*s.Value.Num)
			}
		}
	}
	return n
}
