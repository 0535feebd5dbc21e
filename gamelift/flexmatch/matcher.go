package flexmatch

import (
	"cmp"
	"container/heap"
	"errors"
	"slices"
	"time"

	"github.com/google/btree"
)

// Matcher holds a pool of tickets for one rule set and forms matches from it. It is not safe
// for concurrent use: its owner (the matchmaking loop, or hoist matchsim) serialises calls.
//
// The pool is ordered by a key (the rule set's sort, batch or balance attribute, else age),
// so that the candidates for a match are the tickets nearest the anchor, found in
// logarithmic time; it is split by expansion stage, so that a match formed under a stage's
// expansions only looks at tickets old enough for it. A ticket is tried as the anchor of a new match when it arrives, when the
// expansions its age allows change, and (backfill tickets) whenever new tickets arrive; a
// ticket that cannot match stays in the pool untouched, so a Step costs what its new
// arrivals and expansion changes cost, not what the pool holds.
type Matcher struct {
	rs   *RuleSet
	opt  Options
	plan plan
	byID map[string]*entry
	// trees hold the tickets by the expansion stage their age has reached (restage).
	trees []*btree.BTreeG[*entry]
	fresh []*entry
	wake  wakeHeap
	backs map[*entry]bool
	seq   uint64
}

// Options tune a Matcher.
type Options struct {
	// AdditionalPlayers is the configuration's AdditionalPlayerCount: new matches (not
	// backfills) are formed that many players short of the teams' maximum.
	AdditionalPlayers int
	// Candidates is how many pool tickets nearest an anchor are considered for its match;
	// DefaultCandidates when 0.
	Candidates int
}

// DefaultCandidates is the default Options.Candidates.
const DefaultCandidates = 64

// entry is a ticket in the pool.
type entry struct {
	t      *Ticket
	key    float64
	seq    uint64
	size   int
	wakeAt time.Time
	wakeIx int
	// stage is the index of the tree holding the entry; -1 while it is in none (new, or
	// parked: it cannot meet the rules of its stage even alone, e.g. no Region within the
	// latency limit yet).
	stage int
}

// NewMatcher returns an empty Matcher for rs.
func NewMatcher(rs *RuleSet, opt Options) *Matcher {
	if opt.Candidates <= 0 {
		opt.Candidates = DefaultCandidates
	}
	m := &Matcher{rs: rs, opt: opt, plan: newPlan(rs), byID: map[string]*entry{}, backs: map[*entry]bool{}}
	if len(rs.stages) == 0 {
		rs.buildStages()
	}
	for range rs.stages {
		m.trees = append(m.trees, btree.NewG(16, func(a, b *entry) bool {
			if a.key != b.key {
				return a.key < b.key
			}
			return a.seq < b.seq
		}))
	}
	return m
}

// ErrDuplicateTicket is returned by Add for a ticket ID already in the pool.
var ErrDuplicateTicket = errors.New("flexmatch: ticket already in the pool")

// Add puts a ticket in the pool; it is tried at the next Step.
func (m *Matcher) Add(t *Ticket) error {
	if _, ok := m.byID[t.ID]; ok {
		return ErrDuplicateTicket
	}
	m.seq++
	e := &entry{t: t, seq: m.seq, size: len(t.Players), key: m.plan.key(t), wakeIx: -1, stage: -1}
	m.byID[t.ID] = e
	if t.Backfill {
		m.backs[e] = true
	}
	m.fresh = append(m.fresh, e)
	return nil
}

// Remove takes a ticket out of the pool (cancelled, timed out); it reports whether the
// ticket was there.
func (m *Matcher) Remove(id string) bool {
	e, ok := m.byID[id]
	if !ok {
		return false
	}
	delete(m.byID, id)
	delete(m.backs, e)
	if e.stage >= 0 {
		m.trees[e.stage].Delete(e)
	}
	if e.wakeIx >= 0 {
		heap.Remove(&m.wake, e.wakeIx)
	}
	return true
}

// Len is the number of tickets in the pool.
func (m *Matcher) Len() int { return len(m.byID) }

// Tickets returns the tickets in the pool, in no particular order.
func (m *Matcher) Tickets() []*Ticket {
	out := make([]*Ticket, 0, len(m.byID))
	for _, e := range m.byID {
		out = append(out, e.t)
	}
	return out
}

// Has reports whether a ticket is in the pool.
func (m *Matcher) Has(id string) bool { _, ok := m.byID[id]; return ok }

// NextWake is the earliest time at which a Step could form a match that it could not form
// now because an expansion is still to come; ok is false when no expansion is pending. A
// loop may sleep until then when nothing new arrives.
func (m *Matcher) NextWake() (time.Time, bool) {
	if len(m.wake) == 0 {
		return time.Time{}, false
	}
	return m.wake[0].wakeAt, true
}

// Step forms every match it can at time now, in priority order, and removes the matched
// tickets from the pool.
func (m *Matcher) Step(now time.Time) []*Match {
	anchors := m.anchors(now)
	var out []*Match
	for _, a := range anchors {
		if _, ok := m.byID[a.t.ID]; !ok {
			continue // matched as a candidate earlier in this step
		}
		if a.stage < 0 && !a.t.Backfill {
			m.scheduleWake(a, now) // parked: nothing can match it before its next stage
			continue
		}
		if mt := m.tryAnchor(a, now); mt != nil {
			m.take(mt)
			out = append(out, mt)
			continue
		}
		m.scheduleWake(a, now)
	}
	return out
}

// anchors collects this step's anchors: new tickets, tickets whose expansions changed, and
// (when new tickets arrived) the waiting backfill tickets, in priority order.
func (m *Matcher) anchors(now time.Time) []*entry {
	out := m.fresh
	m.fresh = nil
	for len(m.wake) > 0 && !m.wake[0].wakeAt.After(now) {
		out = append(out, heap.Pop(&m.wake).(*entry))
	}
	if len(out) > 0 {
		for e := range m.backs {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	out = slices.DeleteFunc(out, func(e *entry) bool { return m.byID[e.t.ID] != e }) // removed since
	slices.SortFunc(out, m.priority)
	for _, e := range out {
		m.restage(e, now)
	}
	return out
}

// restage moves a ticket to the tree of the expansion stage its age has reached, or parks
// it outside the trees while it cannot meet that stage's rules even alone.
func (m *Matcher) restage(e *entry, now time.Time) {
	if e.t.Backfill {
		return
	}
	st := m.rs.stageAt(now.Sub(e.t.Start))
	if !m.plan.viable(&m.rs.stages[st], e.t) {
		st = -1
	}
	if st == e.stage {
		return
	}
	if e.stage >= 0 {
		m.trees[e.stage].Delete(e)
	}
	if e.stage = st; st >= 0 {
		m.trees[st].ReplaceOrInsert(e)
	}
}

// priority orders anchors: by backfillPriority, then oldest first.
func (m *Matcher) priority(a, b *entry) int {
	rank := func(e *entry) int {
		switch {
		case m.rs.Algorithm.BackfillPriority == PriorityHigh && e.t.Backfill:
			return 0
		case m.rs.Algorithm.BackfillPriority == PriorityLow && e.t.Backfill:
			return 2
		}
		return 1
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	if c := a.t.Start.Compare(b.t.Start); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

// scheduleWake arranges for a ticket that did not match to be tried again when its next
// expansion stage begins.
func (m *Matcher) scheduleWake(e *entry, now time.Time) {
	next, ok := m.rs.nextStage(now.Sub(e.t.Start))
	if !ok || e.wakeIx >= 0 {
		return
	}
	e.wakeAt = e.t.Start.Add(next)
	heap.Push(&m.wake, e)
}

// take removes a match's tickets from the pool.
func (m *Matcher) take(mt *Match) {
	for _, t := range mt.Tickets {
		m.Remove(t.ID)
	}
}

// wakeHeap orders entries by wakeAt.
type wakeHeap []*entry

func (h wakeHeap) Len() int           { return len(h) }
func (h wakeHeap) Less(i, j int) bool { return h[i].wakeAt.Before(h[j].wakeAt) }
func (h wakeHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].wakeIx, h[j].wakeIx = i, j
}
func (h *wakeHeap) Push(x any) {
	e := x.(*entry)
	e.wakeIx = len(*h)
	*h = append(*h, e)
}
func (h *wakeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	e.wakeIx = -1
	return e
}
