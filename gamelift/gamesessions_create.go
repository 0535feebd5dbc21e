package gamelift

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// slotPage is how many free processes CreateGameSession looks at per store read; it picks one
// of them at random, so concurrent creators on several nodes rarely want the same one.
const slotPage = 32

// creatorThrottle is the CreateGameSession rate allowed per CreatorId on a fleet without a
// ResourceCreationLimitPolicy: one request per second (CreateGameSession doc).
const creatorThrottleMillis = 1000

// slotDoc marks a free process (kindProcessSlot).
type slotDoc struct {
	Compute string `json:"compute"`
}

// keyDoc points at a game session by its store key (kindProcessSession, kindPlayerIndex).
type keyDoc struct {
	Key string `json:"key"`
}

// deadlineDoc is a timer record (kindActivation, kindReservation, kindSessionEnded,
// kindCreatorLog): At is a Unix millisecond time, Key the game session it concerns.
type deadlineDoc struct {
	At  int64  `json:"at"`
	Key string `json:"key,omitempty"`
}

// sessionRequest is a CreateGameSession request, checked and resolved.
type sessionRequest struct {
	fleetID, location, idString string
	doc                         gameSessionDoc
}

// CreateGameSession starts a game session on a free server process of a fleet (given by
// FleetId, or by an alias whose routing strategy is SIMPLE) in one of its locations: the
// process must be ACTIVE and host no game session. The session is ACTIVATING until the
// process calls ActivateGameSession; the CreateGameSession push tells the process. A request
// repeating an IdempotencyToken (or GameSessionId) answers the session created first, in its
// current state, or IdempotentParameterMismatchException when its parameters differ.
func (s *Service) CreateGameSession(ctx context.Context, in *api.CreateGameSessionInput) (*api.CreateGameSessionOutput, error) {
	fleetID, err := s.sessionTarget(ctx, in.FleetId, in.AliasId)
	if err != nil {
		return nil, err
	}
	req, err := s.newSessionRequest(fleetID, in)
	if err != nil {
		return nil, err
	}
	var doc *gameSessionDoc
	err = s.update(ctx, func(tx store.Tx) error {
		var err error
		doc, _, err = s.createSessionTx(tx, req, api.Deref(in.Location))
		return err
	})
	if err != nil {
		return nil, err
	}
	gs := s.apiGameSession(doc)
	return &api.CreateGameSessionOutput{GameSession: &gs}, nil
}

// newSessionRequest checks what the model cannot and builds the session document.
func (s *Service) newSessionRequest(fleetID string, in *api.CreateGameSessionInput) (*sessionRequest, error) {
	max := api.Deref(in.MaximumPlayerSessionCount)
	if max > maxPlayersPerSession {
		return nil, api.Errorf(api.InvalidRequestException,
			"MaximumPlayerSessionCount %d is over the limit of %d players per game session.", max, maxPlayersPerSession)
	}
	props, err := mergeProperties(nil, in.GameProperties)
	if err != nil {
		return nil, err
	}
	id := api.Deref(in.IdempotencyToken)
	if id == "" {
		id = api.Deref(in.GameSessionId)
	}
	if id == "" {
		id = "gsess-" + s.sessionID()
	}
	req := &sessionRequest{fleetID: fleetID, idString: id, doc: gameSessionDoc{
		Key: fleetID + "/" + id, FleetID: fleetID, Name: api.Deref(in.Name), Creator: api.Deref(in.CreatorId),
		Status: gsActivating, Max: max, Props: props, Data: api.Deref(in.GameSessionData),
		Policy: string(api.PlayerSessionCreationPolicyAcceptAll),
	}}
	hashed := []string{fleetID, api.Deref(in.Location), req.doc.Name, req.doc.Creator, req.doc.Data, strconv.Itoa(int(max))}
	for _, p := range props {
		hashed = append(hashed, p.Key, p.Value)
	}
	req.doc.Request = filterHash("CreateGameSession", hashed...)
	return req, nil
}

// mergeProperties adds or overwrites the given game properties in have, keeping at most 16.
func mergeProperties(have []gameProperty, in []api.GameProperty) ([]gameProperty, error) {
	out := append([]gameProperty(nil), have...)
	for _, p := range in {
		k, v := api.Deref(p.Key), api.Deref(p.Value)
		i := 0
		for i < len(out) && out[i].Key != k {
			i++
		}
		if i == len(out) {
			out = append(out, gameProperty{Key: k})
		}
		out[i].Value = v
	}
	if len(out) > maxGameProperties {
		return nil, api.Errorf(api.InvalidRequestException,
			"A game session has at most %d game properties; this request would give it %d.", maxGameProperties, len(out))
	}
	return out, nil
}

// sessionTarget resolves the fleet of a request that names a fleet or an alias (exactly
// one). An alias must route SIMPLE; TERMINAL answers TerminalRoutingStrategyException with
// the alias's message.
func (s *Service) sessionTarget(ctx context.Context, fleet, alias *string) (string, error) {
	switch {
	case (fleet == nil) == (alias == nil):
		return "", api.Errorf(api.InvalidRequestException, "Specify either a FleetId or an AliasId, not both.")
	case fleet != nil:
		return s.fleetID(fleet)
	}
	a, err := s.readAlias(ctx, *alias)
	if err != nil {
		return "", err
	}
	if a.Route.Type == routeTerminal {
		return "", api.Errorf(api.TerminalRoutingStrategyException, "%s", a.Route.Message)
	}
	return a.Route.FleetID, nil
}

// sessionLocation checks the Location of a request against the fleet: Anywhere fleets need
// one of their custom locations (operations.md §2.1); otherwise it defaults to the home Region.
func (s *Service) sessionLocation(f *fleetDoc, location string) (string, error) {
	if location == "" {
		if f.ComputeType == string(api.ComputeTypeAnywhere) {
			return "", api.Errorf(api.InvalidRequestException, "Location is required for Anywhere fleets: name one of the fleet's custom locations.")
		}
		return s.region, nil
	}
	if location != s.region && !containsString(f.Locations, location) {
		return "", api.Errorf(api.InvalidRequestException, "Location %s is not a location of fleet %s.", location, f.ID)
	}
	return location, nil
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// createSessionTx is CreateGameSession's transaction. fresh reports a new session (false:
// an idempotent repeat).
func (s *Service) createSessionTx(tx store.Tx, req *sessionRequest, location string) (doc *gameSessionDoc, fresh bool, err error) {
	_, fleet, err := s.activeFleetTx(tx, req.fleetID)
	if err != nil {
		return nil, false, err
	}
	if location, err = s.sessionLocation(fleet, location); err != nil {
		return nil, false, err
	}
	var old gameSessionDoc
	_, err = getDoc(tx, kindGameSession, req.doc.Key, &old, func() error { return store.ErrNotFound })
	switch {
	case err == nil && old.Request == req.doc.Request:
		return &old, false, nil
	case err == nil:
		return nil, false, api.Errorf(api.IdempotentParameterMismatchException,
			"A game session with custom ID string %s already exists in fleet %s, created with other parameters.", req.idString, req.fleetID)
	case !errors.Is(err, store.ErrNotFound):
		return nil, false, err
	}
	now := s.nowMillis()
	if err := s.checkCreator(tx, fleet, req.doc.Creator, now); err != nil {
		return nil, false, err
	}
	p, c, err := s.takeProcess(tx, fleet, location)
	if err != nil {
		return nil, false, err
	}
	d := req.doc
	d.ARN, d.Location, d.Created = s.gameSessionARN(req.fleetID, location, req.idString), location, now
	d.Compute, d.ProcessID, d.IP, d.DNS, d.Port = p.Compute, p.ProcessID, c.IPAddress, c.DNSName, p.Port
	d.Protection = fleet.Protection
	if d.Protection == "" {
		d.Protection = string(api.ProtectionPolicyNoProtection)
	}
	return &d, true, s.insertSession(tx, &d, fleet, now)
}

// insertSession writes a new ACTIVATING session with its activation timer, process link,
// creator record and the CreateGameSession push, which is given up when the activation
// timeout ends the session.
func (s *Service) insertSession(tx store.Tx, d *gameSessionDoc, fleet *fleetDoc, now int64) error {
	timeout := s.sessions.activationTimeout
	if rc := fleet.Runtime; rc != nil && api.Deref(rc.GameSessionActivationTimeoutSeconds) > 0 {
		timeout = secondsDuration(api.Deref(rc.GameSessionActivationTimeoutSeconds))
	}
	if err := insertChild(tx, kindGameSession, d.Key, d.FleetID, d); err != nil {
		return err
	}
	deadline := now + timeout.Milliseconds()
	if err := insertChild(tx, kindActivation, d.Key, d.FleetID+"/"+d.Compute, &deadlineDoc{At: deadline, Key: d.Key}); err != nil {
		return err
	}
	if err := s.enqueue(tx, ProcessAddress(d.FleetID, d.ProcessID), MessageCreateGameSession, d.start(), deadline); err != nil {
		return err
	}
	if err := insertChild(tx, kindProcessSession, d.processKey(), d.FleetID, &keyDoc{Key: d.Key}); err != nil {
		return err
	}
	if d.Creator == "" {
		return nil
	}
	return insertChild(tx, kindCreatorLog, d.Key, d.FleetID+"/"+d.Creator, &deadlineDoc{At: now})
}

// checkCreator applies the fleet's ResourceCreationLimitPolicy to CreatorId (at most
// NewGameSessionsPerCreator sessions in PolicyPeriodInMinutes) or, without a policy, GameLift's
// one request per CreatorId per second. Requests without a CreatorId are not limited.
func (s *Service) checkCreator(tx store.Tx, fleet *fleetDoc, creator string, now int64) error {
	if creator == "" {
		return nil
	}
	limit, window := 1, int64(creatorThrottleMillis)
	if cl := fleet.CreationLimit; cl != nil && cl.PerCreator > 0 && cl.PeriodMinutes > 0 {
		limit, window = int(cl.PerCreator), int64(cl.PeriodMinutes)*60_000
	}
	n := 0
	err := eachChild(tx, kindCreatorLog, fleet.ID+"/"+creator, func(_ *store.Record, d *deadlineDoc) error {
		if d.At > now-window {
			n++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n >= limit {
		return api.Errorf(api.LimitExceededException,
			"Creator %s has created %d game sessions on fleet %s in the last %s, the most allowed.", creator, n, fleet.ID, msDuration(window))
	}
	return nil
}

// takeProcess claims a free process of the fleet in location, honouring the runtime
// configuration's MaxConcurrentGameSessionActivations per compute, or answers
// FleetCapacityExceededException. The claim deletes the process's slot, so two creators can
// never take the same process.
func (s *Service) takeProcess(tx store.Tx, fleet *fleetDoc, location string) (*processDoc, *computeDoc, error) {
	maxAct := 0
	if fleet.Runtime != nil {
		maxAct = int(api.Deref(fleet.Runtime.MaxConcurrentGameSessionActivations))
	}
	busy := map[string]bool{}
	after := int64(0)
	for {
		slots, err := tx.List(kindProcessSlot, store.ListOptions{Parent: fleet.ID + "/" + location, AfterSeq: after, Limit: slotPage})
		if err != nil {
			return nil, nil, err
		}
		rand.Shuffle(len(slots), func(i, j int) { slots[i], slots[j] = slots[j], slots[i] })
		for _, r := range slots {
			after = max(after, r.Seq)
			p, c, ok, err := s.tryProcess(tx, fleet.ID, r, maxAct, busy)
			if err != nil || ok {
				return p, c, err
			}
		}
		if len(slots) < slotPage {
			return nil, nil, api.Errorf(api.FleetCapacityExceededException,
				"No server process is available to host a new game session on fleet %s in location %s.", fleet.ID, location)
		}
	}
}

// tryProcess takes the process of slot r unless its compute has maxAct sessions activating
// (busy caches that per compute) or it is no longer ACTIVE.
func (s *Service) tryProcess(tx store.Tx, fleetID string, r *store.Record, maxAct int, busy map[string]bool) (*processDoc, *computeDoc, bool, error) {
	var slot slotDoc
	if err := unmarshal(r.Data, &slot); err != nil {
		return nil, nil, false, err
	}
	if maxAct > 0 {
		full, seen := busy[slot.Compute]
		if !seen {
			acts, err := tx.List(kindActivation, store.ListOptions{Parent: fleetID + "/" + slot.Compute, Limit: maxAct})
			if err != nil {
				return nil, nil, false, err
			}
			full = len(acts) >= maxAct
			busy[slot.Compute] = full
		}
		if full {
			return nil, nil, false, nil
		}
	}
	var p processDoc
	if _, err := getDoc(tx, kindProcess, r.ID, &p, func() error { return store.ErrNotFound }); err != nil || p.Status != processActive {
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, false, err
		}
		return nil, nil, false, nil
	}
	if err := tx.Delete(kindProcessSlot, r.ID); err != nil {
		if errors.Is(err, store.ErrNotFound) { // taken by a concurrent transaction: retry
			return nil, nil, false, fmt.Errorf("process slot %s: %w", r.ID, store.ErrConflict)
		}
		return nil, nil, false, err
	}
	var c computeDoc
	if _, err := getDoc(tx, kindCompute, computeKey(fleetID, p.Compute), &c, func() error { return store.ErrNotFound }); err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, nil, false, err
	}
	return &p, &c, true, nil
}

// offerProcess makes a process that has just become ACTIVE available for a game session, in
// its compute's location.
func (s *Service) offerProcess(tx store.Tx, p *processDoc) error {
	var c computeDoc
	if _, err := getDoc(tx, kindCompute, computeKey(p.FleetID, p.Compute), &c, func() error { return store.ErrNotFound }); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil // deregistered: nothing to offer
		}
		return err
	}
	err := insertChild(tx, kindProcessSlot, processKey(p.FleetID, p.ProcessID), p.FleetID+"/"+c.Location, &slotDoc{Compute: p.Compute})
	if errors.Is(err, store.ErrExists) {
		return nil
	}
	return err
}

// withdrawProcess takes a process that is ending off the free list.
func (s *Service) withdrawProcess(tx store.Tx, p *processDoc) error {
	return deleteIfThere(tx, kindProcessSlot, processKey(p.FleetID, p.ProcessID))
}

// deleteIfThere deletes a record, if it exists.
func deleteIfThere(tx store.Tx, kind, id string) error {
	if err := tx.Delete(kind, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}
