package flexmatch

import "time"

// Ticket is a matchmaking request in the pool: one player or a party that must end up on
// one team, or a backfill request for a game session whose players already have teams.
type Ticket struct {
	// ID is the ticket ID; unique in the pool.
	ID string
	// Players are the ticket's players. For a backfill ticket they are the game session's
	// current players, each with Team set.
	Players []Player
	// Start is when the ticket entered matchmaking: its age drives expansions.
	Start time.Time
	// Backfill marks a backfill ticket.
	Backfill bool
}

// Player is a player of a ticket.
type Player struct {
	ID string
	// Attributes are the player's attribute values by name; Prepare fills in defaults.
	Attributes map[string]Value
	// Latency is the player's latency in milliseconds by Region (or location).
	Latency map[string]int
	// Team is the team of a backfill ticket's player (a team name as in a match, e.g.
	// "red" or "red_2"); empty otherwise.
	Team string
}

// Match is a match the matcher proposes: every rule of the rule set holds for it at
// ExpansionAge.
type Match struct {
	// Tickets are the matched tickets; a backfill ticket, if any, is first.
	Tickets []*Ticket
	// Teams are the match's teams, every team of the rule set once, in declaration order
	// (a definition with Quantity N gives N teams named <name>_1 ... <name>_N).
	Teams []MatchTeam
	// ExpansionAge is the age at which the rule set's expansions were applied to it (the
	// newest or oldest ticket's age, as the algorithm's expansionAgeSelection says).
	ExpansionAge time.Duration
	// Regions are the Regions where every player's latency meets every latency rule, best
	// first (lowest worst-player latency); empty when the rule set has no latency rule.
	Regions []string
	// Metrics count, per rule, how often it passed and failed while this match was formed
	// (the ruleEvaluationMetrics of a PotentialMatchCreated event).
	Metrics []RuleMetric
}

// MatchTeam is one team of a match.
type MatchTeam struct {
	// Name is the team's name in the match ("red", or "red_2" for a definition with
	// Quantity > 1).
	Name string
	// Definition is the index in RuleSet.Teams of the team's definition.
	Definition int
	// Players are the team's players.
	Players []MatchPlayer
}

// MatchPlayer is a player on a team, with the ticket that brought them.
type MatchPlayer struct {
	Ticket *Ticket
	Player *Player
}

// RuleMetric counts the evaluations of one rule.
type RuleMetric struct {
	Rule           string
	Passed, Failed int
}
