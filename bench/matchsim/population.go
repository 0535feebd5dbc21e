package matchsim

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// Ticket is one matchmaking request of a population: a player or a party, and when it
// arrives (an offset from the start of the run).
type Ticket struct {
	ID      string
	Arrival time.Duration
	Players []flexmatch.Player
}

// Population is the tickets of a run, in arrival order.
type Population struct {
	Tickets []Ticket
}

// Players is the number of players over all tickets.
func (p *Population) Players() int {
	n := 0
	for i := range p.Tickets {
		n += len(p.Tickets[i].Players)
	}
	return n
}

// prepare checks every player against the rule set and fills in its defaults, then orders
// the tickets by arrival (stable, so equal arrivals keep their order).
func (p *Population) prepare(rs *flexmatch.RuleSet) error {
	seen := map[string]bool{}
	for i := range p.Tickets {
		t := &p.Tickets[i]
		if seen[t.ID] {
			return fmt.Errorf("ticket %s appears twice", t.ID)
		}
		seen[t.ID] = true
		for j := range t.Players {
			if err := rs.Prepare(&t.Players[j]); err != nil {
				return err
			}
		}
	}
	slices.SortStableFunc(p.Tickets, func(a, b Ticket) int { return cmp.Compare(a.Arrival, b.Arrival) })
	return nil
}

// Named is a distribution for a named attribute or Region (--attr skill=normal:1500:300).
type Named struct {
	Name string
	Dist Dist
}

// GenSpec describes a generated population.
type GenSpec struct {
	// Players is how many players to generate; the last party is cut short to fit.
	Players int
	// Rate is the steady arrival rate in tickets per second; 0 makes every ticket arrive at 0.
	Rate float64
	// Attrs are the attribute distributions; a declared attribute without one takes its
	// default.
	Attrs []Named
	// Latency are the per-Region latency distributions, in milliseconds.
	Latency []Named
	// Party is the party size distribution; empty means solo players.
	Party PartyDist
	// Seed makes the population deterministic.
	Seed uint64
}

// Generate makes a population from spec, checked against the rule set: the same spec and
// seed always give the same population.
func Generate(rs *flexmatch.RuleSet, spec GenSpec) (*Population, error) {
	types, err := attrTypes(rs, spec.Attrs)
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(spec.Seed, 0x6d617463687369d))
	pop := &Population{}
	for made := 0; made < spec.Players; {
		n := min(spec.Party.draw(r), spec.Players-made)
		k := len(pop.Tickets)
		t := Ticket{ID: fmt.Sprintf("t%07d", k), Arrival: arrivalAt(k, spec.Rate)}
		for range n {
			made++
			t.Players = append(t.Players, genPlayer(r, fmt.Sprintf("p%07d", made), spec, types))
		}
		pop.Tickets = append(pop.Tickets, t)
	}
	return pop, pop.prepare(rs)
}

// arrivalAt is the arrival offset of the k-th ticket at a steady rate.
func arrivalAt(k int, rate float64) time.Duration {
	if rate <= 0 {
		return 0
	}
	return time.Duration(math.Round(float64(k) / rate * float64(time.Second)))
}

// attrTypes resolves the type of each attribute distribution: the rule set's declaration,
// else the distribution's natural type.
func attrTypes(rs *flexmatch.RuleSet, attrs []Named) ([]flexmatch.AttrType, error) {
	out := make([]flexmatch.AttrType, len(attrs))
	for i, a := range attrs {
		out[i] = a.Dist.naturalType()
		if t, ok := declaredType(rs, a.Name); ok {
			out[i] = t
		}
		if !a.Dist.fits(out[i]) {
			return nil, fmt.Errorf("--attr %s: a %s distribution cannot give a %s attribute", a.Name, a.Dist.Kind, out[i])
		}
	}
	return out, nil
}

// declaredType is the type the rule set declares for an attribute.
func declaredType(rs *flexmatch.RuleSet, name string) (flexmatch.AttrType, bool) {
	for _, a := range rs.Attributes {
		if a.Name == name {
			return a.Type, true
		}
	}
	return "", false
}

// genPlayer draws one player's attributes and latencies.
func genPlayer(r *rand.Rand, id string, spec GenSpec, types []flexmatch.AttrType) flexmatch.Player {
	p := flexmatch.Player{ID: id, Attributes: map[string]flexmatch.Value{}}
	for i, a := range spec.Attrs {
		p.Attributes[a.Name] = a.Dist.value(r, types[i])
	}
	if len(spec.Latency) > 0 {
		p.Latency = map[string]int{}
	}
	for _, l := range spec.Latency {
		p.Latency[l.Name] = l.Dist.latency(r)
	}
	return p
}
