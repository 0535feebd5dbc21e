package gamelift

import (
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/store"
)

// FlexMatch events ("GameLift Matchmaking Event"), recorded in the transaction of the ticket
// change they report and delivered like every event (outbox.go) to the configuration's
// NotificationTarget.

// matchDetailType is the detail-type of matchmaking events.
const matchDetailType = "GameLift Matchmaking Event"

// Matchmaking event types.
const (
	evSearching       = "MatchmakingSearching"
	evPotentialMatch  = "PotentialMatchCreated"
	evAcceptMatch     = "AcceptMatch"
	evAcceptCompleted = "AcceptMatchCompleted"
	evSucceeded       = "MatchmakingSucceeded"
	evTimedOut        = "MatchmakingTimedOut"
	evCancelled       = "MatchmakingCancelled"
	evFailed          = "MatchmakingFailed"
)

// matchDetail is the detail of a matchmaking event; each type fills its own fields.
type matchDetail struct {
	Type                  string         `json:"type"`
	Tickets               []ticketDetail `json:"tickets"`
	EstimatedWaitMillis   any            `json:"estimatedWaitMillis,omitempty"`
	AcceptanceTimeout     int32          `json:"acceptanceTimeout,omitempty"`
	AcceptanceRequired    *bool          `json:"acceptanceRequired,omitempty"`
	RuleEvaluationMetrics []ruleMetric   `json:"ruleEvaluationMetrics,omitempty"`
	Acceptance            string         `json:"acceptance,omitempty"`
	Reason                string         `json:"reason,omitempty"`
	Message               string         `json:"message,omitempty"`
	MatchID               string         `json:"matchId,omitempty"`
	GameSessionInfo       sessionInfo    `json:"gameSessionInfo"`
	CustomEventData       string         `json:"customEventData,omitempty"`
}

// ticketDetail is one ticket of an event.
type ticketDetail struct {
	TicketID  string         `json:"ticketId"`
	StartTime string         `json:"startTime"`
	Players   []playerDetail `json:"players"`
}

// playerDetail is one player of an event.
type playerDetail struct {
	PlayerID        string `json:"playerId"`
	Team            string `json:"team,omitempty"`
	PlayerSessionID string `json:"playerSessionId,omitempty"`
	Accepted        *bool  `json:"accepted,omitempty"`
}

// sessionInfo is an event's gameSessionInfo.
type sessionInfo struct {
	Players        []playerDetail `json:"players"`
	GameSessionArn string         `json:"gameSessionArn,omitempty"`
	IPAddress      string         `json:"ipAddress,omitempty"`
	Port           int            `json:"port,omitempty"`
}

// ruleMetric is one rule's evaluation counts.
type ruleMetric struct {
	RuleName    string `json:"ruleName"`
	PassedCount int    `json:"passedCount"`
	FailedCount int    `json:"failedCount"`
}

// matchEvent records an event about tickets, in tx. md may be nil (a ticket outside a
// match); fill completes the type's own fields.
func (s *Service) matchEvent(tx store.Tx, cfg *matchConfigDoc, typ string, ts []*ticketDoc, md *matchDoc, fill func(*matchDetail)) error {
	d := &matchDetail{Type: typ, CustomEventData: cfg.CustomEventData, GameSessionInfo: sessionInfo{Players: []playerDetail{}}}
	for _, t := range ts {
		td := ticketDetail{TicketID: t.ID, StartTime: eventTime(t.Start), Players: []playerDetail{}}
		for _, p := range t.Players {
			pd := playerDetail{PlayerID: p.ID, Team: p.Team}
			if md != nil {
				pd.Accepted = md.answer(p.ID, typ)
			}
			pd.PlayerSessionID = t.Conn.session(p.ID)
			td.Players = append(td.Players, pd)
			d.GameSessionInfo.Players = append(d.GameSessionInfo.Players, pd)
		}
		d.Tickets = append(d.Tickets, td)
	}
	if md != nil {
		d.MatchID = md.ID
	}
	if len(ts) > 0 && ts[0].Conn != nil {
		c := ts[0].Conn
		d.GameSessionInfo.GameSessionArn, d.GameSessionInfo.IPAddress, d.GameSessionInfo.Port = c.ARN, c.IP, c.Port
	}
	if fill != nil {
		fill(d)
	}
	return s.emitEvent(tx, cfg.NotificationTarget, matchDetailType, cfg.ARN, d)
}

// metrics converts the matcher's rule counts.
func metrics(ms []flexmatch.RuleMetric) []ruleMetric {
	out := make([]ruleMetric, 0, len(ms))
	for _, m := range ms {
		out = append(out, ruleMetric{RuleName: m.Rule, PassedCount: m.Passed, FailedCount: m.Failed})
	}
	return out
}

// session is the player session ID of a player in a connection, "" for none.
func (c *ticketConn) session(player string) string {
	if c == nil {
		return ""
	}
	for _, ps := range c.Sessions {
		if ps.Player == player {
			return ps.Session
		}
	}
	return ""
}

// ticketEndEvent records the event of a ticket that ended by itself (timed out, cancelled by
// request, failed).
func (s *Service) ticketEndEvent(tx store.Tx, t *ticketDoc) error {
	_, cfg, err := s.matchConfigTx(tx, t.Config)
	if err != nil {
		return err
	}
	typ, reason, msg := evCancelled, "Cancelled", "Cancelled by request."
	switch t.Status {
	case ticketTimedOut:
		typ, reason, msg = evTimedOut, "TimedOut", "Removed from matchmaking due to timing out."
	case ticketFailed:
		typ, reason, msg = evFailed, "UNEXPECTED_ERROR", t.Message
	}
	return s.matchEvent(tx, cfg, typ, []*ticketDoc{t}, nil, func(d *matchDetail) {
		d.Reason, d.Message = reason, msg
	})
}
