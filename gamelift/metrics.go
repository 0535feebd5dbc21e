package gamelift

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// This file is the read side of the metrics endpoint (docs/metrics.md): plain snapshots of the
// domain taken at scrape time, and the durable tallies of what happened (metrics_tally.go).

// DefaultMetricGroup is the metric group of a fleet created without MetricGroups.
const DefaultMetricGroup = "default"

// metricGroups returns a fleet's metric groups, DefaultMetricGroup when it names none.
func metricGroups(groups []string) []string {
	if len(groups) == 0 {
		return []string{DefaultMetricGroup}
	}
	return groups
}

// FleetStats is one location of one fleet: the CloudWatch fleet metrics' raw counts.
type FleetStats struct {
	FleetID, Location, MetricGroup, ComputeType string
	// Game sessions ACTIVE and ACTIVATING; available: ACTIVE processes hosting none.
	ActiveGameSessions, ActivatingGameSessions, AvailableGameSessions int
	// Player sessions (RESERVED or ACTIVE) of ACTIVE game sessions, the free slots of those
	// that accept players, and their maximum.
	CurrentPlayerSessions, AvailablePlayerSessions, MaximumPlayerSessions int
	// Processes counts the live server processes by status (INITIALIZING, ACTIVE,
	// TERMINATING); HealthyProcesses are ACTIVE ones whose last health report was healthy.
	Processes        map[string]int
	HealthyProcesses int
	// Instances are DescribeFleetCapacity's counts; nil for fleets without instances.
	Instances *InstanceStats
}

// InstanceStats are a managed fleet location's instance counts (EC2InstanceCounts).
type InstanceStats struct {
	Desired, Minimum, Maximum, Pending, Active, Idle, Terminating int
}

// FleetTally is what has happened on a fleet since it was created, counted durably.
type FleetTally struct {
	FleetID, MetricGroup string
	// Activations and Terminations count server processes that became ACTIVE and that ended.
	Activations, Terminations int64
	// Events counts the fleet's events by event code.
	Events map[string]int64
}

// AbnormalTerminationCodes are the fleet event codes counted as abnormal server process
// terminations (CloudWatch ServerProcessAbnormalTerminations).
var AbnormalTerminationCodes = []api.EventCode{
	api.EventCodeServerProcessCrashed, api.EventCodeServerProcessTerminatedUnhealthy,
	api.EventCodeServerProcessForceTerminated, api.EventCodeServerProcessProcessExitTimeout,
	api.EventCodeServerProcessSdkInitializationTimeout, api.EventCodeServerProcessProcessReadyTimeout,
	api.EventCodeServerProcessInvalidPath, api.EventCodeServerProcessSdkInitializationFailed,
}

// liveFleets returns the fleets that are not TERMINATED.
func (s *Service) liveFleets(ctx context.Context) ([]*fleetDoc, error) {
	var out []*fleetDoc
	err := s.view(ctx, func(tx store.Tx) error {
		out = out[:0]
		return eachRecord(tx, kindFleet, func(_ *store.Record, d *fleetDoc) {
			if d.Status != fleetTerminated {
				out = append(out, d)
			}
		})
	})
	return out, err
}

// FleetStats returns the stats of every location of every live fleet, as the store holds
// them now.
func (s *Service) FleetStats(ctx context.Context) ([]FleetStats, error) {
	fleets, err := s.liveFleets(ctx)
	if err != nil {
		return nil, err
	}
	var out []FleetStats
	for _, f := range fleets {
		st, err := s.fleetStats(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, st...)
	}
	return out, nil
}

// fleetStats returns the stats of each location of one fleet.
func (s *Service) fleetStats(ctx context.Context, f *fleetDoc) ([]FleetStats, error) {
	locs := append([]string{s.region}, f.Locations...)
	out := make([]FleetStats, len(locs))
	at := make(map[string]*FleetStats, len(locs))
	for i, loc := range locs {
		out[i] = FleetStats{FleetID: f.ID, Location: loc, MetricGroup: metricGroups(f.MetricGroups)[0],
			ComputeType: f.ComputeType, Processes: map[string]int{}}
		at[loc] = &out[i]
	}
	active, err := s.countProcessStats(ctx, f.ID, at)
	if err != nil {
		return nil, err
	}
	if err := s.countSessionStats(ctx, f.ID, at, active); err != nil {
		return nil, err
	}
	if f.ComputeType != string(api.ComputeTypeEc2) {
		return out, nil
	}
	for i := range out {
		fc, err := s.fleetCapacity(ctx, f.ID, out[i].Location)
		if err != nil {
			return nil, err
		}
		out[i].Instances = instanceStats(fc.InstanceCounts)
	}
	return out, nil
}

func instanceStats(c *api.EC2InstanceCounts) *InstanceStats {
	n := func(p *int32) int { return int(api.Deref(p)) }
	return &InstanceStats{Desired: n(c.DESIRED), Minimum: n(c.MINIMUM), Maximum: n(c.MAXIMUM),
		Pending: n(c.PENDING), Active: n(c.ACTIVE), Idle: n(c.IDLE), Terminating: n(c.TERMINATING)}
}

// countProcessStats counts a fleet's live processes by location (that of their compute) and
// status, and returns the location of each ACTIVE process, by process ID.
func (s *Service) countProcessStats(ctx context.Context, fleetID string, at map[string]*FleetStats) (map[string]string, error) {
	active := map[string]string{}
	err := s.view(ctx, func(tx store.Tx) error {
		clear(active)
		for _, st := range at {
			clear(st.Processes)
			st.HealthyProcesses = 0
		}
		where := map[string]string{} // compute -> location
		if err := eachChild(tx, kindCompute, fleetID, func(_ *store.Record, c *computeDoc) error { where[c.Name] = c.Location; return nil }); err != nil {
			return err
		}
		return eachChild(tx, kindProcess, fleetID, func(_ *store.Record, p *processDoc) error {
			st := at[where[p.Compute]]
			if st == nil || p.Status == processTerminated {
				return nil
			}
			st.Processes[p.Status]++
			if p.Status == processActive {
				active[p.ProcessID] = st.Location
				if p.Unhealthy == 0 {
					st.HealthyProcesses++
				}
			}
			return nil
		})
	})
	return active, err
}

// countSessionStats counts a fleet's game sessions and player sessions by location, from the
// session cache that DescribeFleetUtilization and SearchGameSessions use. active holds the
// location of each ACTIVE process; those hosting no live session are available.
func (s *Service) countSessionStats(ctx context.Context, fleetID string, at map[string]*FleetStats, active map[string]string) error {
	idx, err := s.fleetSessions(ctx, fleetID)
	if err != nil {
		return err
	}
	busy := map[string]bool{}
	for _, e := range idx.entries {
		g, st := e.doc, at[e.doc.Location]
		if st == nil || !g.live() {
			continue
		}
		busy[g.ProcessID] = true
		if g.Status == gsActivating {
			st.ActivatingGameSessions++
			continue
		}
		st.ActiveGameSessions++
		st.CurrentPlayerSessions += int(g.Players)
		st.MaximumPlayerSessions += int(g.Max)
		if g.Policy == string(api.PlayerSessionCreationPolicyAcceptAll) {
			st.AvailablePlayerSessions += int(max(g.Max-g.Players, 0))
		}
	}
	for pid, loc := range active {
		if !busy[pid] {
			at[loc].AvailableGameSessions++
		}
	}
	return nil
}

// FleetTallies returns what has happened on each live fleet, counted durably.
func (s *Service) FleetTallies(ctx context.Context) ([]FleetTally, error) {
	fleets, err := s.liveFleets(ctx)
	if err != nil {
		return nil, err
	}
	tallies, err := s.tallies(ctx, tallyFleet)
	if err != nil {
		return nil, err
	}
	out := make([]FleetTally, 0, len(fleets))
	for _, f := range fleets {
		ft := FleetTally{FleetID: f.ID, MetricGroup: metricGroups(f.MetricGroups)[0], Events: map[string]int64{}}
		if t := tallies[f.ID]; t != nil {
			for k, n := range t.Counts {
				switch k {
				case tallyActivations:
					ft.Activations = n
				case tallyTerminations:
					ft.Terminations = n
				default:
					ft.Events[k] = n
				}
			}
		}
		out = append(out, ft)
	}
	return out, nil
}

// QueueStats is one game session queue: its placements waiting now and those that ended.
type QueueStats struct {
	Name string
	// Pending is the number of PENDING placements (QueueDepth); AverageWait their average
	// time waiting so far (AverageWaitTime).
	Pending     int
	AverageWait time.Duration
	// Ended counts placements that ended, by event type (PlacementFulfilled,
	// PlacementCancelled, PlacementTimedOut, PlacementFailed), counted durably.
	Ended map[string]int64
}

// QueueStats returns the stats of every game session queue.
func (s *Service) QueueStats(ctx context.Context) ([]QueueStats, error) {
	byName := map[string]*QueueStats{}
	var names []string
	waited := map[string]time.Duration{}
	now := s.clock.Now()
	err := s.view(ctx, func(tx store.Tx) error {
		clear(byName)
		clear(waited)
		names = names[:0]
		if err := eachRecord(tx, kindQueue, func(_ *store.Record, q *queueDoc) {
			byName[q.Name], names = &QueueStats{Name: q.Name, Ended: map[string]int64{}}, append(names, q.Name)
		}); err != nil {
			return err
		}
		return eachPendingPlacement(tx, func(p *placementDoc) {
			if q := byName[p.Queue]; q != nil {
				q.Pending++
				waited[p.Queue] += now.Sub(time.UnixMilli(p.Start))
			}
		})
	})
	if err != nil {
		return nil, err
	}
	tallies, err := s.tallies(ctx, tallyQueue)
	if err != nil {
		return nil, err
	}
	out := make([]QueueStats, 0, len(names))
	for _, n := range names {
		q := byName[n]
		if q.Pending > 0 {
			q.AverageWait = waited[n] / time.Duration(q.Pending)
		}
		if t := tallies[n]; t != nil {
			q.Ended = t.Counts
		}
		out = append(out, *q)
	}
	return out, nil
}

// eachPendingPlacement calls fn for every PENDING placement (those the placement loop waits
// on).
func eachPendingPlacement(tx store.Tx, fn func(*placementDoc)) error {
	waits, err := tx.List(kindPlacementWait, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, w := range waits {
		var p placementDoc
		_, err := getDoc(tx, kindPlacement, w.ID, &p, func() error { return errNoRecord })
		if err == errNoRecord || (err == nil && p.Status != placementPending) {
			continue
		}
		if err != nil {
			return err
		}
		fn(&p)
	}
	return nil
}

// MatchmakingStats is one matchmaking configuration: its tickets now and what happened.
type MatchmakingStats struct {
	Name string
	// Tickets counts the tickets that have not ended, by status (CurrentTickets).
	Tickets map[string]int
	// Events counts matchmaking events by type (MatchmakingSearching, PotentialMatchCreated,
	// AcceptMatchCompleted, MatchmakingSucceeded, ...), counted durably.
	Events map[string]int64
	// Acceptances counts AcceptMatchCompleted events by outcome (Accepted, Rejected,
	// TimedOut).
	Acceptances map[string]int64
	// Rules counts rule evaluations of potential matches, by rule.
	Rules map[string]RuleTally
	// TimeToMatch is the histogram of the tickets' times from start to potential match.
	TimeToMatch Histogram
}

// RuleTally is a rule's evaluation counts.
type RuleTally struct{ Passed, Failed int64 }

// Histogram is a cumulative histogram: Buckets[i] counts observations <= Bounds[i] (seconds).
type Histogram struct {
	Count   int64
	Sum     float64
	Bounds  []float64
	Buckets []int64
}

// MatchmakingStats returns the stats of every matchmaking configuration.
func (s *Service) MatchmakingStats(ctx context.Context) ([]MatchmakingStats, error) {
	var out []MatchmakingStats
	err := s.view(ctx, func(tx store.Tx) error {
		out = out[:0]
		return eachRecord(tx, kindMatchConfig, func(_ *store.Record, c *matchConfigDoc) {
			out = append(out, MatchmakingStats{Name: c.Name, Tickets: map[string]int{}})
		})
	})
	if err != nil {
		return nil, err
	}
	tallies, err := s.tallies(ctx, tallyMatchmaking)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if err := s.countTickets(ctx, &out[i]); err != nil {
			return nil, err
		}
		out[i].readTally(tallies[out[i].Name])
	}
	return out, nil
}

// countTickets counts a configuration's tickets that have not ended, by status.
func (s *Service) countTickets(ctx context.Context, m *MatchmakingStats) error {
	return s.view(ctx, func(tx store.Tx) error {
		clear(m.Tickets)
		return eachChild(tx, kindMatchTicket, m.Name, func(_ *store.Record, t *ticketStatus) error {
			switch api.MatchmakingConfigurationStatus(t.Status) {
			case api.MatchmakingConfigurationStatusCompleted, api.MatchmakingConfigurationStatusFailed,
				api.MatchmakingConfigurationStatusCancelled, api.MatchmakingConfigurationStatusTimedOut:
			default:
				m.Tickets[t.Status]++
			}
			return nil
		})
	})
}

// readTally fills the durable counts of m from its configuration's tally (nil: none yet).
func (m *MatchmakingStats) readTally(t *tallyDoc) {
	m.Events, m.Acceptances, m.Rules = map[string]int64{}, map[string]int64{}, map[string]RuleTally{}
	m.TimeToMatch = Histogram{Bounds: TimeToMatchBuckets, Buckets: make([]int64, len(TimeToMatchBuckets))}
	if t == nil {
		return
	}
	for k, n := range t.Counts {
		m.count(k, n)
	}
	m.TimeToMatch.Sum = t.Sums[tallyTimeToMatch]
	for i, b := range TimeToMatchBuckets {
		m.TimeToMatch.Buckets[i] = t.Counts[tallyTimeToMatchBucket+strconv.FormatFloat(b, 'g', -1, 64)]
	}
}

// count sorts one tally key of a configuration into m.
func (m *MatchmakingStats) count(k string, n int64) {
	switch {
	case k == tallyTimeToMatch:
		m.TimeToMatch.Count = n
	case strings.HasPrefix(k, tallyTimeToMatchBucket):
	case strings.HasPrefix(k, "acceptance_"):
		m.Acceptances[strings.TrimPrefix(k, "acceptance_")] = n
	case strings.HasPrefix(k, "rule_passed/"):
		r := strings.TrimPrefix(k, "rule_passed/")
		m.Rules[r] = RuleTally{Passed: n, Failed: m.Rules[r].Failed}
	case strings.HasPrefix(k, "rule_failed/"):
		r := strings.TrimPrefix(k, "rule_failed/")
		m.Rules[r] = RuleTally{Passed: m.Rules[r].Passed, Failed: n}
	default:
		m.Events[k] = n
	}
}

// GameServerGroupStats is one FleetIQ game server group's game servers now.
type GameServerGroupStats struct {
	Name string
	// Registered game servers; Utilized those marked UTILIZED; Claimed those claimed now;
	// Available those neither.
	Registered, Utilized, Claimed, Available int
}

// GameServerGroupStats returns the game server counts of every game server group.
func (s *Service) GameServerGroupStats(ctx context.Context) ([]GameServerGroupStats, error) {
	var names []string
	err := s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServerGroup, store.ListOptions{})
		names = names[:0]
		for _, r := range recs {
			names = append(names, r.ID)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([]GameServerGroupStats, len(names))
	now := s.nowMillis()
	for i, n := range names {
		out[i].Name = n
		if err := s.countGameServers(ctx, &out[i], now); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// countGameServers counts the game servers of one group.
func (s *Service) countGameServers(ctx context.Context, g *GameServerGroupStats, now int64) error {
	return s.view(ctx, func(tx store.Tx) error {
		g.Registered, g.Utilized, g.Claimed, g.Available = 0, 0, 0, 0
		return eachChild(tx, kindGameServer, g.Name, func(_ *store.Record, d *serverDoc) error {
			g.Registered++
			switch {
			case d.Utilized:
				g.Utilized++
			case d.claimedAt(now):
				g.Claimed++
			default:
				g.Available++
			}
			return nil
		})
	})
}
