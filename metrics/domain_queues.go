package metrics

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// Queue metrics, per queue. Depth and wait are read at scrape time; placement outcomes are
// durable (counted in the store with the change).
var (
	queueDepth = desc("hoist_queue_depth", "Game session placements PENDING (QueueDepth).", queueLabel)
	queueWait  = desc("hoist_queue_average_wait_seconds", "Average time the PENDING placements have waited so far (AverageWaitTime).", queueLabel)
	// queueOutcomes maps placement event types to their counters.
	queueOutcomes = map[string]*prometheus.Desc{
		"PlacementFulfilled": desc("hoist_queue_placements_succeeded_total", "Placements FULFILLED (PlacementsSucceeded).", queueLabel),
		"PlacementCancelled": desc("hoist_queue_placements_cancelled_total", "Placements CANCELLED (PlacementsCanceled).", queueLabel),
		"PlacementTimedOut":  desc("hoist_queue_placements_timed_out_total", "Placements TIMED_OUT (PlacementsTimedOut).", queueLabel),
		"PlacementFailed":    desc("hoist_queue_placements_failed_total", "Placements FAILED (PlacementsFailed).", queueLabel),
	}
)

// Matchmaking metrics, per configuration (and rule). Current tickets are read at scrape time;
// the rest is durable.
var (
	mmCurrentTickets = desc("hoist_matchmaking_current_tickets", "Tickets that have not ended, by status (CurrentTickets).", configLabel, "status")
	// mmEvents maps matchmaking event types to their counters.
	mmEvents = map[string]*prometheus.Desc{
		"PotentialMatchCreated": desc("hoist_matchmaking_matches_created_total", "Potential matches created (MatchesCreated).", configLabel),
		"MatchmakingSucceeded":  desc("hoist_matchmaking_matches_placed_total", "Matches placed in a game session (MatchesPlaced).", configLabel),
		"MatchmakingSearching":  desc("hoist_matchmaking_searching_events_total", "Tickets entering or re-entering SEARCHING (MatchmakingSearching events).", configLabel),
		"MatchmakingTimedOut":   desc("hoist_matchmaking_tickets_timed_out_total", "Tickets TIMED_OUT (TicketsTimedOut).", configLabel),
		"MatchmakingCancelled":  desc("hoist_matchmaking_tickets_cancelled_total", "Tickets CANCELLED (no CloudWatch metric).", configLabel),
		"MatchmakingFailed":     desc("hoist_matchmaking_tickets_failed_total", "Tickets FAILED (TicketsFailed).", configLabel),
	}
	// mmAcceptances maps AcceptMatchCompleted outcomes to their counters.
	mmAcceptances = map[string]*prometheus.Desc{
		"Accepted": desc("hoist_matchmaking_matches_accepted_total", "Matches all players accepted (MatchesAccepted).", configLabel),
		"Rejected": desc("hoist_matchmaking_matches_rejected_total", "Matches a player rejected (MatchesRejected).", configLabel),
		"TimedOut": desc("hoist_matchmaking_match_acceptances_timed_out_total", "Matches not accepted in time (MatchAcceptancesTimedOut).", configLabel),
	}
	mmRulePassed  = desc("hoist_matchmaking_rule_evaluations_passed_total", "Rule evaluations that passed in potential matches (RuleEvaluationsPassed).", configLabel, "rule")
	mmRuleFailed  = desc("hoist_matchmaking_rule_evaluations_failed_total", "Rule evaluations that failed in potential matches (RuleEvaluationsFailed).", configLabel, "rule")
	mmTimeToMatch = desc("hoist_matchmaking_time_to_match_seconds", "Time from ticket start to potential match (TimeToMatch).", configLabel)
)

// FleetIQ metrics, per game server group.
var (
	gsServers     = desc("hoist_fleetiq_game_servers", "Game servers by state: available, claimed, utilized (AvailableGameServers, UtilizedGameServers).", groupLabel, "state")
	gsUtilizedPct = desc("hoist_fleetiq_utilized_game_servers_ratio", "Utilized over registered game servers (PercentUtilizedGameServers / 100).", groupLabel)
)

func (c *collector) collectQueues(ctx context.Context, ch chan<- prometheus.Metric) error {
	queues, err := c.src.QueueStats(ctx)
	if err != nil {
		return err
	}
	for _, q := range queues {
		gauge(ch, queueDepth, float64(q.Pending), q.Name)
		gauge(ch, queueWait, q.AverageWait.Seconds(), q.Name)
		for typ, d := range queueOutcomes {
			counter(ch, d, float64(q.Ended[typ]), q.Name)
		}
	}
	return nil
}

func (c *collector) collectMatchmaking(ctx context.Context, ch chan<- prometheus.Metric) error {
	configs, err := c.src.MatchmakingStats(ctx)
	if err != nil {
		return err
	}
	for _, m := range configs {
		for _, st := range []string{"QUEUED", "SEARCHING", "REQUIRES_ACCEPTANCE", "PLACING"} {
			gauge(ch, mmCurrentTickets, float64(m.Tickets[st]), m.Name, st)
		}
		for typ, d := range mmEvents {
			counter(ch, d, float64(m.Events[typ]), m.Name)
		}
		for outcome, d := range mmAcceptances {
			counter(ch, d, float64(m.Acceptances[outcome]), m.Name)
		}
		for rule, n := range m.Rules {
			counter(ch, mmRulePassed, float64(n.Passed), m.Name, rule)
			counter(ch, mmRuleFailed, float64(n.Failed), m.Name, rule)
		}
		h := m.TimeToMatch
		buckets := make(map[float64]uint64, len(h.Bounds))
		for i, b := range h.Bounds {
			buckets[b] = uint64(h.Buckets[i])
		}
		ch <- prometheus.MustNewConstHistogram(mmTimeToMatch, uint64(h.Count), h.Sum, buckets, m.Name)
	}
	return nil
}

func (c *collector) collectGameServers(ctx context.Context, ch chan<- prometheus.Metric) error {
	groups, err := c.src.GameServerGroupStats(ctx)
	if err != nil {
		return err
	}
	for _, g := range groups {
		gauge(ch, gsServers, float64(g.Available), g.Name, "available")
		gauge(ch, gsServers, float64(g.Claimed), g.Name, "claimed")
		gauge(ch, gsServers, float64(g.Utilized), g.Name, "utilized")
		gauge(ch, gsUtilizedPct, ratio(g.Utilized, g.Registered), g.Name)
	}
	return nil
}
