package gamelift

import (
	"cmp"
	"context"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Acceptance: a configuration with AcceptanceRequired holds each proposed match until every
// player of its new tickets accepts (then it is placed), one rejects, or
// AcceptanceTimeoutSeconds pass. A match that is not accepted is broken: the tickets with a
// player who rejected or did not answer are CANCELLED, the others go back to searching.

// Acceptance outcomes in AcceptMatchCompleted.
const (
	acceptanceAccepted = "Accepted"
	acceptanceRejected = "Rejected"
	acceptanceTimedOut = "TimedOut"
)

// AcceptMatch records players' answers to a proposed match.
func (s *Service) AcceptMatch(ctx context.Context, in *api.AcceptMatchInput) (*api.AcceptMatchOutput, error) {
	id, accept := api.Deref(in.TicketId), api.Deref(in.AcceptanceType) == api.AcceptanceTypeAccept
	if len(in.PlayerIds) == 0 {
		return nil, api.Errorf(api.InvalidRequestException, "AcceptMatch needs at least one PlayerId.")
	}
	err := s.update(ctx, func(tx store.Tx) error {
		var t ticketDoc
		if _, err := getDoc(tx, kindMatchTicket, id, &t, ticketNotFound(id)); err != nil {
			return err
		}
		if t.Status != ticketAccepting {
			return api.Errorf(api.InvalidRequestException, "Matchmaking ticket %s is %s; only a ticket in REQUIRES_ACCEPTANCE takes AcceptMatch.", id, t.Status)
		}
		for _, p := range in.PlayerIds {
			if !slices.ContainsFunc(t.Players, func(tp ticketPlayer) bool { return tp.ID == p }) {
				return api.Errorf(api.InvalidRequestException, "Player %s is not in matchmaking ticket %s.", p, id)
			}
		}
		return s.answerTx(tx, t.Match, id, in.PlayerIds, accept)
	})
	if err != nil {
		return nil, err
	}
	return &api.AcceptMatchOutput{}, nil
}

// answerTx records answers in a match, with the AcceptMatch event, and settles the match
// when a player rejected or everyone accepted.
func (s *Service) answerTx(tx store.Tx, matchID, ticket string, players []string, accept bool) error {
	rec, md, held, err := s.loadMatch(tx, matchID)
	if err != nil {
		return err
	}
	_, cfg, err := s.matchConfigTx(tx, md.Config)
	if err != nil {
		return err
	}
	if md.Answers == nil {
		md.Answers = map[string]bool{}
	}
	for _, p := range players {
		md.Answers[p] = accept
	}
	if err := s.matchEvent(tx, cfg, evAcceptMatch, tickets(held), md, nil); err != nil {
		return err
	}
	switch {
	case !accept:
		return s.breakMatch(tx, matchID, map[string]bool{ticket: true}, "")
	case md.allAccepted(held):
		if err := s.acceptanceCompleted(tx, cfg, held, md, acceptanceAccepted); err != nil {
			return err
		}
		return s.placeMatchTx(tx, cfg, held, md)
	}
	return putDoc(tx, rec, md)
}

// allAccepted reports whether every player who must accept has.
func (md *matchDoc) allAccepted(held []heldTicket) bool {
	for _, h := range held {
		if h.t.Backfill {
			continue
		}
		for _, p := range h.t.Players {
			if !md.Answers[p.ID] {
				return false
			}
		}
	}
	return true
}

// acceptanceCompleted records AcceptMatchCompleted.
func (s *Service) acceptanceCompleted(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc, outcome string) error {
	return s.matchEvent(tx, cfg, evAcceptCompleted, tickets(held), md, func(d *matchDetail) { d.Acceptance = outcome })
}

// acceptanceTimedOut breaks a match still waiting for acceptance past its deadline.
func (s *Service) acceptanceTimedOut(ctx context.Context, matchID string) error {
	return s.update(ctx, func(tx store.Tx) error {
		var md matchDoc
		_, err := getDoc(tx, kindMatch, matchID, &md, func() error { return errNoRecord })
		if err != nil || md.Status != ticketAccepting || md.Deadline > s.nowMillis() {
			return ignoreNoRecord(err)
		}
		return s.breakMatch(tx, matchID, nil, "")
	})
}

// breakMatch ends a match that was not accepted. The tickets in cancel (a rejection, a
// StopMatchmaking, a duplicate player) and, on a timeout (cancel nil), those with a player
// who did not accept, are CANCELLED — with reason when it is given, and without an event for
// a duplicate player, as GameLift does; the others go back to searching.
func (s *Service) breakMatch(tx store.Tx, matchID string, cancel map[string]bool, reason string) error {
	_, md, held, err := s.loadMatch(tx, matchID)
	if err != nil {
		return ignoreNoRecord(err)
	}
	_, cfg, err := s.matchConfigTx(tx, md.Config)
	if err != nil {
		return err
	}
	outcome, msg := acceptanceRejected, "A player rejected the proposed match."
	if cancel == nil {
		outcome, cancel = acceptanceTimedOut, md.unanswered(held)
		msg = "A player did not accept the proposed match in time."
	}
	if err := s.acceptanceCompleted(tx, cfg, held, md, outcome); err != nil {
		return err
	}
	if err := deleteIfThere(tx, kindMatch, md.ID); err != nil {
		return err
	}
	var back []heldTicket
	for _, h := range held {
		switch {
		case !h.t.active():
			continue
		case !cancel[h.t.ID]:
			back = append(back, h)
			continue
		}
		err := s.endTicket(tx, h.rec, h.t, ticketCancelled, cmp.Or(reason, "Cancelled"), cmp.Or(reason, msg), reason != duplicateReason)
		if err != nil {
			return err
		}
	}
	return s.requeueTx(tx, cfg, back, "The proposed match was not accepted by every player; searching again.", true)
}

// unanswered lists the tickets with a player who has not accepted.
func (md *matchDoc) unanswered(held []heldTicket) map[string]bool {
	out := map[string]bool{}
	for _, h := range held {
		if h.t.Backfill {
			continue
		}
		for _, p := range h.t.Players {
			if !md.Answers[p.ID] {
				out[h.t.ID] = true
			}
		}
	}
	return out
}
