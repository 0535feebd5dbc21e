package gamelift

import (
	"errors"
	"log/slog"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/store"
)

// matchDoc is a match between its proposal and its end (completed, failed, or broken by a
// rejection or the acceptance timeout), stored under kindMatch.
type matchDoc struct {
	ID      string   `json:"id"`
	Config  string   `json:"config"`
	Tickets []string `json:"tickets"`
	// Status is ticketAccepting while players must accept, then ticketPlacing.
	Status   string `json:"status"`
	Deadline int64  `json:"deadline,omitempty"`
	// Answers are the acceptance answers by player ID.
	Answers map[string]bool `json:"answers,omitempty"`
	// Session is the game session a backfill match fills.
	Session string `json:"session,omitempty"`
	// Backfill is the backfill ticket of a backfill match.
	Backfill string `json:"backfill,omitempty"`
	// Teams are the match's team names in order, for MatchmakerData.
	Teams   []string `json:"teams"`
	Regions []string `json:"regions,omitempty"`
	Created int64    `json:"created"`
}

// answer is a player's acceptance for an AcceptMatch event (nil: no answer yet, or not an
// acceptance event).
func (md *matchDoc) answer(player, typ string) *bool {
	if typ != evAcceptMatch {
		return nil
	}
	if a, ok := md.Answers[player]; ok {
		return &a
	}
	return nil
}

// heldTicket is a ticket read for a change, with its record.
type heldTicket struct {
	rec *store.Record
	t   *ticketDoc
}

// errStaleMatch reports that a proposed match holds a ticket that stopped searching after
// the matcher saw it.
var errStaleMatch = errors.New("a ticket of the match is no longer searching")

// proposeTx commits a match the matcher proposed: its tickets leave the pool for acceptance
// or placement, with the PotentialMatchCreated event.
func (s *Service) proposeTx(tx store.Tx, cfg *matchConfigDoc, fm *flexmatch.Match) error {
	held, err := s.holdTickets(tx, fm)
	if err != nil {
		return err
	}
	md := &matchDoc{ID: s.newID(), Config: cfg.Name, Status: ticketPlacing, Regions: fm.Regions, Created: s.nowMillis()}
	teams := map[string]string{}
	for _, mt := range fm.Teams {
		md.Teams = append(md.Teams, mt.Name)
		for _, p := range mt.Players {
			teams[p.Player.ID] = mt.Name
		}
	}
	for _, h := range held {
		md.Tickets = append(md.Tickets, h.t.ID)
		h.t.Match = md.ID
		if h.t.Backfill {
			md.Backfill, md.Session = h.t.ID, h.t.Session
		}
		for i := range h.t.Players {
			h.t.Players[i].Team = teams[h.t.Players[i].ID]
		}
		if err := deleteIfThere(tx, kindMatchWait, h.t.ID); err != nil {
			return err
		}
	}
	if err := s.potentialMatchEvent(tx, cfg, held, md, fm); err != nil {
		return err
	}
	s.logAction(tx, "match proposed", slog.String("match_id", md.ID), slog.String("configuration", cfg.Name),
		slog.Any("tickets", md.Tickets))
	if cfg.AcceptanceRequired && md.needsAcceptance(held) {
		return s.awaitAcceptance(tx, cfg, held, md)
	}
	return s.placeMatchTx(tx, cfg, held, md)
}

// needsAcceptance reports whether a match has players who must accept: those of its
// tickets other than a backfill ticket.
func (md *matchDoc) needsAcceptance(held []heldTicket) bool {
	for _, h := range held {
		if !h.t.Backfill {
			return true
		}
	}
	return false
}

// holdTickets reads a proposed match's tickets; all must still be searching.
func (s *Service) holdTickets(tx store.Tx, fm *flexmatch.Match) ([]heldTicket, error) {
	out := make([]heldTicket, 0, len(fm.Tickets))
	for _, ft := range fm.Tickets {
		var t ticketDoc
		rec, err := getDoc(tx, kindMatchTicket, ft.ID, &t, func() error { return errStaleMatch })
		if err != nil {
			return nil, err
		}
		if t.Status != ticketSearching {
			return nil, errStaleMatch
		}
		out = append(out, heldTicket{rec, &t})
	}
	return out, nil
}

// potentialMatchEvent records PotentialMatchCreated.
func (s *Service) potentialMatchEvent(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc, fm *flexmatch.Match) error {
	required := cfg.AcceptanceRequired && md.needsAcceptance(held)
	return s.matchEvent(tx, cfg, evPotentialMatch, tickets(held), md, func(d *matchDetail) {
		d.AcceptanceRequired, d.RuleEvaluationMetrics = &required, metrics(fm.Metrics)
		if required {
			d.AcceptanceTimeout = cfg.AcceptanceTimeout
		}
	})
}

// tickets lists the documents of held tickets.
func tickets(held []heldTicket) []*ticketDoc {
	out := make([]*ticketDoc, len(held))
	for i, h := range held {
		out[i] = h.t
	}
	return out
}

// awaitAcceptance moves a match's tickets to REQUIRES_ACCEPTANCE until its players answer
// or AcceptanceTimeoutSeconds pass.
func (s *Service) awaitAcceptance(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc) error {
	md.Status = ticketAccepting
	md.Deadline = s.nowMillis() + int64(max(cfg.AcceptanceTimeout, 1))*1000
	md.Answers = map[string]bool{}
	if err := s.setTickets(tx, held, ticketAccepting); err != nil {
		return err
	}
	if err := insertChild(tx, kindMatch, md.ID, md.Config, md); err != nil {
		return err
	}
	return s.tellMatchmaker(tx, matchNote+md.ID)
}

// setTickets writes held tickets with a new (non-final) status.
func (s *Service) setTickets(tx store.Tx, held []heldTicket, status string) error {
	for _, h := range held {
		h.t.Status = status
		if err := putDoc(tx, h.rec, h.t); err != nil {
			return err
		}
	}
	return nil
}

// placeMatchTx starts what follows an accepted match: a backfill joins its game session, a
// STANDALONE match completes, a WITH_QUEUE match becomes a game session placement on the
// configuration's queue.
func (s *Service) placeMatchTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc) error {
	md.Status, md.Deadline = ticketPlacing, 0
	switch {
	case md.Backfill != "" && md.Session != "":
		return s.joinBackfillTx(tx, cfg, held, md)
	case cfg.FlexMatchMode == string(api.FlexMatchModeStandalone):
		return s.completeMatchTx(tx, cfg, held, md, nil)
	}
	if err := s.setTickets(tx, held, ticketPlacing); err != nil {
		return err
	}
	p, err := s.matchPlacement(tx, cfg, held, md)
	if err == nil {
		_, err = s.startPlacementTx(tx, p)
	}
	if hasErrorCode(err, api.NotFoundException) || hasErrorCode(err, api.InvalidRequestException) {
		return s.failMatchTx(tx, cfg, held, md, "The match could not be placed: "+err.Error())
	}
	if err != nil {
		return err
	}
	return s.saveMatch(tx, md)
}

// saveMatch inserts or replaces a match record.
func (s *Service) saveMatch(tx store.Tx, md *matchDoc) error {
	rec, err := tx.Get(kindMatch, md.ID)
	if errors.Is(err, store.ErrNotFound) {
		return insertChild(tx, kindMatch, md.ID, md.Config, md)
	}
	if err != nil {
		return err
	}
	return putDoc(tx, rec, md)
}

// matchPlacement is the placement of a WITH_QUEUE match: a game session for the rule set's
// players on the first queue, with the configuration's properties and data, the players'
// latencies, a player session for each and the MatchmakerData.
func (s *Service) matchPlacement(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc) (*placementDoc, error) {
	_, rs, err := s.ruleSetTx(tx, cfg.RuleSetName)
	if err != nil {
		return nil, err
	}
	if len(cfg.Queues) == 0 {
		return nil, api.Errorf(api.InvalidRequestException, "Configuration %s has no game session queue.", cfg.Name)
	}
	p := &placementDoc{ID: md.ID, Queue: cfg.Queues[0], Status: placementPending, Max: int32(rs.MaxPlayers()),
		Props: cfg.GameProps, Data: cfg.GameSessionData, Match: md.ID}
	for _, h := range held {
		for _, pl := range h.t.Players {
			p.Desired = append(p.Desired, desiredPlayer{Player: pl.ID})
			for region, ms := range pl.Latency {
				p.Latencies = append(p.Latencies, playerLatency{Player: pl.ID, Region: region, Millis: float32(ms)})
			}
		}
	}
	if p.Matchmake, err = s.matchmakerData(cfg, md, held, ""); err != nil {
		return nil, err
	}
	p.Request = p.hash()
	return p, nil
}

// completeMatchTx completes a match's tickets: with the game session's connection (WITH_QUEUE
// and backfill) or without (STANDALONE), frees its players for new tickets, and records
// MatchmakingSucceeded.
func (s *Service) completeMatchTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc, conn *ticketConn) error {
	now := s.nowMillis()
	for _, h := range held {
		h.t.Status, h.t.End, h.t.Match, h.t.Reason, h.t.Message = ticketCompleted, now, "", "", ""
		if conn != nil {
			c := *conn
			c.Sessions = nil
			for _, pl := range h.t.Players {
				if id := conn.session(pl.ID); id != "" {
					c.Sessions = append(c.Sessions, placedSession{Player: pl.ID, Session: id})
				}
			}
			h.t.Conn = &c
		}
		if err := s.releaseTicket(tx, h.t); err != nil {
			return err
		}
		if err := putDoc(tx, h.rec, h.t); err != nil {
			return err
		}
	}
	if err := s.matchEvent(tx, cfg, evSucceeded, tickets(held), md, nil); err != nil {
		return err
	}
	s.logAction(tx, "match completed", slog.String("match_id", md.ID), slog.Any("tickets", md.Tickets))
	return deleteIfThere(tx, kindMatch, md.ID)
}

// failMatchTx ends a match's tickets FAILED, with MatchmakingFailed.
func (s *Service) failMatchTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc, message string) error {
	now := s.nowMillis()
	for _, h := range held {
		h.t.Status, h.t.End, h.t.Match = ticketFailed, now, ""
		h.t.Reason, h.t.Message = reasonCode(ticketFailed, ""), message
		if err := s.releaseTicket(tx, h.t); err != nil {
			return err
		}
		if err := putDoc(tx, h.rec, h.t); err != nil {
			return err
		}
	}
	err := s.matchEvent(tx, cfg, evFailed, tickets(held), md, func(d *matchDetail) {
		d.Reason, d.Message = "UNEXPECTED_ERROR", "An unexpected error was encountered during match placing."
	})
	if err != nil {
		return err
	}
	return deleteIfThere(tx, kindMatch, md.ID)
}

// requeueTx puts tickets back into the pool (SEARCHING), out of their match: the match's
// placement timed out, or it was broken while they had accepted. Announce records the
// MatchmakingSearching event (a broken proposal); a placement timeout sends none, as in
// GameLift.
func (s *Service) requeueTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, message string, announce bool) error {
	for _, h := range held {
		t := h.t
		t.Status, t.Match, t.Reason, t.Message = ticketSearching, "", "", message
		if !t.Backfill {
			for i := range t.Players {
				t.Players[i].Team = ""
			}
		}
		if err := insertDoc(tx, kindMatchWait, t.ID, &deadlineDoc{At: t.Deadline}); err != nil {
			return err
		}
		if err := putDoc(tx, h.rec, t); err != nil {
			return err
		}
		if err := s.tellMatchmaker(tx, t.ID); err != nil {
			return err
		}
	}
	if !announce || len(held) == 0 {
		return nil
	}
	return s.matchEvent(tx, cfg, evSearching, tickets(held), nil, func(d *matchDetail) { d.EstimatedWaitMillis = "NOT_AVAILABLE" })
}

// loadMatch reads a match and its tickets.
func (s *Service) loadMatch(tx store.Tx, id string) (*store.Record, *matchDoc, []heldTicket, error) {
	var md matchDoc
	rec, err := getDoc(tx, kindMatch, id, &md, func() error { return errNoRecord })
	if err != nil {
		return nil, nil, nil, err
	}
	held := make([]heldTicket, 0, len(md.Tickets))
	for _, tid := range md.Tickets {
		var t ticketDoc
		trec, err := getDoc(tx, kindMatchTicket, tid, &t, func() error { return errNoRecord })
		if err != nil {
			return nil, nil, nil, err
		}
		held = append(held, heldTicket{trec, &t})
	}
	return rec, &md, held, nil
}

// matchPlacementEnded is the hook of endPlacement for a match's placement, in its
// transaction: FULFILLED completes the tickets, TIMED_OUT returns them to the pool,
// anything else fails them.
func (s *Service) matchPlacementEnded(tx store.Tx, p *placementDoc) error {
	_, md, held, err := s.loadMatch(tx, p.Match)
	if err != nil {
		return ignoreNoRecord(err)
	}
	_, cfg, err := s.matchConfigTx(tx, md.Config)
	if err != nil {
		return err
	}
	switch p.Status {
	case placementFulfilled:
		conn := &ticketConn{ARN: p.SessionARN, IP: p.IP, DNS: p.DNS, Port: p.Port, Sessions: p.Placed}
		if err := s.completeMatchTx(tx, cfg, held, md, conn); err != nil {
			return err
		}
		return s.matchedSessionTx(tx, cfg, held, p.SessionKey, p.Location)
	case placementTimedOut:
		if err := deleteIfThere(tx, kindMatch, md.ID); err != nil {
			return err
		}
		return s.requeueTx(tx, cfg, held, "", false)
	}
	return s.failMatchTx(tx, cfg, held, md, "The game session placement "+strings.ToLower(p.Status)+".")
}
