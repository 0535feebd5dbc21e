package gamelift

import (
	"cmp"
	"math"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// candidate is one (fleet, location) pair a placement may use, with what orders it.
type candidate struct {
	fleet    *fleetDoc
	location string
	dest     int     // index of the queue destination it came from
	latency  float64 // average player latency there; +Inf when some player reported none
}

// priority keys of PriorityConfiguration.PriorityOrder.
const (
	priorityLatency     = string(api.PriorityTypeLatency)
	priorityCost        = string(api.PriorityTypeCost)
	priorityDestination = string(api.PriorityTypeDestination)
	priorityLocation    = string(api.PriorityTypeLocation)
)

// defaultPriority is GameLift's default prioritisation (latency, cost, destination order,
// location); without latency data the latency key ranks every candidate alike.
var defaultPriority = []string{priorityLatency, priorityCost, priorityDestination, priorityLocation}

// candidates lists the (fleet, location) pairs placement p may use now, best first: every
// location of every ACTIVE fleet among the queue's destinations (aliases resolved; TERMINAL
// aliases and missing fleets skipped), minus those outside the queue's filter, outside the
// override's locations while it applies, or breaking the latency policy in force.
func (s *Service) candidates(tx store.Tx, q *queueDoc, p *placementDoc, now int64) ([]candidate, error) {
	locs := p.locationOrder(q)
	only := p.overrideOnly()
	capMillis, capped := p.latencyCap(q, now)
	var out []candidate
	for i, dest := range q.Destinations {
		f, err := s.destinationFleet(tx, dest)
		if err != nil || f == nil || f.Status != fleetActive {
			if err != nil {
				return nil, err
			}
			continue
		}
		for _, loc := range s.placementLocations(f) {
			if (len(q.AllowedLocations) > 0 && !slices.Contains(q.AllowedLocations, loc)) || (only && !slices.Contains(locs, loc)) {
				continue
			}
			c := candidate{fleet: f, location: loc, dest: i, latency: p.averageLatency(loc)}
			if capped && p.worstLatency(loc) > float64(capMillis) {
				continue
			}
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, p.compare(q, locs))
	return out, nil
}

// destinationFleet reads the fleet a queue destination (fleet or alias ARN) names now; nil
// when there is none to use.
func (s *Service) destinationFleet(tx store.Tx, arn string) (*fleetDoc, error) {
	a, ok := parseARN(arn)
	if !ok {
		return nil, nil
	}
	fleetID := a.ID
	if a.ResourceType == arnAlias {
		var al aliasDoc
		if _, err := getDoc(tx, kindAlias, a.ID, &al, func() error { return errNoRecord }); err != nil {
			return nil, ignoreNoRecord(err)
		}
		if al.Route.Type == routeTerminal {
			return nil, nil
		}
		fleetID = al.Route.FleetID
	}
	var f fleetDoc
	if _, err := getDoc(tx, kindFleet, fleetID, &f, func() error { return errNoRecord }); err != nil {
		return nil, ignoreNoRecord(err)
	}
	return &f, nil
}

// ignoreNoRecord turns errNoRecord into nil.
func ignoreNoRecord(err error) error {
	if err == errNoRecord {
		return nil
	}
	return err
}

// placementLocations lists where a fleet hosts game sessions: an Anywhere fleet's custom
// locations; the home Region and the remote locations of any other fleet.
func (s *Service) placementLocations(f *fleetDoc) []string {
	if f.ComputeType == string(api.ComputeTypeAnywhere) {
		return f.Locations
	}
	out := []string{s.region}
	for _, l := range f.Locations {
		if l != s.region {
			out = append(out, l)
		}
	}
	return out
}

// locationOrder is the LocationOrder in force: the override's, else the queue's.
func (p *placementDoc) locationOrder(q *queueDoc) []string {
	if p.Override != nil {
		return p.Override.Locations
	}
	return q.LocationOrder
}

// overrideOnly reports whether only the override's locations may be used now: always with
// PlacementFallbackStrategy NONE, and for the first pass with DEFAULT_AFTER_SINGLE_PASS.
func (p *placementDoc) overrideOnly() bool {
	if p.Override == nil {
		return false
	}
	return p.Override.Fallback == string(api.PlacementFallbackStrategyNone) || p.Passes == 0
}

// latencyCap is the PlayerLatencyPolicy in force now: policies apply from the lowest cap up,
// each for its duration, one without a duration until the placement times out. Policies
// apply only to requests with latency data.
func (p *placementDoc) latencyCap(q *queueDoc, now int64) (int32, bool) {
	if len(p.Latencies) == 0 || len(q.Policies) == 0 {
		return 0, false
	}
	pols := slices.Clone(q.Policies)
	slices.SortStableFunc(pols, func(a, b latencyPolicyDoc) int { return cmp.Compare(a.MaxMillis, b.MaxMillis) })
	elapsed, until := now-p.Start, int64(0)
	for _, pol := range pols {
		if pol.Duration == nil {
			return pol.MaxMillis, true
		}
		until += int64(*pol.Duration) * 1000
		if elapsed < until {
			return pol.MaxMillis, true
		}
	}
	return 0, false
}

// players lists the players that reported latencies, each once.
func (p *placementDoc) players() []string {
	var out []string
	for _, l := range p.Latencies {
		if !slices.Contains(out, l.Player) {
			out = append(out, l.Player)
		}
	}
	return out
}

// playerLatency returns a player's latency to loc; +Inf when the player reported none for
// it (Hoist's reading: a location a player has no latency for is as far as can be, so a
// latency policy excludes it and it ranks after every location with full data).
func (p *placementDoc) playerLatency(player, loc string) float64 {
	for _, l := range p.Latencies {
		if l.Player == player && l.Region == loc {
			return float64(l.Millis)
		}
	}
	return math.Inf(1)
}

// averageLatency is the players' average latency to loc (0 without latency data).
func (p *placementDoc) averageLatency(loc string) float64 {
	players := p.players()
	if len(players) == 0 {
		return 0
	}
	sum := 0.0
	for _, pl := range players {
		sum += p.playerLatency(pl, loc)
	}
	return sum / float64(len(players))
}

// worstLatency is the highest latency any player has to loc.
func (p *placementDoc) worstLatency(loc string) float64 {
	worst := 0.0
	for _, pl := range p.players() {
		worst = max(worst, p.playerLatency(pl, loc))
	}
	return worst
}

// compare orders candidates by the queue's PriorityOrder, then the keys it leaves out in
// the default order. LOCATION ranks the locations of locs first, in that order, then the
// others alphabetically. COST ranks every candidate alike: Hoist's instances all cost the
// same.
func (p *placementDoc) compare(q *queueDoc, locs []string) func(a, b candidate) int {
	order := slices.Clone(q.PriorityOrder)
	for _, k := range defaultPriority {
		if !slices.Contains(order, k) {
			order = append(order, k)
		}
	}
	rank := func(loc string) int {
		if i := slices.Index(locs, loc); i >= 0 {
			return i
		}
		return len(locs)
	}
	return func(a, b candidate) int {
		for _, k := range order {
			var c int
			switch k {
			case priorityLatency:
				c = cmp.Compare(a.latency, b.latency)
			case priorityDestination:
				c = cmp.Compare(a.dest, b.dest)
			case priorityLocation:
				c = cmp.Or(cmp.Compare(rank(a.location), rank(b.location)), cmp.Compare(a.location, b.location))
			}
			if c != 0 {
				return c
			}
		}
		return 0
	}
}
