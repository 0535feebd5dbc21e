package flexmatch

import (
	"fmt"
	"slices"
)

// Prepare checks a player's attributes against the rule set's declarations and fills in
// the declared defaults. Attributes the rule set does not declare are kept (they are passed
// through to the match data) but not checked. An error names the player and the attribute.
func (rs *RuleSet) Prepare(p *Player) error {
	if p.Attributes == nil {
		p.Attributes = map[string]Value{}
	}
	for _, a := range rs.Attributes {
		v, ok := p.Attributes[a.Name]
		switch {
		case !ok && a.Default == nil:
			return fmt.Errorf("player %s has no value for attribute %s, which the rule set requires (it has no default)", p.ID, a.Name)
		case !ok:
			p.Attributes[a.Name] = *a.Default
		case v.Type != a.Type:
			return fmt.Errorf("player %s: attribute %s must be of type %s, not %s", p.ID, a.Name, a.Type, v.Type)
		}
	}
	if rs.hasLatencyRule() && len(p.Latency) == 0 {
		return fmt.Errorf("player %s has no LatencyInMs, which the rule set's latency rule needs", p.ID)
	}
	return nil
}

// hasLatencyRule reports whether the rule set has a latency rule.
func (rs *RuleSet) hasLatencyRule() bool {
	return slices.ContainsFunc(rs.Rules, func(r Rule) bool { return r.Type == RuleLatency })
}

// MaxPlayers is the most players a match of the rule set holds: the teams' maxPlayers times
// their quantities.
func (rs *RuleSet) MaxPlayers() int {
	n := 0
	for _, t := range rs.Teams {
		n += t.MaxPlayers * max(t.Quantity, 1)
	}
	return n
}

// Large reports whether the rule set makes large matches (more than MaxStandardMatchPlayers).
func (rs *RuleSet) Large() bool { return rs.MaxPlayers() > MaxStandardMatchPlayers }

// TeamNames are the names of a match's teams, in order: a definition with Quantity N gives
// <name>_1 ... <name>_N.
func (rs *RuleSet) TeamNames() []string {
	var out []string
	for _, t := range rs.Teams {
		q := max(t.Quantity, 1)
		for k := 1; k <= q; k++ {
			if q == 1 {
				out = append(out, t.Name)
			} else {
				out = append(out, fmt.Sprintf("%s_%d", t.Name, k))
			}
		}
	}
	return out
}
