package flexmatch

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/google/btree"
)

// maxSwaps bounds how many unused candidates swap tries per member.
const maxSwaps = 8

// candidates lists the pool tickets an anchor's match may take, nearest first: by distance
// from the anchor's key, by the key itself (absoluteSort), or by age (no key). With the
// "newest" expansion age selection, a match evaluated at the anchor's expansion stage may
// only hold tickets at least as far along, so only the trees of that stage and later ones
// are searched.
func (m *Matcher) candidates(a *entry, b *build, age time.Duration) []*entry {
	first := 0
	if m.rs.Algorithm.ExpansionAgeSelection != AgeOldest {
		first = m.rs.stageAt(age)
	}
	trees := m.trees[first:]
	ok := func(e *entry) bool { return e != a }
	if first > 0 || m.rs.Algorithm.ExpansionAgeSelection != AgeOldest {
		pair := b.pairCheck(a)
		ok = func(e *entry) bool { return e != a && pair(e) }
	}
	if m.plan.keyAttr == "" || m.plan.absolute {
		return m.scanOrdered(trees, ok, m.opt.Candidates)
	}
	return m.scanNear(trees, a.key, m.scanBound(b), ok, m.opt.Candidates)
}

// scanBound is how far from the anchor's key a candidate may be: the maxDistance of a
// batchDistance rule on the key, in force for the build or (with the "oldest" selection,
// where an older candidate may relax it) in any stage.
func (m *Matcher) scanBound(b *build) float64 {
	i := m.plan.batchRule
	if i < 0 {
		return math.Inf(1)
	}
	rules := [][]Rule{b.rules}
	if m.rs.Algorithm.ExpansionAgeSelection == AgeOldest {
		rules = rules[:0]
		for _, st := range m.rs.stages {
			rules = append(rules, st.rules)
		}
	}
	bound := 0.0
	for _, rs := range rules {
		if rs[i].MaxDistance == nil {
			return math.Inf(1)
		}
		bound = max(bound, *rs[i].MaxDistance)
	}
	return bound
}

// scanOrdered takes the first limit eligible tickets in pool order (descending for a
// descending absoluteSort) over the given trees.
func (m *Matcher) scanOrdered(trees []*btree.BTreeG[*entry], ok func(*entry) bool, limit int) []*entry {
	var out []*entry
	for _, tr := range trees {
		n := 0
		visit := func(e *entry) bool {
			if ok(e) {
				out, n = append(out, e), n+1
			}
			return n < limit
		}
		if m.plan.descending {
			tr.Descend(visit)
		} else {
			tr.Ascend(visit)
		}
	}
	slices.SortFunc(out, func(x, y *entry) int {
		c := cmp.Compare(x.key, y.key)
		if m.plan.descending {
			c = -c
		}
		return cmp.Or(c, cmp.Compare(x.seq, y.seq))
	})
	return out[:min(len(out), limit)]
}

// scanNear takes the limit eligible tickets whose keys are nearest key, within bound, over
// the given trees.
func (m *Matcher) scanNear(trees []*btree.BTreeG[*entry], key, bound float64, ok func(*entry) bool, limit int) []*entry {
	var out []*entry
	pivot := &entry{key: key}
	for _, tr := range trees {
		up, down := 0, 0
		tr.AscendGreaterOrEqual(pivot, func(e *entry) bool {
			if e.key-key > bound {
				return false
			}
			if ok(e) {
				out, up = append(out, e), up+1
			}
			return up < limit
		})
		tr.DescendLessOrEqual(pivot, func(e *entry) bool {
			if key-e.key > bound {
				return false
			}
			if ok(e) && e.key < key {
				out, down = append(out, e), down+1
			}
			return down < limit
		})
	}
	slices.SortFunc(out, func(x, y *entry) int {
		return cmp.Or(cmp.Compare(math.Abs(x.key-key), math.Abs(y.key-key)), x.t.Start.Compare(y.t.Start), cmp.Compare(x.seq, y.seq))
	})
	return out[:min(len(out), limit)]
}

// rebalance reassigns the tickets to teams so that the balance attribute's totals are as
// even as the team sizes allow: the strongest ticket first, each to the team below its
// minimum or, failing that, with the lowest total. A backfill ticket's players stay put. It
// reports false (and leaves the teams as they were) when the tickets do not fit that way.
func (b *build) rebalance() bool {
	if b.m.plan.balanceAttr == "" || len(b.v.teams) < 2 {
		return false
	}
	saved := b.saveTeams()
	movable := slices.DeleteFunc(slices.Clone(b.members), func(e *entry) bool { return e == b.fixed })
	slices.SortStableFunc(movable, func(x, y *entry) int {
		return cmp.Compare(b.m.plan.balance(y.t), b.m.plan.balance(x.t))
	})
	b.clearTeams()
	for _, e := range movable {
		ti := b.weakestTeam(e.size)
		if ti < 0 {
			b.restoreTeams(saved)
			return false
		}
		b.place(e, ti)
	}
	return true
}

// weakestTeam is the team with room for n players that is below its minimum, else has the
// lowest balance total; -1 when none has room.
func (b *build) weakestTeam(n int) int {
	best := -1
	var bestBelow int
	var bestTotal float64
	for i := range b.v.teams {
		if b.open(i) < n {
			continue
		}
		below, total := b.belowMin(i), b.teamTotal(i)
		if best < 0 || below > bestBelow || (below == bestBelow && total < bestTotal) {
			best, bestBelow, bestTotal = i, below, total
		}
	}
	return best
}

// teamTotal is a team's total of the balance attribute.
func (b *build) teamTotal(i int) float64 {
	s := 0.0
	for _, p := range b.v.teams[i].players {
		s += p.Player.Attributes[b.m.plan.balanceAttr].N
	}
	return s
}

// saveTeams copies the teams' player lists.
func (b *build) saveTeams() [][]MatchPlayer {
	out := make([][]MatchPlayer, len(b.v.teams))
	for i := range b.v.teams {
		out[i] = slices.Clone(b.v.teams[i].players)
	}
	return out
}

// restoreTeams puts saved player lists back.
func (b *build) restoreTeams(saved [][]MatchPlayer) {
	for i := range b.v.teams {
		b.v.teams[i].players = saved[i]
	}
}

// clearTeams leaves only the backfill ticket's players on the teams.
func (b *build) clearTeams() {
	for i := range b.v.teams {
		b.v.teams[i].players = slices.DeleteFunc(b.v.teams[i].players, func(p MatchPlayer) bool {
			return b.fixed == nil || p.Ticket != b.fixed.t
		})
	}
}

// swap tries replacing one member (newest first, never the anchor) with one of the unused
// candidates, rebalancing each time, until every rule holds.
func (b *build) swap(cands []*entry) bool {
	unused := slices.DeleteFunc(slices.Clone(cands), func(e *entry) bool { return slices.Contains(b.members, e) })
	if len(unused) > maxSwaps {
		unused = unused[:maxSwaps]
	}
	saved, members, players := b.saveTeams(), slices.Clone(b.members), b.players
	for i := len(members) - 1; i >= 1; i-- {
		for _, u := range unused {
			if players-members[i].size+u.size > b.capacity || members[i] == b.fixed {
				continue
			}
			b.members = append(slices.Delete(slices.Clone(members), i, i+1), u)
			b.players = players - members[i].size + u.size
			if b.rebalance() && b.viable() && b.holds(false) {
				return true
			}
		}
	}
	b.members, b.players = members, players
	b.restoreTeams(saved)
	return false
}
