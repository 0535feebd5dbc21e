package gamelift

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Player session statuses, as stored and on the wire.
const (
	psReserved  = string(api.PlayerSessionStatusReserved)
	psActive    = string(api.PlayerSessionStatusActive)
	psCompleted = string(api.PlayerSessionStatusCompleted)
	psTimedOut  = string(api.PlayerSessionStatusTimedout)
)

// playerSessionDoc is a player session as stored (kindPlayerSession, Parent = the game
// session key). Times are Unix milliseconds.
type playerSessionDoc struct {
	ID          string `json:"id"`
	PlayerID    string `json:"playerId"`
	SessionKey  string `json:"session"`
	GameSession string `json:"gameSessionArn"`
	FleetID     string `json:"fleetId"`
	Status      string `json:"status"`
	Data        string `json:"data,omitempty"`
	IP          string `json:"ip,omitempty"`
	DNS         string `json:"dns,omitempty"`
	Port        int    `json:"port,omitempty"`
	Created     int64  `json:"created"`
	Ended       int64  `json:"ended,omitempty"`
}

func playerSessionNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Player session %s not found.", id) }
}

// apiPlayerSession returns the PlayerSession of a stored one.
func (s *Service) apiPlayerSession(d *playerSessionDoc) api.PlayerSession {
	status := api.PlayerSessionStatus(d.Status)
	ps := api.PlayerSession{
		PlayerSessionId: api.String(d.ID), PlayerId: api.String(d.PlayerID), GameSessionId: api.String(d.GameSession),
		FleetId: api.String(d.FleetID), FleetArn: api.String(s.arn(arnFleet, d.FleetID)), CreationTime: stamp(d.Created),
		Status: &status, IpAddress: optional(d.IP), DnsName: optional(d.DNS), PlayerData: optional(d.Data),
	}
	if d.Port != 0 {
		ps.Port = api.Int32(int32(d.Port))
	}
	if d.Ended != 0 {
		ps.TerminationTime = stamp(d.Ended)
	}
	return ps
}

// CreatePlayerSession reserves a slot in an ACTIVE game session for one player; see
// CreatePlayerSessions.
func (s *Service) CreatePlayerSession(ctx context.Context, in *api.CreatePlayerSessionInput) (*api.CreatePlayerSessionOutput, error) {
	data := map[string]string{}
	if in.PlayerData != nil {
		data[api.Deref(in.PlayerId)] = *in.PlayerData
	}
	out, err := s.createPlayers(ctx, api.Deref(in.GameSessionId), []string{api.Deref(in.PlayerId)}, data)
	if err != nil {
		return nil, err
	}
	return &api.CreatePlayerSessionOutput{PlayerSession: &out[0]}, nil
}

// CreatePlayerSessions reserves slots in a game session for 1-25 players. The game session
// must be ACTIVE (else InvalidGameSessionStatusException), accept new players (a DENY_ALL
// policy is GameSessionFullException) and have a slot for every player
// (GameSessionFullException). Each player session is RESERVED until the game server accepts
// it, and TIMEDOUT if it does not within 60 seconds. PlayerDataMap entries of players not in
// PlayerIds are ignored.
func (s *Service) CreatePlayerSessions(ctx context.Context, in *api.CreatePlayerSessionsInput) (*api.CreatePlayerSessionsOutput, error) {
	out, err := s.createPlayers(ctx, api.Deref(in.GameSessionId), in.PlayerIds, in.PlayerDataMap)
	if err != nil {
		return nil, err
	}
	return &api.CreatePlayerSessionsOutput{PlayerSessions: out}, nil
}

func (s *Service) createPlayers(ctx context.Context, gameSessionID string, players []string, data map[string]string) ([]api.PlayerSession, error) {
	ids := make([]string, len(players))
	for i := range ids {
		ids[i] = "psess-" + s.sessionID()
	}
	var made []*playerSessionDoc
	err := s.update(ctx, func(tx store.Tx) error {
		made = made[:0]
		rec, gs, err := s.getSession(tx, gameSessionID)
		if err != nil {
			return err
		}
		if err := admits(gs, len(players)); err != nil {
			return err
		}
		now := s.nowMillis()
		for i, p := range players {
			ps := &playerSessionDoc{ID: ids[i], PlayerID: p, SessionKey: gs.Key, GameSession: gs.ARN, FleetID: gs.FleetID,
				Status: psReserved, Data: data[p], IP: gs.IP, DNS: gs.DNS, Port: gs.Port, Created: now}
			if err := s.insertPlayer(tx, ps, now); err != nil {
				return err
			}
			made = append(made, ps)
		}
		gs.Players += int32(len(players))
		return putDoc(tx, rec, gs)
	})
	if err != nil {
		return nil, err
	}
	out := make([]api.PlayerSession, len(made))
	for i, ps := range made {
		out[i] = s.apiPlayerSession(ps)
	}
	return out, nil
}

// admits checks that a game session takes n more players.
func admits(gs *gameSessionDoc, n int) error {
	switch {
	case gs.Status != gsActive:
		return api.Errorf(api.InvalidGameSessionStatusException,
			"Game session %s is %s; player sessions can be created only in an ACTIVE game session.", gs.ARN, gs.Status)
	case gs.Policy == string(api.PlayerSessionCreationPolicyDenyAll):
		return api.Errorf(api.GameSessionFullException,
			"Game session %s is not accepting new players (PlayerSessionCreationPolicy DENY_ALL).", gs.ARN)
	case int(gs.Players)+n > int(gs.Max):
		return api.Errorf(api.GameSessionFullException,
			"Game session %s has %d of %d player slots taken; %d more do not fit.", gs.ARN, gs.Players, gs.Max, n)
	}
	return nil
}

// insertPlayer writes a new RESERVED player session with its reservation timer and its entry
// in the player index.
func (s *Service) insertPlayer(tx store.Tx, ps *playerSessionDoc, now int64) error {
	if err := insertChild(tx, kindPlayerSession, ps.ID, ps.SessionKey, ps); err != nil {
		return err
	}
	deadline := now + s.sessions.reservationTimeout.Milliseconds()
	if err := insertDoc(tx, kindReservation, ps.ID, &deadlineDoc{At: deadline, Key: ps.SessionKey}); err != nil {
		return err
	}
	return insertChild(tx, kindPlayerIndex, ps.ID, "p/"+ps.PlayerID, &keyDoc{Key: ps.SessionKey})
}

// AcceptPlayerSession records the game server's AcceptPlayerSession: a RESERVED player
// session of a game session the process hosts becomes ACTIVE. Any other status (ACTIVE,
// COMPLETED, TIMEDOUT) is InvalidRequestException, so the game can turn the player away.
func (s *Service) AcceptPlayerSession(ctx context.Context, ref ProcessRef, gameSessionID, playerSessionID string) error {
	return s.changePlayer(ctx, ref, gameSessionID, playerSessionID, func(tx store.Tx, gs *gameSessionDoc, ps *playerSessionDoc) (bool, error) {
		if ps.Status != psReserved {
			return false, api.Errorf(api.InvalidRequestException,
				"Player session %s is %s; only a RESERVED player session can be accepted.", ps.ID, ps.Status)
		}
		if gs.Status != gsActive {
			return false, api.Errorf(api.InvalidRequestException, "Game session %s is %s.", gs.ARN, gs.Status)
		}
		ps.Status = psActive
		return false, deleteIfThere(tx, kindReservation, ps.ID)
	})
}

// RemovePlayerSession records the game server's RemovePlayerSession: a RESERVED or ACTIVE
// player session becomes COMPLETED and frees its slot. Others are InvalidRequestException.
func (s *Service) RemovePlayerSession(ctx context.Context, ref ProcessRef, gameSessionID, playerSessionID string) error {
	return s.changePlayer(ctx, ref, gameSessionID, playerSessionID, func(tx store.Tx, gs *gameSessionDoc, ps *playerSessionDoc) (bool, error) {
		if ps.Status != psReserved && ps.Status != psActive {
			return false, api.Errorf(api.InvalidRequestException,
				"Player session %s is %s; only a RESERVED or ACTIVE player session can be removed.", ps.ID, ps.Status)
		}
		ps.Status, ps.Ended = psCompleted, s.nowMillis()
		gs.Players = max(gs.Players-1, 0)
		if err := deleteIfThere(tx, kindReservation, ps.ID); err != nil {
			return false, err
		}
		return true, s.playerLeftTx(tx, gs, ps.PlayerID)
	})
}

// changePlayer runs change on a player session of a game session that ref hosts and writes
// the player session back, and the game session too when change reports it changed.
func (s *Service) changePlayer(ctx context.Context, ref ProcessRef, gameSessionID, playerSessionID string,
	change func(store.Tx, *gameSessionDoc, *playerSessionDoc) (bool, error)) error {
	return s.update(ctx, func(tx store.Tx) error {
		rec, gs, err := s.hostedSession(tx, ref, gameSessionID)
		if err != nil {
			return err
		}
		var ps playerSessionDoc
		prec, err := getDoc(tx, kindPlayerSession, playerSessionID, &ps, playerSessionNotFound(playerSessionID))
		if err != nil {
			return err
		}
		if ps.SessionKey != gs.Key {
			return api.Errorf(api.InvalidRequestException, "Player session %s does not belong to game session %s.", playerSessionID, gameSessionID)
		}
		gsChanged, err := change(tx, gs, &ps)
		if err != nil {
			return err
		}
		if err := putDoc(tx, prec, &ps); err != nil {
			return err
		}
		if gsChanged {
			return putDoc(tx, rec, gs)
		}
		return nil
	})
}

// UpdatePlayerSessionCreationPolicy records the game server's same-named call: ACCEPT_ALL or
// DENY_ALL for the game session it hosts.
func (s *Service) UpdatePlayerSessionCreationPolicy(ctx context.Context, ref ProcessRef, gameSessionID, policy string) error {
	if policy != string(api.PlayerSessionCreationPolicyAcceptAll) && policy != string(api.PlayerSessionCreationPolicyDenyAll) {
		return api.Errorf(api.InvalidRequestException, "PlayerSessionPolicy %q is not ACCEPT_ALL or DENY_ALL.", policy)
	}
	return s.update(ctx, func(tx store.Tx) error {
		rec, gs, err := s.hostedSession(tx, ref, gameSessionID)
		if err != nil {
			return err
		}
		if !gs.live() {
			return api.Errorf(api.InvalidRequestException, "Game session %s is %s.", gs.ARN, gs.Status)
		}
		gs.Policy = policy
		return putDoc(tx, rec, gs)
	})
}

// timeOutPlayer makes a player session whose reservation has passed TIMEDOUT, freeing its
// slot; one accepted, removed or completed meanwhile is left alone.
func (s *Service) timeOutPlayer(ctx context.Context, id string, now int64) error {
	err := s.update(ctx, func(tx store.Tx) error {
		var r deadlineDoc
		if _, err := getDoc(tx, kindReservation, id, &r, func() error { return errUnchanged }); err != nil {
			return err
		}
		if r.At > now {
			return errUnchanged
		}
		if err := tx.Delete(kindReservation, id); err != nil {
			return err
		}
		var ps playerSessionDoc
		prec, err := getDoc(tx, kindPlayerSession, id, &ps, func() error { return errNoRecord })
		if errors.Is(err, errNoRecord) || (err == nil && ps.Status != psReserved) {
			return nil
		}
		if err != nil {
			return err
		}
		ps.Status, ps.Ended = psTimedOut, now
		s.logAction(tx, "player session timed out", slog.String("player_session", ps.ID), slog.String("player", ps.PlayerID))
		if err := putDoc(tx, prec, &ps); err != nil {
			return err
		}
		var gs gameSessionDoc
		rec, err := getDoc(tx, kindGameSession, ps.SessionKey, &gs, func() error { return errNoRecord })
		if err != nil {
			return ignoreMissing(err)
		}
		gs.Players = max(gs.Players-1, 0)
		if err := s.playerLeftTx(tx, &gs, ps.PlayerID); err != nil {
			return err
		}
		return putDoc(tx, rec, &gs)
	})
	return ignoreUnchanged(err)
}

// ignoreMissing turns errNoRecord into success.
func ignoreMissing(err error) error {
	if errors.Is(err, errNoRecord) {
		return nil
	}
	return err
}
