package gamelift

import (
	"context"
	"errors"
	"log/slog"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// errNoRecord is the notFound answer of reads that treat a missing record as normal.
var errNoRecord = errors.New("no record")

// ActivateGameSession records the hosting process's ActivateGameSession: an ACTIVATING
// session becomes ACTIVE and open to player sessions. Activating an ACTIVE session again is
// harmless; a session that has ended, or is hosted by another process, is
// InvalidRequestException.
func (s *Service) ActivateGameSession(ctx context.Context, ref ProcessRef, gameSessionID string) error {
	err := s.update(ctx, func(tx store.Tx) error {
		rec, d, err := s.hostedSession(tx, ref, gameSessionID)
		if err != nil {
			return err
		}
		switch d.Status {
		case gsActive:
			return errUnchanged
		case gsActivating:
		default:
			return api.Errorf(api.InvalidRequestException, "Game session %s is %s and cannot be activated.", d.ARN, d.Status)
		}
		d.Status, d.Activated = gsActive, s.nowMillis()
		if err := deleteIfThere(tx, kindActivation, d.Key); err != nil {
			return err
		}
		if d.Placement != "" {
			if err := s.placementActivated(tx, d, d.Activated); err != nil {
				return err
			}
		}
		_, c, err := readCompute(tx, d.FleetID, d.Compute)
		if err != nil {
			return err
		}
		if err := s.tellAgent(tx, c, MessageAgentSessionActivated, AgentNotice{ProcessID: d.ProcessID, GameSessionID: d.ARN}); err != nil {
			return err
		}
		return putDoc(tx, rec, d)
	})
	return ignoreUnchanged(err)
}

// hostedSession reads a game session that the process ref hosts.
func (s *Service) hostedSession(tx store.Tx, ref ProcessRef, gameSessionID string) (*store.Record, *gameSessionDoc, error) {
	rec, d, err := s.getSession(tx, gameSessionID)
	if err != nil {
		return nil, nil, err
	}
	if d.FleetID != ref.FleetID || d.ProcessID != ref.ProcessID || d.Compute != ref.ComputeName {
		return nil, nil, api.Errorf(api.InvalidRequestException,
			"Game session %s is not hosted by server process %s.", gameSessionID, ref.ProcessID)
	}
	return rec, d, nil
}

// GameSessionProcess names the server process that hosts (or hosted) a game session.
func (s *Service) GameSessionProcess(ctx context.Context, gameSessionID string) (ProcessRef, error) {
	d, err := s.readSession(ctx, gameSessionID)
	if err != nil {
		return ProcessRef{}, err
	}
	return ProcessRef{FleetID: d.FleetID, ComputeName: d.Compute, ProcessID: d.ProcessID}, nil
}

// UpdateGameSession changes a live (ACTIVATING or ACTIVE) game session's name, maximum
// players, player session creation policy, protection policy and game properties (added or
// overwritten, never removed). Nothing is pushed to the process: GameLift's UpdateGameSession
// push carries matchmaking updates only (server-sdk-protocol.md §4, §5.4).
func (s *Service) UpdateGameSession(ctx context.Context, in *api.UpdateGameSessionInput) (*api.UpdateGameSessionOutput, error) {
	if m := in.MaximumPlayerSessionCount; m != nil && *m > maxPlayersPerSession {
		return nil, api.Errorf(api.InvalidRequestException,
			"MaximumPlayerSessionCount %d is over the limit of %d players per game session.", *m, maxPlayersPerSession)
	}
	var out *gameSessionDoc
	err := s.update(ctx, func(tx store.Tx) error {
		rec, d, err := s.getSession(tx, api.Deref(in.GameSessionId))
		if err != nil {
			return err
		}
		if !d.live() {
			return api.Errorf(api.InvalidGameSessionStatusException, "Game session %s is %s and cannot be updated.", d.ARN, d.Status)
		}
		if d.Props, err = mergeProperties(d.Props, in.GameProperties); err != nil {
			return err
		}
		d.Name = orString(api.Deref(in.Name), d.Name)
		d.Policy = orString(string(api.Deref(in.PlayerSessionCreationPolicy)), d.Policy)
		d.Protection = orString(string(api.Deref(in.ProtectionPolicy)), d.Protection)
		if in.MaximumPlayerSessionCount != nil {
			d.Max = *in.MaximumPlayerSessionCount
		}
		out = d
		return putDoc(tx, rec, d)
	})
	if err != nil {
		return nil, err
	}
	gs := s.apiGameSession(out)
	return &api.UpdateGameSessionOutput{GameSession: &gs}, nil
}

func orString(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// TerminateGameSession ends a game session. TRIGGER_ON_PROCESS_TERMINATE makes it TERMINATING
// and tells its process to terminate (OnProcessTerminate); it is TERMINATED, with that reason,
// when the process ends. FORCE_TERMINATE makes it TERMINATED at once (FORCE_TERMINATED) and
// tells the process to terminate; the server also has the compute's agent stop the process.
// A TERMINATED session is InvalidGameSessionStatusException.
func (s *Service) TerminateGameSession(ctx context.Context, in *api.TerminateGameSessionInput) (*api.TerminateGameSessionOutput, error) {
	force := api.Deref(in.TerminationMode) == api.TerminationModeForceTerminate
	var out *gameSessionDoc
	err := s.update(ctx, func(tx store.Tx) error {
		rec, d, err := s.getSession(tx, api.Deref(in.GameSessionId))
		if err != nil {
			return err
		}
		out = d
		switch {
		case d.Status == gsTerminated:
			return api.Errorf(api.InvalidGameSessionStatusException, "Game session %s is already TERMINATED.", d.ARN)
		case d.Status == gsTerminating && !force:
			return errUnchanged
		case force:
			if err := s.endSession(tx, rec, d, string(api.GameSessionStatusReasonForceTerminated)); err != nil {
				return err
			}
			if err := deleteIfThere(tx, kindProcessSession, d.processKey()); err != nil {
				return err
			}
			if err := s.forceExit(tx, d); err != nil {
				return err
			}
		default:
			d.Status, d.Reason = gsTerminating, string(api.GameSessionStatusReasonTriggeredOnProcessTerminate)
			if err := putDoc(tx, rec, d); err != nil {
				return err
			}
		}
		return s.terminateHost(tx, d)
	})
	if err = ignoreUnchanged(err); err != nil {
		return nil, err
	}
	gs := s.apiGameSession(out)
	return &api.TerminateGameSessionOutput{GameSession: &gs}, nil
}

// forceExit tells the agent of d's compute, if it has one, to stop d's process at once.
func (s *Service) forceExit(tx store.Tx, d *gameSessionDoc) error {
	_, c, err := readCompute(tx, d.FleetID, d.Compute)
	if err != nil {
		return err
	}
	return s.tellAgent(tx, c, MessageAgentForceExit, AgentNotice{ProcessID: d.ProcessID,
		Reason: string(api.GameSessionStatusReasonForceTerminated)})
}

// terminateHost marks the process hosting d TERMINATING, when it is still running.
func (s *Service) terminateHost(tx store.Tx, d *gameSessionDoc) error {
	var p processDoc
	rec, err := getDoc(tx, kindProcess, d.processKey(), &p, func() error { return errNoRecord })
	if errors.Is(err, errNoRecord) {
		return nil
	}
	if err != nil || (p.Status != processActive && p.Status != processInitializing) {
		return err
	}
	return s.markTerminating(tx, rec, &p, "", "")
}

// processEnded is the end-of-life hook of a server process, called in the transaction that
// makes it TERMINATED: the process leaves the free list and the game session it hosts ends
// (TERMINATED, its player sessions COMPLETED).
func (s *Service) processEnded(tx store.Tx, p *processDoc) error {
	if err := s.withdrawProcess(tx, p); err != nil {
		return err
	}
	if err := s.tally(tx, tallyFleet, p.FleetID, func(d *tallyDoc) { d.add(tallyTerminations, 1) }); err != nil {
		return err
	}
	key := processKey(p.FleetID, p.ProcessID)
	var link keyDoc
	_, err := getDoc(tx, kindProcessSession, key, &link, func() error { return errNoRecord })
	if errors.Is(err, errNoRecord) {
		return nil
	}
	if err != nil {
		return err
	}
	var d gameSessionDoc
	rec, err := getDoc(tx, kindGameSession, link.Key, &d, func() error { return errNoRecord })
	if err == nil && d.Status != gsTerminated {
		err = s.endSession(tx, rec, &d, d.Reason)
	}
	if err != nil && !errors.Is(err, errNoRecord) {
		return err
	}
	return tx.Delete(kindProcessSession, key)
}

// endSession makes a game session TERMINATED now with reason (may be empty), completes its
// RESERVED and ACTIVE player sessions, and starts its retention period.
func (s *Service) endSession(tx store.Tx, rec *store.Record, d *gameSessionDoc, reason string) error {
	now := s.nowMillis()
	d.Status, d.Reason, d.Ended, d.Players = gsTerminated, reason, now, 0
	s.logAction(tx, "game session ended", slog.String("game_session", d.ARN), slog.String("reason", reason))
	if err := deleteIfThere(tx, kindActivation, d.Key); err != nil {
		return err
	}
	err := eachChild(tx, kindPlayerSession, d.Key, func(r *store.Record, ps *playerSessionDoc) error {
		if ps.Status != psReserved && ps.Status != psActive {
			return nil
		}
		ps.Status, ps.Ended = psCompleted, now
		if err := deleteIfThere(tx, kindReservation, ps.ID); err != nil {
			return err
		}
		return putDoc(tx, r, ps)
	})
	if err != nil {
		return err
	}
	if err := insertDoc(tx, kindSessionEnded, d.Key, &deadlineDoc{At: now, Key: d.Key}); err != nil && !errors.Is(err, store.ErrExists) {
		return err
	}
	if err := s.placementSessionEnded(tx, d); err != nil {
		return err
	}
	if err := s.matchedSessionEnded(tx, d); err != nil {
		return err
	}
	return putDoc(tx, rec, d)
}
