package gamelift

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/store"
)

// Matchmaking tickets (matchmaking_*.go). A ticket asks a matchmaking configuration for a
// match for one player or a party; a backfill ticket asks for players to fill an existing
// game session.
//
//	StartMatchmaking ──▶ QUEUED ──matchmaker takes it──▶ SEARCHING ──match──▶ REQUIRES_ACCEPTANCE
//	                                                        │                 │ all accept
//	                                                        │ no acceptance   ▼
//	                                                        └──────────────▶ PLACING ──session ACTIVE──▶ COMPLETED
//	   QUEUED/SEARCHING: StopMatchmaking ──▶ CANCELLED · RequestTimeoutSeconds ──▶ TIMED_OUT
//	   REQUIRES_ACCEPTANCE: a rejection or the acceptance timeout ──▶ CANCELLED (or back to SEARCHING)
//	   PLACING: queue placement times out ──▶ SEARCHING · it fails ──▶ FAILED
//
// STANDALONE configurations complete at the match, without a game session.
//
// Records:
//   - mmticket: ID = the ticket ID (never reusable), Parent = the configuration name.
//   - mmwait: ID = the ticket ID, for a QUEUED or SEARCHING ticket: the matchmaker's work
//     list, from which it rebuilds its pools after a restart or a leader change.
//   - mmplayer: ID = a player ID with an active ticket, naming the ticket.
//   - mmmatch: ID = a match ID, for a match waiting for acceptance or placement.
//   - mmended: ID = the ticket ID of an ended ticket, with its end time: the purge's list
//     (ended tickets are kept for the game session retention period).
const (
	kindMatchWait   = "mmwait"
	kindMatchPlayer = "mmplayer"
	kindMatch       = "mmmatch"
	kindMatchEnded  = "mmended"
)

// Ticket statuses, as stored and on the wire.
const (
	ticketQueued     = string(api.MatchmakingConfigurationStatusQueued)
	ticketSearching  = string(api.MatchmakingConfigurationStatusSearching)
	ticketAccepting  = string(api.MatchmakingConfigurationStatusRequiresAcceptance)
	ticketPlacing    = string(api.MatchmakingConfigurationStatusPlacing)
	ticketCompleted  = string(api.MatchmakingConfigurationStatusCompleted)
	ticketFailed     = string(api.MatchmakingConfigurationStatusFailed)
	ticketCancelled  = string(api.MatchmakingConfigurationStatusCancelled)
	ticketTimedOut   = string(api.MatchmakingConfigurationStatusTimedOut)
	maxTicketPlayers = 10  // StartMatchmaking's documented limit
	maxBackfillers   = 199 // StartMatchBackfill's: everyone in a 200-player session but one slot
	maxDescribeIDs   = 10  // DescribeMatchmaking's documented limit
)

// ticketDoc is a matchmaking ticket as stored. Times are Unix milliseconds.
type ticketDoc struct {
	ID        string         `json:"id"`
	Config    string         `json:"config"`
	ConfigARN string         `json:"configArn"`
	Status    string         `json:"status"`
	Reason    string         `json:"reason,omitempty"`
	Message   string         `json:"message,omitempty"`
	Start     int64          `json:"start"`
	End       int64          `json:"end,omitempty"`
	Deadline  int64          `json:"deadline"`
	Estimate  int32          `json:"estimate,omitempty"`
	Players   []ticketPlayer `json:"players"`
	// Backfill marks a backfill ticket for game session Session (empty in STANDALONE mode).
	Backfill bool   `json:"backfill,omitempty"`
	Session  string `json:"session,omitempty"`
	// Match is the ID of the match the ticket is in, while it is in one.
	Match string      `json:"match,omitempty"`
	Conn  *ticketConn `json:"conn,omitempty"`
}

// ticketPlayer is one player of a ticket.
type ticketPlayer struct {
	ID      string                        `json:"id"`
	Attrs   map[string]api.AttributeValue `json:"attrs,omitempty"`
	Latency map[string]int32              `json:"latency,omitempty"`
	Team    string                        `json:"team,omitempty"`
}

// ticketConn is a COMPLETED ticket's GameSessionConnectionInfo.
type ticketConn struct {
	ARN      string          `json:"arn"`
	IP       string          `json:"ip,omitempty"`
	DNS      string          `json:"dns,omitempty"`
	Port     int             `json:"port,omitempty"`
	Sessions []placedSession `json:"sessions,omitempty"`
}

// active reports whether the ticket has not ended.
func (t *ticketDoc) active() bool {
	switch t.Status {
	case ticketCompleted, ticketFailed, ticketCancelled, ticketTimedOut:
		return false
	}
	return true
}

// playerDoc names the active ticket of a player.
type playerDoc struct {
	Ticket string `json:"ticket"`
}

func (s *Service) ticketHandlers(h *api.Handlers) {
	h.StartMatchmaking = s.StartMatchmaking
	h.DescribeMatchmaking = s.DescribeMatchmaking
	h.StopMatchmaking = s.StopMatchmaking
	h.AcceptMatch = s.AcceptMatch
	h.StartMatchBackfill = s.StartMatchBackfill
}

func ticketNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Matchmaking ticket %s not found.", id) }
}

// StartMatchmaking files a ticket QUEUED for the matchmaker. A player already in another
// active ticket is taken out of it: that ticket is CANCELLED ("Cancelled due to duplicate
// player"), without an event, as in GameLift.
func (s *Service) StartMatchmaking(ctx context.Context, in *api.StartMatchmakingInput) (*api.StartMatchmakingOutput, error) {
	t, err := s.fileTicket(ctx, "A matchmaking request", len(in.Players), maxTicketPlayers, in.TicketId, func(tx store.Tx, id string) (*ticketDoc, error) {
		return s.startTicketTx(tx, id, api.Deref(in.ConfigurationName), in.Players, false, "")
	})
	if err != nil {
		return nil, err
	}
	return &api.StartMatchmakingOutput{MatchmakingTicket: t}, nil
}

// fileTicket checks a request's number of players, takes its ticket ID or makes one, and
// runs start in a transaction (each run of it from the request).
func (s *Service) fileTicket(ctx context.Context, what string, players, most int, ticketID *string,
	start func(store.Tx, string) (*ticketDoc, error)) (*api.MatchmakingTicket, error) {
	if players == 0 || players > most {
		return nil, api.Errorf(api.InvalidRequestException, "%s takes 1 to %d players, not %d.", what, most, players)
	}
	id := api.Deref(ticketID)
	if id == "" {
		id = s.newID()
	}
	var t *ticketDoc
	err := s.update(ctx, func(tx store.Tx) error {
		var err error
		t, err = start(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.apiTicket(t), nil
}

// startTicketTx checks a new ticket against its configuration and rule set and files it.
// A backfill ticket names its game session (none in STANDALONE mode).
func (s *Service) startTicketTx(tx store.Tx, id, config string, players []api.Player, backfill bool, session string) (*ticketDoc, error) {
	if _, err := tx.Get(kindMatchTicket, id); err == nil {
		return nil, api.Errorf(api.InvalidRequestException, "Matchmaking ticket ID %s is already in use; a ticket ID cannot be reused.", id)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	_, cfg, err := s.matchConfigTx(tx, config)
	if err != nil {
		return nil, err
	}
	_, rs, err := s.ruleSetTx(tx, cfg.RuleSetName)
	if err != nil {
		return nil, err
	}
	now := s.nowMillis()
	t := &ticketDoc{ID: id, Config: cfg.Name, ConfigARN: cfg.ARN, Status: ticketQueued, Start: now,
		Deadline: now + int64(cfg.RequestTimeout)*1000, Backfill: backfill, Session: session}
	if t.Players, err = ticketPlayers(rs, players, backfill); err != nil {
		return nil, err
	}
	if err := s.claimPlayers(tx, t); err != nil {
		return nil, err
	}
	if err := insertChild(tx, kindMatchTicket, t.ID, t.Config, t); err != nil {
		return nil, err
	}
	if err := insertDoc(tx, kindMatchWait, t.ID, &deadlineDoc{At: t.Deadline}); err != nil {
		return nil, err
	}
	return t, s.tellMatchmaker(tx, t.ID)
}

// ticketPlayers checks a request's players against the rule set (declared attribute types,
// defaults, latency when a latency rule needs it) and converts them.
func ticketPlayers(rs *flexmatch.RuleSet, players []api.Player, backfill bool) ([]ticketPlayer, error) {
	seen := map[string]bool{}
	out := make([]ticketPlayer, 0, len(players))
	for _, p := range players {
		tp := ticketPlayer{ID: api.Deref(p.PlayerId), Attrs: p.PlayerAttributes, Latency: p.LatencyInMs, Team: api.Deref(p.Team)}
		if err := checkTicketPlayer(rs, &tp, seen, backfill); err != nil {
			return nil, err
		}
		out = append(out, tp)
	}
	return out, nil
}

// checkTicketPlayer checks one player of a request.
func checkTicketPlayer(rs *flexmatch.RuleSet, tp *ticketPlayer, seen map[string]bool, backfill bool) error {
	switch {
	case tp.ID == "" || seen[tp.ID]:
		return api.Errorf(api.InvalidRequestException, "Each player needs a PlayerId, and each player may appear once.")
	case backfill && !slices.Contains(rs.TeamNames(), tp.Team):
		return api.Errorf(api.InvalidRequestException, "Player %s needs a Team of the rule set (%v) for backfill, not %q.", tp.ID, rs.TeamNames(), tp.Team)
	case !backfill && tp.Team != "":
		return api.Errorf(api.InvalidRequestException, "Player %s: Team is set by matchmaking; leave it out.", tp.ID)
	}
	seen[tp.ID] = true
	for region, ms := range tp.Latency {
		if ms < 1 {
			return api.Errorf(api.InvalidRequestException, "Player %s: LatencyInMs for %s must be at least 1, not %d.", tp.ID, region, ms)
		}
	}
	for name, v := range tp.Attrs {
		if n := attrFields(v); n != 1 {
			return api.Errorf(api.InvalidRequestException, "Player %s: attribute %s must set exactly one of S, N, SL and SDM.", tp.ID, name)
		}
	}
	fp := tp.flex()
	if err := rs.Prepare(&fp); err != nil {
		return api.Errorf(api.InvalidRequestException, "%s.", err.Error())
	}
	return nil
}

// attrFields counts the value fields an AttributeValue sets.
func attrFields(v api.AttributeValue) int {
	n := 0
	for _, set := range []bool{v.S != nil, v.N != nil, v.SL != nil, v.SDM != nil} {
		if set {
			n++
		}
	}
	return n
}

// flex converts a ticket player for the matcher.
func (p *ticketPlayer) flex() flexmatch.Player {
	fp := flexmatch.Player{ID: p.ID, Team: p.Team, Attributes: make(map[string]flexmatch.Value, len(p.Attrs))}
	for name, v := range p.Attrs {
		fp.Attributes[name] = flexValue(v)
	}
	if len(p.Latency) > 0 {
		fp.Latency = make(map[string]int, len(p.Latency))
		for r, ms := range p.Latency {
			fp.Latency[r] = int(ms)
		}
	}
	return fp
}

// flexValue converts an AttributeValue.
func flexValue(v api.AttributeValue) flexmatch.Value {
	switch {
	case v.S != nil:
		return flexmatch.Value{Type: flexmatch.TypeString, S: *v.S}
	case v.N != nil:
		return flexmatch.Value{Type: flexmatch.TypeNumber, N: *v.N}
	case v.SL != nil:
		return flexmatch.Value{Type: flexmatch.TypeStringList, SL: v.SL}
	}
	return flexmatch.Value{Type: flexmatch.TypeStringNumberMap, SDM: v.SDM}
}

// claimPlayers records the ticket as each player's active ticket, cancelling the ticket a
// player had before (for a backfill ticket, only players new to matchmaking are claimed: the
// session's players are in their completed tickets).
func (s *Service) claimPlayers(tx store.Tx, t *ticketDoc) error {
	if t.Backfill {
		return nil
	}
	for _, p := range t.Players {
		var old playerDoc
		_, err := getDoc(tx, kindMatchPlayer, p.ID, &old, func() error { return errNoRecord })
		if err == nil {
			err = s.cancelDuplicate(tx, old.Ticket) // releases the player's record
		}
		if ignoreNoRecord(err) != nil {
			return err
		}
		if err := deleteIfThere(tx, kindMatchPlayer, p.ID); err != nil {
			return err
		}
		if err := insertDoc(tx, kindMatchPlayer, p.ID, &playerDoc{Ticket: t.ID}); err != nil {
			return err
		}
	}
	return nil
}

// cancelDuplicate cancels a ticket a player's new ticket replaces, if it is still active
// and not being placed.
func (s *Service) cancelDuplicate(tx store.Tx, id string) error {
	var old ticketDoc
	rec, err := getDoc(tx, kindMatchTicket, id, &old, func() error { return errNoRecord })
	if err != nil || !old.active() {
		return ignoreNoRecord(err)
	}
	switch old.Status {
	case ticketPlacing:
		return api.Errorf(api.InvalidRequestException, "A player of this request is in ticket %s, which is being placed in a game session.", id)
	case ticketAccepting:
		return s.breakMatch(tx, old.Match, map[string]bool{id: true}, duplicateReason)
	}
	return s.endTicket(tx, rec, &old, ticketCancelled, duplicateReason, "", false)
}

// duplicateReason is the StatusReason of a ticket a player's newer ticket replaced.
const duplicateReason = "Cancelled due to duplicate player"

// DescribeMatchmaking answers the tickets that exist among up to 10 IDs, in the order asked.
func (s *Service) DescribeMatchmaking(ctx context.Context, in *api.DescribeMatchmakingInput) (*api.DescribeMatchmakingOutput, error) {
	if len(in.TicketIds) > maxDescribeIDs {
		return nil, api.Errorf(api.InvalidRequestException, "DescribeMatchmaking takes at most %d ticket IDs, not %d.", maxDescribeIDs, len(in.TicketIds))
	}
	out := &api.DescribeMatchmakingOutput{TicketList: []api.MatchmakingTicket{}}
	err := s.view(ctx, func(tx store.Tx) error {
		out.TicketList = out.TicketList[:0]
		for _, id := range in.TicketIds {
			var t ticketDoc
			_, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
			if errors.Is(err, errNoRecord) {
				continue
			}
			if err != nil {
				return err
			}
			out.TicketList = append(out.TicketList, *s.apiTicket(&t))
		}
		return nil
	})
	return out, err
}

// StopMatchmaking cancels a ticket that is not being placed and has not ended.
func (s *Service) StopMatchmaking(ctx context.Context, in *api.StopMatchmakingInput) (*api.StopMatchmakingOutput, error) {
	id := api.Deref(in.TicketId)
	err := s.update(ctx, func(tx store.Tx) error {
		var t ticketDoc
		rec, err := getDoc(tx, kindMatchTicket, id, &t, ticketNotFound(id))
		switch {
		case err != nil:
			return err
		case t.Status == ticketPlacing:
			return api.Errorf(api.InvalidRequestException, "Matchmaking ticket is in PLACING status and cannot be canceled.")
		case !t.active():
			return api.Errorf(api.InvalidRequestException, "Matchmaking ticket %s is %s and cannot be canceled.", id, t.Status)
		}
		return s.stopTicketTx(tx, rec, &t)
	})
	if err != nil {
		return nil, err
	}
	return &api.StopMatchmakingOutput{}, nil
}

// stopTicketTx cancels an active ticket by request: a ticket in a match waiting for
// acceptance breaks the match (the others go back to searching).
func (s *Service) stopTicketTx(tx store.Tx, rec *store.Record, t *ticketDoc) error {
	if t.Status == ticketAccepting {
		return s.breakMatch(tx, t.Match, map[string]bool{t.ID: true}, "Cancelled by request.")
	}
	return s.endTicket(tx, rec, t, ticketCancelled, "Cancelled by request.", "Cancelled by request.", true)
}

// endTicket moves an active ticket to a final status, releases its players and work item,
// tells the matchmaker and, if event is set, records the ticket's event.
func (s *Service) endTicket(tx store.Tx, rec *store.Record, t *ticketDoc, status, reason, message string, event bool) error {
	t.Status, t.Reason, t.Message, t.End, t.Match = status, reasonCode(status, reason), message, s.nowMillis(), ""
	s.logAction(tx, "matchmaking ticket ended", slog.String("ticket_id", t.ID), slog.String("status", status), slog.String("reason", t.Reason))
	if err := s.releaseTicket(tx, t); err != nil {
		return err
	}
	if err := s.backfillEnded(tx, t); err != nil {
		return err
	}
	if event {
		if err := s.ticketEndEvent(tx, t); err != nil {
			return err
		}
	}
	return putDoc(tx, rec, t)
}

// reasonCode is the StatusReason GameLift gives a final status.
func reasonCode(status, reason string) string {
	switch status {
	case ticketTimedOut:
		return "TimedOut"
	case ticketFailed:
		return "UNEXPECTED_ERROR"
	}
	return reason
}

// releaseTicket drops an ended ticket's work item and player claims, lists it for the
// purge and tells the matchmaker to forget it.
func (s *Service) releaseTicket(tx store.Tx, t *ticketDoc) error {
	if err := deleteIfThere(tx, kindMatchWait, t.ID); err != nil {
		return err
	}
	if err := insertDoc(tx, kindMatchEnded, t.ID, &deadlineDoc{At: t.End}); err != nil {
		return err
	}
	for _, p := range t.Players {
		var pd playerDoc
		_, err := getDoc(tx, kindMatchPlayer, p.ID, &pd, func() error { return errNoRecord })
		if err == nil && pd.Ticket == t.ID {
			err = tx.Delete(kindMatchPlayer, p.ID)
		}
		if ignoreNoRecord(err) != nil {
			return err
		}
	}
	return s.tellMatchmaker(tx, t.ID)
}

// apiTicket converts a stored ticket.
func (s *Service) apiTicket(t *ticketDoc) *api.MatchmakingTicket {
	status := api.MatchmakingConfigurationStatus(t.Status)
	out := &api.MatchmakingTicket{TicketId: api.String(t.ID), ConfigurationName: api.String(t.Config),
		ConfigurationArn: api.String(t.ConfigARN), Status: &status, StatusReason: optional(t.Reason),
		StatusMessage: optional(t.Message), StartTime: stamp(t.Start)}
	if t.End > 0 {
		out.EndTime = stamp(t.End)
	}
	if t.Estimate > 0 {
		out.EstimatedWaitTime = api.Int32(t.Estimate)
	}
	for _, p := range t.Players {
		out.Players = append(out.Players, api.Player{PlayerId: api.String(p.ID), PlayerAttributes: p.Attrs,
			LatencyInMs: p.Latency, Team: optional(p.Team)})
	}
	if c := t.Conn; c != nil {
		info := &api.GameSessionConnectionInfo{GameSessionArn: api.String(c.ARN), IpAddress: optional(c.IP), DnsName: optional(c.DNS)}
		if c.Port > 0 {
			info.Port = api.Int32(int32(c.Port))
		}
		for _, ps := range c.Sessions {
			info.MatchedPlayerSessions = append(info.MatchedPlayerSessions, api.MatchedPlayerSession{PlayerId: api.String(ps.Player), PlayerSessionId: api.String(ps.Session)})
		}
		out.GameSessionConnectionInfo = info
	}
	return out
}
