package gamelift

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Backfill: a backfill ticket carries a matched game session's current players, each on
// their team, and asks for new players for its open slots. It shares the pool with new
// tickets (at most one backfill ticket per match, never matched alone). A matched backfill
// adds the new players to the game session (a RESERVED player session each), rewrites its
// MatchmakerData and pushes UpdateGameSession (MATCHMAKING_DATA_UPDATED) to its process; a
// backfill that ends otherwise pushes BACKFILL_FAILED, BACKFILL_TIMED_OUT or
// BACKFILL_CANCELLED. A game session has at most one active backfill ticket: a new one
// cancels the old. With BackfillMode AUTOMATIC, a matched game session that becomes ACTIVE
// with open slots gets a backfill ticket at once.
//
// Records: mmsession, ID = a matched game session's key: its configuration, its active
// backfill ticket, and its players' latencies in its location (what an automatic backfill
// ticket needs and MatchmakerData does not carry).
const kindMatchSession = "mmsession"

// matchSessionDoc is a matched game session's matchmaking state.
type matchSessionDoc struct {
	Config   string           `json:"config"`
	Backfill string           `json:"backfill,omitempty"`
	Latency  map[string]int32 `json:"latency,omitempty"`
}

// Reasons of the UpdateGameSession push.
const (
	updateDataUpdated       = "MATCHMAKING_DATA_UPDATED"
	updateBackfillFailed    = "BACKFILL_FAILED"
	updateBackfillTimedOut  = "BACKFILL_TIMED_OUT"
	updateBackfillCancelled = "BACKFILL_CANCELLED"
)

// GameSessionUpdate is the body of a MessageUpdateGameSession: the game session as it now
// is, why it changed, and the backfill ticket concerned.
type GameSessionUpdate struct {
	GameSession      GameSessionStart
	FleetID          string
	Location         string
	Reason           string
	BackfillTicketID string
}

// StartMatchBackfill files a backfill ticket for a game session FlexMatch created (or, with
// no game session, for a STANDALONE configuration's match).
func (s *Service) StartMatchBackfill(ctx context.Context, in *api.StartMatchBackfillInput) (*api.StartMatchBackfillOutput, error) {
	t, err := s.fileTicket(ctx, "A backfill request", len(in.Players), maxBackfillers, in.TicketId, func(tx store.Tx, id string) (*ticketDoc, error) {
		return s.startBackfillTx(tx, id, api.Deref(in.ConfigurationName), api.Deref(in.GameSessionArn), in.Players)
	})
	if err != nil {
		return nil, err
	}
	return &api.StartMatchBackfillOutput{MatchmakingTicket: t}, nil
}

// startBackfillTx checks the game session and files the ticket, cancelling the session's
// previous backfill ticket.
func (s *Service) startBackfillTx(tx store.Tx, id, config, session string, players []api.Player) (*ticketDoc, error) {
	_, cfg, err := s.matchConfigTx(tx, config)
	if err != nil {
		return nil, err
	}
	standalone := cfg.FlexMatchMode == string(api.FlexMatchModeStandalone)
	if session == "" && !standalone {
		return nil, api.Errorf(api.InvalidRequestException, "GameSessionArn is required to backfill a match of configuration %s (WITH_QUEUE).", cfg.Name)
	}
	var msRec *store.Record
	var ms matchSessionDoc
	if session != "" {
		if msRec, err = s.backfillableSession(tx, session, &ms); err != nil {
			return nil, err
		}
		if err := s.cancelBackfill(tx, ms.Backfill); err != nil {
			return nil, err
		}
	}
	t, err := s.startTicketTx(tx, id, config, players, true, session)
	if err != nil || msRec == nil {
		return t, err
	}
	ms.Backfill = t.ID
	return t, putDoc(tx, msRec, &ms)
}

// backfillableSession reads a live game session FlexMatch created and its matchmaking state.
func (s *Service) backfillableSession(tx store.Tx, arn string, ms *matchSessionDoc) (*store.Record, error) {
	_, d, err := s.getSession(tx, arn)
	if err != nil {
		return nil, err
	}
	if !d.live() {
		return nil, api.Errorf(api.InvalidRequestException, "Game session %s is %s and cannot be backfilled.", arn, d.Status)
	}
	rec, err := getDoc(tx, kindMatchSession, d.Key, ms, func() error {
		return api.Errorf(api.InvalidRequestException, "Game session %s was not created by FlexMatch; only matched game sessions can be backfilled.", arn)
	})
	return rec, err
}

// cancelBackfill cancels a game session's previous backfill ticket if it is still active
// (a ticket in a match being placed is left alone).
func (s *Service) cancelBackfill(tx store.Tx, id string) error {
	if id == "" {
		return nil
	}
	var t ticketDoc
	rec, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
	if err != nil || !t.active() || t.Status == ticketPlacing {
		return ignoreNoRecord(err)
	}
	return s.stopTicketTx(tx, rec, &t)
}

// joinBackfillTx adds a backfill match's new players to its game session.
func (s *Service) joinBackfillTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc) error {
	rec, d, err := s.getSession(tx, md.Session)
	if errors.Is(err, errNoRecord) || hasErrorCode(err, api.NotFoundException) {
		return s.dropBackfillMatch(tx, cfg, held, md, "The game session to backfill no longer exists.")
	}
	if err != nil {
		return err
	}
	newcomers := md.newPlayers(held)
	if !d.live() || int(d.Players)+len(newcomers) > int(d.Max) {
		return s.dropBackfillMatch(tx, cfg, held, md, "The game session to backfill has ended or has no room for the matched players.")
	}
	conn := &ticketConn{ARN: d.ARN, IP: d.IP, DNS: d.DNS, Port: d.Port}
	now := s.nowMillis()
	for _, p := range newcomers {
		ps := &playerSessionDoc{ID: "psess-" + s.sessionID(), PlayerID: p, SessionKey: d.Key, GameSession: d.ARN,
			FleetID: d.FleetID, Status: psReserved, IP: d.IP, DNS: d.DNS, Port: d.Port, Created: now}
		if err := s.insertPlayer(tx, ps, now); err != nil {
			return err
		}
		conn.Sessions = append(conn.Sessions, placedSession{Player: p, Session: ps.ID})
	}
	d.Players += int32(len(newcomers))
	if d.Matchmaker, err = s.matchmakerData(cfg, md, held, ""); err != nil {
		return err
	}
	if err := s.pushSessionUpdate(tx, d, updateDataUpdated, md.Backfill); err != nil {
		return err
	}
	if err := putDoc(tx, rec, d); err != nil {
		return err
	}
	return s.completeMatchTx(tx, cfg, held, md, conn)
}

// dropBackfillMatch ends a backfill match whose game session cannot take its players: the
// backfill ticket FAILS, the new players' tickets go back to searching.
func (s *Service) dropBackfillMatch(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, md *matchDoc, message string) error {
	if err := deleteIfThere(tx, kindMatch, md.ID); err != nil {
		return err
	}
	var others []heldTicket
	for _, h := range held {
		if !h.t.Backfill {
			others = append(others, h)
			continue
		}
		if err := s.endTicket(tx, h.rec, h.t, ticketFailed, "", message, true); err != nil {
			return err
		}
	}
	return s.requeueTx(tx, cfg, others, "", true)
}

// newPlayers lists the players of a backfill match's new tickets.
func (md *matchDoc) newPlayers(held []heldTicket) []string {
	var out []string
	for _, h := range held {
		if h.t.Backfill {
			continue
		}
		for _, p := range h.t.Players {
			out = append(out, p.ID)
		}
	}
	return out
}

// pushSessionUpdate records the UpdateGameSession push to a game session's process.
func (s *Service) pushSessionUpdate(tx store.Tx, d *gameSessionDoc, reason, ticket string) error {
	body := GameSessionUpdate{GameSession: d.start(), FleetID: d.FleetID, Location: d.Location, Reason: reason, BackfillTicketID: ticket}
	return s.enqueue(tx, ProcessAddress(d.FleetID, d.ProcessID), MessageUpdateGameSession, body, 0)
}

// backfillEnded is the hook of endTicket for a backfill ticket that ends unmatched: the
// game session's process hears why.
func (s *Service) backfillEnded(tx store.Tx, t *ticketDoc) error {
	if !t.Backfill || t.Session == "" {
		return nil
	}
	_, d, err := s.getSession(tx, t.Session)
	if err != nil || !d.live() {
		return nil // the session is gone: nobody to tell
	}
	reason := updateBackfillFailed
	switch t.Status {
	case ticketTimedOut:
		reason = updateBackfillTimedOut
	case ticketCancelled:
		reason = updateBackfillCancelled
	}
	return s.pushSessionUpdate(tx, d, reason, t.ID)
}

// matchedSessionTx records a newly matched game session's matchmaking state, when its
// placement is fulfilled.
func (s *Service) matchedSessionTx(tx store.Tx, cfg *matchConfigDoc, held []heldTicket, key, location string) error {
	ms := &matchSessionDoc{Config: cfg.Name, Latency: map[string]int32{}}
	for _, h := range held {
		for _, p := range h.t.Players {
			if l, ok := p.Latency[location]; ok {
				ms.Latency[p.ID] = l
			}
		}
	}
	return insertDoc(tx, kindMatchSession, key, ms)
}

// autoBackfillTx is the hook of a matched game session's activation and of a player leaving
// it, in their transaction: a configuration with BackfillMode AUTOMATIC files a backfill
// ticket for the players still in the session when it has open slots and no active backfill
// ticket, and MatchmakerData names it.
func (s *Service) autoBackfillTx(tx store.Tx, d *gameSessionDoc, leaving string) error {
	var ms matchSessionDoc
	rec, err := getDoc(tx, kindMatchSession, d.Key, &ms, func() error { return errNoRecord })
	if err != nil || d.Players >= d.Max || d.Status != gsActive || s.activeTicket(tx, ms.Backfill) {
		return ignoreNoRecord(err)
	}
	_, cfg, err := s.matchConfigTx(tx, ms.Config)
	if err != nil || cfg.BackfillMode != string(api.BackfillModeAutomatic) {
		return ignoreNoRecord(err)
	}
	data, err := parseMatchmakerData(d.Matchmaker)
	if err != nil {
		return err
	}
	players, err := s.presentPlayers(tx, d, data.players(d.Location, ms.Latency), leaving)
	if err != nil || len(players) == 0 {
		return err
	}
	t, err := s.startTicketTx(tx, s.newID(), cfg.Name, players, true, d.ARN)
	if err != nil {
		return err
	}
	ms.Backfill = t.ID
	data.AutoTicket = &t.ID
	if d.Matchmaker, err = data.encode(); err != nil {
		return err
	}
	return putDoc(tx, rec, &ms)
}

// matchmakerDataDoc is GameSession.MatchmakerData.
type matchmakerDataDoc struct {
	MatchID    string        `json:"matchId"`
	ConfigARN  string        `json:"matchmakingConfigurationArn"`
	Teams      []matchedTeam `json:"teams"`
	AutoMode   *string       `json:"autoBackfillMode"`
	AutoTicket *string       `json:"autoBackfillTicketId"`
}

type matchedTeam struct {
	Name    string          `json:"name"`
	Players []matchedPlayer `json:"players"`
}

type matchedPlayer struct {
	PlayerID   string                 `json:"playerId"`
	Attributes map[string]matchedAttr `json:"attributes,omitempty"`
}

type matchedAttr struct {
	Type  string `json:"attributeType"`
	Value any    `json:"valueAttribute"`
}

// matchmakerData builds a match's MatchmakerData from its tickets' players and teams.
func (s *Service) matchmakerData(cfg *matchConfigDoc, md *matchDoc, held []heldTicket, autoTicket string) (string, error) {
	data := matchmakerDataDoc{MatchID: md.ID, ConfigARN: cfg.ARN, Teams: make([]matchedTeam, 0, len(md.Teams))}
	if cfg.BackfillMode != "" {
		mode := cfg.BackfillMode
		data.AutoMode = &mode
	}
	if autoTicket != "" {
		data.AutoTicket = &autoTicket
	}
	for _, name := range md.Teams {
		team := matchedTeam{Name: name, Players: []matchedPlayer{}}
		for _, h := range held {
			for _, p := range h.t.Players {
				if p.Team == name {
					team.Players = append(team.Players, matchedPlayer{PlayerID: p.ID, Attributes: matchedAttrs(p.Attrs)})
				}
			}
		}
		data.Teams = append(data.Teams, team)
	}
	return data.encode()
}

// encode renders MatchmakerData.
func (m *matchmakerDataDoc) encode() (string, error) {
	b, err := json.Marshal(m)
	return string(b), err
}

// matchedAttrs converts attribute values to MatchmakerData's typed form.
func matchedAttrs(attrs map[string]api.AttributeValue) map[string]matchedAttr {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]matchedAttr, len(attrs))
	for name, v := range attrs {
		switch {
		case v.S != nil:
			out[name] = matchedAttr{"STRING", *v.S}
		case v.N != nil:
			out[name] = matchedAttr{"DOUBLE", *v.N}
		case v.SL != nil:
			out[name] = matchedAttr{"STRING_LIST", v.SL}
		default:
			out[name] = matchedAttr{"STRING_DOUBLE_MAP", v.SDM}
		}
	}
	return out
}

// parseMatchmakerData reads MatchmakerData.
func parseMatchmakerData(s string) (*matchmakerDataDoc, error) {
	var m matchmakerDataDoc
	return &m, json.Unmarshal([]byte(s), &m)
}

// players turns MatchmakerData back into backfill players, each with their team and their
// latency in the game session's location.
func (m *matchmakerDataDoc) players(location string, latency map[string]int32) []api.Player {
	var out []api.Player
	for _, team := range m.Teams {
		for _, p := range team.Players {
			ap := api.Player{PlayerId: api.String(p.PlayerID), Team: api.String(team.Name), PlayerAttributes: apiAttrs(p.Attributes)}
			if l, ok := latency[p.PlayerID]; ok {
				ap.LatencyInMs = map[string]int32{location: l}
			}
			out = append(out, ap)
		}
	}
	return out
}

// apiAttrs converts MatchmakerData attributes back to AttributeValues.
func apiAttrs(attrs map[string]matchedAttr) map[string]api.AttributeValue {
	out := make(map[string]api.AttributeValue, len(attrs))
	for name, a := range attrs {
		var v api.AttributeValue
		raw, _ := json.Marshal(a.Value)
		switch a.Type {
		case "STRING":
			v.S = new(string)
			_ = json.Unmarshal(raw, v.S)
		case "DOUBLE":
			v.N = new(float64)
			_ = json.Unmarshal(raw, v.N)
		case "STRING_LIST":
			_ = json.Unmarshal(raw, &v.SL)
		default:
			_ = json.Unmarshal(raw, &v.SDM)
		}
		out[name] = v
	}
	return out
}

// ProcessStartBackfill is the Server SDK's StartMatchBackfill: a process asks for players
// for the game session it hosts.
func (s *Service) ProcessStartBackfill(ctx context.Context, ref ProcessRef, in *api.StartMatchBackfillInput) (*api.MatchmakingTicket, error) {
	if err := s.hostsSession(ctx, ref, api.Deref(in.GameSessionArn)); err != nil {
		return nil, err
	}
	out, err := s.StartMatchBackfill(ctx, in)
	if err != nil {
		return nil, err
	}
	return out.MatchmakingTicket, nil
}

// ProcessStopBackfill is the Server SDK's StopMatchBackfill: a process cancels the backfill
// ticket of the game session it hosts.
func (s *Service) ProcessStopBackfill(ctx context.Context, ref ProcessRef, session, ticket string) error {
	if err := s.hostsSession(ctx, ref, session); err != nil {
		return err
	}
	var t ticketDoc
	if err := s.read(ctx, kindMatchTicket, ticket, &t, ticketNotFound(ticket)); err != nil {
		return err
	}
	if !t.Backfill || t.Session != session {
		return api.Errorf(api.InvalidRequestException, "Ticket %s is not a backfill ticket of game session %s.", ticket, session)
	}
	_, err := s.StopMatchmaking(ctx, &api.StopMatchmakingInput{TicketId: api.String(ticket)})
	return err
}

// hostsSession checks that a process hosts a game session.
func (s *Service) hostsSession(ctx context.Context, ref ProcessRef, arn string) error {
	d, err := s.readSession(ctx, arn)
	if err != nil {
		return err
	}
	if d.FleetID != ref.FleetID || d.ProcessID != ref.ProcessID {
		return api.Errorf(api.InvalidRequestException, "Game session %s is not hosted by this process.", arn)
	}
	return nil
}

// activeTicket reports whether a ticket exists and has not ended.
func (s *Service) activeTicket(tx store.Tx, id string) bool {
	if id == "" {
		return false
	}
	var t ticketDoc
	_, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
	return err == nil && t.active()
}

// presentPlayers keeps the players that still have a RESERVED or ACTIVE player session in
// the game session (MatchmakerData is not updated when players leave), but for leaving, whose
// session is ending in this transaction.
func (s *Service) presentPlayers(tx store.Tx, d *gameSessionDoc, players []api.Player, leaving string) ([]api.Player, error) {
	present := map[string]bool{}
	err := eachChild(tx, kindPlayerSession, d.Key, func(_ *store.Record, ps *playerSessionDoc) error {
		if (ps.Status == psReserved || ps.Status == psActive) && ps.PlayerID != leaving {
			present[ps.PlayerID] = true
		}
		return nil
	})
	out := players[:0]
	for _, p := range players {
		if present[api.Deref(p.PlayerId)] {
			out = append(out, p)
		}
	}
	return out, err
}

// playerLeftTx is the hook of a player session ending in a matched game session: automatic
// backfill looks for a replacement. The leaving player's session may still be stored as it
// was, so it is left out by name.
func (s *Service) playerLeftTx(tx store.Tx, d *gameSessionDoc, player string) error {
	if d.Matchmaker == "" {
		return nil
	}
	return s.autoBackfillTx(tx, d, player)
}

// matchedSessionEnded is the hook of a game session ending, in its transaction: its backfill
// ticket is cancelled.
func (s *Service) matchedSessionEnded(tx store.Tx, d *gameSessionDoc) error {
	var ms matchSessionDoc
	_, err := getDoc(tx, kindMatchSession, d.Key, &ms, func() error { return errNoRecord })
	if err != nil {
		return ignoreNoRecord(err)
	}
	return s.cancelBackfill(tx, ms.Backfill)
}
