package gamelift

import (
	"cmp"
	"context"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// placeTx tries, in tx, to start a game session for a PENDING placement without one: on the
// first candidate (in priority order) with a free process. It changes p (the game session's
// fields, or the count of passes that found no capacity) and reports whether it did; the
// caller writes p. Decisions and the commit share the transaction, so a placement never gets
// two game sessions and never takes a process someone else took: a concurrent writer makes
// the store run the transaction again.
func (s *Service) placeTx(tx store.Tx, p *placementDoc, q *queueDoc, now int64) (changed bool, err error) {
	cands, err := s.candidates(tx, q, p, now)
	if err != nil {
		return false, err
	}
	for _, c := range cands {
		proc, comp, err := s.takeProcess(tx, c.fleet, c.location)
		if hasErrorCode(err, api.FleetCapacityExceededException) {
			continue
		}
		if err != nil {
			return false, err
		}
		return true, s.startPlacedSession(tx, p, c, proc, comp, now)
	}
	if p.Passes > 0 {
		return false, nil // only the first pass matters (PlacementFallbackStrategy)
	}
	p.Passes = 1
	return true, nil
}

// startPlacedSession creates the game session of a placement on a process placeTx took.
func (s *Service) startPlacedSession(tx store.Tx, p *placementDoc, c candidate, proc *processDoc, comp *computeDoc, now int64) error {
	idString := "gsess-" + s.sessionID()
	d := gameSessionDoc{Key: c.fleet.ID + "/" + idString, FleetID: c.fleet.ID, Name: p.Name, Status: gsActivating,
		Max: p.Max, Props: p.Props, Data: p.Data, Matchmaker: p.Matchmake, Placement: p.ID,
		Policy: string(api.PlayerSessionCreationPolicyAcceptAll), Protection: c.fleet.Protection,
		ARN: s.gameSessionARN(c.fleet.ID, c.location, idString), Location: c.location, Created: now,
		Compute: proc.Compute, ProcessID: proc.ProcessID, IP: comp.IPAddress, DNS: comp.DNSName, Port: proc.Port}
	if d.Protection == "" {
		d.Protection = string(api.ProtectionPolicyNoProtection)
	}
	d.Request = filterHash("StartGameSessionPlacement", p.ID, d.Key)
	if err := s.insertSession(tx, &d, c.fleet, now); err != nil {
		return err
	}
	p.SessionKey, p.SessionARN, p.Location, p.IP, p.DNS, p.Port = d.Key, d.ARN, d.Location, d.IP, d.DNS, d.Port
	return nil
}

// placementActivated is the hook of ActivateGameSession, in its transaction: the placement
// that started game session d is FULFILLED, with a RESERVED player session for each desired
// player.
func (s *Service) placementActivated(tx store.Tx, d *gameSessionDoc, now int64) error {
	var p placementDoc
	rec, err := getDoc(tx, kindPlacement, d.Placement, &p, func() error { return errNoRecord })
	if err != nil || p.Status != placementPending || p.SessionKey != d.Key {
		return ignoreNoRecord(err)
	}
	for _, dp := range p.Desired {
		ps := &playerSessionDoc{ID: "psess-" + s.sessionID(), PlayerID: dp.Player, SessionKey: d.Key, GameSession: d.ARN,
			FleetID: d.FleetID, Status: psReserved, Data: dp.Data, IP: d.IP, DNS: d.DNS, Port: d.Port, Created: now}
		if err := s.insertPlayer(tx, ps, now); err != nil {
			return err
		}
		p.Placed = append(p.Placed, placedSession{Player: dp.Player, Session: ps.ID})
	}
	d.Players += int32(len(p.Desired))
	if err := s.endPlacement(tx, rec, &p, placementFulfilled); err != nil || p.Match == "" {
		return err
	}
	return s.autoBackfillTx(tx, d, "")
}

// placementSessionEnded is the hook of endSession, in its transaction: a placement whose game
// session ends before it became ACTIVE is FAILED.
func (s *Service) placementSessionEnded(tx store.Tx, d *gameSessionDoc) error {
	if d.Placement == "" || d.Activated != 0 {
		return nil
	}
	var p placementDoc
	rec, err := getDoc(tx, kindPlacement, d.Placement, &p, func() error { return errNoRecord })
	if err != nil || p.Status != placementPending || p.SessionKey != d.Key {
		return ignoreNoRecord(err)
	}
	return s.endPlacement(tx, rec, &p, placementFailed)
}

// PlacementLoop is the placer: each Step tries every PENDING placement that has no game
// session yet again (capacity may have appeared, latency policies relaxed) and times out
// those past their queue's TimeoutInSeconds. A placement whose game session is still
// ACTIVATING at its deadline is TIMED_OUT too, and that session is terminated. Every change
// is a transaction with compare-and-set, so Step may run on several nodes at once.
type PlacementLoop struct{ s *Service }

// PlacementLoop returns the placer of s.
func (s *Service) PlacementLoop() *PlacementLoop { return &PlacementLoop{s: s} }

// Run calls Step every interval of the Service's clock until ctx is done.
func (l *PlacementLoop) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	clock.Every(ctx, l.s.clock, interval, l.Step, onError)
}

// Step makes one pass over the waiting placements.
func (l *PlacementLoop) Step(ctx context.Context) error {
	var ids []string
	err := l.s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindPlacementWait, store.ListOptions{})
		ids = ids[:0]
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		errs = append(errs, ignoreUnchanged(l.s.update(ctx, func(tx store.Tx) error { return l.s.retryPlacementTx(tx, id) })))
	}
	return errors.Join(errs...)
}

// retryPlacementTx times out or tries again one waiting placement.
func (s *Service) retryPlacementTx(tx store.Tx, id string) error {
	var p placementDoc
	rec, err := getDoc(tx, kindPlacement, id, &p, func() error { return errUnchanged })
	if err != nil {
		return err
	}
	now := s.nowMillis()
	switch {
	case p.Status != placementPending:
		return deleteIfThere(tx, kindPlacementWait, id)
	case now >= p.Deadline:
		return s.timeOutPlacement(tx, rec, &p)
	case p.SessionKey != "":
		return errUnchanged // its game session is activating
	}
	_, q, err := s.readQueueTx(tx, p.Queue)
	if hasErrorCode(err, api.NotFoundException) {
		return s.endPlacement(tx, rec, &p, placementFailed) // the queue was deleted
	}
	if err != nil {
		return err
	}
	changed, err := s.placeTx(tx, &p, q, now)
	if err != nil || !changed {
		return cmp.Or(err, errUnchanged)
	}
	return putDoc(tx, rec, &p)
}

// timeOutPlacement ends a placement at its deadline; a game session still activating for it
// is ended (and its process told to terminate), since nobody will use it.
func (s *Service) timeOutPlacement(tx store.Tx, rec *store.Record, p *placementDoc) error {
	if p.SessionKey != "" {
		var d gameSessionDoc
		srec, err := getDoc(tx, kindGameSession, p.SessionKey, &d, func() error { return errNoRecord })
		if err == nil && d.Status == gsActivating {
			d.Placement = "" // the placement ends here, not through the session's end
			if err := s.endSession(tx, srec, &d, ""); err != nil {
				return err
			}
			if err := deleteIfThere(tx, kindProcessSession, d.processKey()); err != nil {
				return err
			}
			err = s.terminateHost(tx, &d)
		}
		if err = ignoreNoRecord(err); err != nil {
			return err
		}
	}
	return s.endPlacement(tx, rec, p, placementTimedOut)
}
