package flexmatch

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// build is a match being formed around an anchor.
type build struct {
	m       *Matcher
	teams   []Team // in force, by definition
	rules   []Rule // in force
	v       view
	members []*entry
	players int
	// capacity is how many players the match is filled up to.
	capacity int
	metrics  []RuleMetric
	// fixed is the backfill ticket, whose players keep their teams.
	fixed *entry
	// fast holds the incremental checks of the rules (fast.go).
	fast []fastRule
}

// tryAnchor tries to form a match around a: its nearest candidates are added one at a time
// while the rules that can be checked on a partial match hold; the result, full or at least
// at every team's minimum, must then pass every rule, after the teams are rebalanced or a
// ticket swapped out if need be.
//
// With the "oldest" expansion age selection the match is formed under the expansions of the
// oldest ticket among the anchor and its candidates, and checked again under those of the
// oldest ticket it actually holds.
func (m *Matcher) tryAnchor(a *entry, now time.Time) *Match {
	age := now.Sub(a.t.Start)
	cands := m.candidates(a, m.newBuild(age), age)
	if m.rs.Algorithm.ExpansionAgeSelection == AgeOldest {
		for _, c := range cands {
			age = max(age, now.Sub(c.t.Start))
		}
	}
	b := m.newBuild(age)
	if !b.seed(a) {
		return nil
	}
	for _, c := range cands {
		if b.players >= b.capacity {
			break
		}
		b.add(c)
	}
	if !b.complete(cands) {
		return nil
	}
	mt := b.match(now)
	if m.rs.stageAt(mt.ExpansionAge) != m.rs.stageAt(age) && !b.holdsAt(mt.ExpansionAge) {
		return nil
	}
	return mt
}

// holdsAt checks the build's teams against the rules and team sizes in force at age.
func (b *build) holdsAt(age time.Duration) bool {
	teams, rules := b.m.rs.At(age)
	for i := range b.v.teams {
		if n, d := len(b.v.teams[i].players), teams[b.v.teams[i].def]; n < d.MinPlayers || n > d.MaxPlayers {
			return false
		}
	}
	b.teams, b.rules = teams, rules
	return b.holds(false)
}

// newBuild starts an empty build with the teams and rules in force at age.
func (m *Matcher) newBuild(age time.Duration) *build {
	teams, rules := m.rs.At(age)
	b := &build{m: m, teams: teams, rules: rules, v: view{rs: m.rs}}
	for i, t := range teams {
		q := max(t.Quantity, 1)
		for k := 1; k <= q; k++ {
			name := t.Name
			if q > 1 {
				name = t.Name + "_" + itoa(k)
			}
			b.v.teams = append(b.v.teams, viewTeam{name: name, def: i})
			b.capacity += t.MaxPlayers
		}
	}
	b.metrics = make([]RuleMetric, len(rules))
	for i := range rules {
		b.metrics[i].Rule = rules[i].Name
	}
	b.newFast()
	return b
}

// seed puts the anchor in: a backfill ticket's players on their teams (the match keeps the
// full capacity, so its open slots are what gets filled), any other ticket like a candidate
// (the match left AdditionalPlayers short).
func (b *build) seed(a *entry) bool {
	if !a.t.Backfill {
		b.capacity -= b.m.opt.AdditionalPlayers
		return b.add(a)
	}
	b.fixed = a
	b.fast = make([]fastRule, len(b.rules)) // none: the session's players are not checked
	for i := range a.t.Players {
		p := &a.t.Players[i]
		ti := b.teamIndex(p.Team)
		if ti < 0 {
			return false
		}
		b.v.teams[ti].players = append(b.v.teams[ti].players, MatchPlayer{Ticket: a.t, Player: p})
	}
	b.members = append(b.members, a)
	b.players += a.size
	return b.players < b.capacity
}

// teamIndex finds a match team by name.
func (b *build) teamIndex(name string) int {
	for i := range b.v.teams {
		if b.v.teams[i].name == name {
			return i
		}
	}
	return -1
}

// add tries to put ticket e on a team, the teams below their minimum first, then the one
// with most open slots; it stays on the first team where every local rule still holds.
func (b *build) add(e *entry) bool {
	if b.players+e.size > b.capacity || !b.admits(e, false) {
		return false
	}
	for _, ti := range b.teamOrder(e.size) {
		b.place(e, ti)
		if b.holds(true) {
			b.admits(e, true)
			b.members = append(b.members, e)
			b.players += e.size
			return true
		}
		b.unplace(ti, e.size)
	}
	return false
}

// teamOrder lists the teams with room for n players, in the order they are filled.
func (b *build) teamOrder(n int) []int {
	var out []int
	for i := range b.v.teams {
		if b.open(i) >= n {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(x, y int) int {
		if c := cmp.Compare(b.belowMin(y), b.belowMin(x)); c != 0 {
			return c
		}
		return cmp.Compare(b.open(y), b.open(x))
	})
	return out
}

// open is a team's free slots.
func (b *build) open(i int) int {
	return b.teams[b.v.teams[i].def].MaxPlayers - len(b.v.teams[i].players)
}

// belowMin is 1 for a team short of its minimum.
func (b *build) belowMin(i int) int {
	if len(b.v.teams[i].players) < b.teams[b.v.teams[i].def].MinPlayers {
		return 1
	}
	return 0
}

// place puts a ticket's players on team ti.
func (b *build) place(e *entry, ti int) {
	for i := range e.t.Players {
		b.v.teams[ti].players = append(b.v.teams[ti].players, MatchPlayer{Ticket: e.t, Player: &e.t.Players[i]})
	}
}

// unplace takes the last n players off team ti.
func (b *build) unplace(ti, n int) {
	ps := b.v.teams[ti].players
	b.v.teams[ti].players = ps[:len(ps)-n]
}

// holds evaluates the rules (only the local ones when partial) and counts the results.
func (b *build) holds(partial bool) bool {
	for i := range b.rules {
		r := &b.rules[i]
		if b.m.plan.inCompound[r.Name] || (partial && (!b.m.plan.local[i] || b.fast[i].kind != fastNone)) {
			continue
		}
		if !b.v.evalRule(r, b.rules) {
			b.metrics[i].Failed++
			return false
		}
		b.metrics[i].Passed++
	}
	return true
}

// viable reports whether every team has at least its minimum, and a backfill gained
// someone.
func (b *build) viable() bool {
	for i := range b.v.teams {
		if b.belowMin(i) == 1 {
			return false
		}
	}
	return b.fixed == nil || len(b.members) > 1
}

// complete checks the whole match, rebalancing teams or swapping out one ticket for an unused
// candidate when an aggregate rule fails.
func (b *build) complete(cands []*entry) bool {
	if !b.viable() {
		return false
	}
	if b.m.rs.Algorithm.Strategy == StrategyBalanced {
		b.rebalance()
	}
	if b.holds(false) {
		return true
	}
	if b.rebalance() && b.holds(false) {
		return true
	}
	return b.swap(cands)
}

// match turns the build into a Match.
func (b *build) match(now time.Time) *Match {
	mt := &Match{Metrics: b.metrics}
	ageMin, ageMax := time.Duration(math.MaxInt64), time.Duration(0)
	for _, e := range b.members {
		mt.Tickets = append(mt.Tickets, e.t)
		age := now.Sub(e.t.Start)
		ageMin, ageMax = min(ageMin, age), max(ageMax, age)
	}
	mt.ExpansionAge = ageMin
	if b.m.rs.Algorithm.ExpansionAgeSelection == AgeOldest {
		mt.ExpansionAge = ageMax
	}
	for _, t := range b.v.teams {
		mt.Teams = append(mt.Teams, MatchTeam{Name: t.name, Definition: t.def, Players: t.players})
	}
	mt.Regions = b.regions()
	return mt
}

// regions is the Regions where every latency rule holds, lowest worst latency first.
func (b *build) regions() []string {
	var out []string
	first := true
	for i := range b.rules {
		if b.rules[i].Type != RuleLatency {
			continue
		}
		rs := b.v.latencyRegions(&b.rules[i], true)
		if first {
			out, first = rs, false
			continue
		}
		out = slices.DeleteFunc(out, func(r string) bool { return !slices.Contains(rs, r) })
	}
	slices.SortStableFunc(out, func(x, y string) int { return cmp.Compare(b.v.worstLatency(x), b.v.worstLatency(y)) })
	return out
}

// itoa formats a small positive integer.
func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
