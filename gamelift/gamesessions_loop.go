package gamelift

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// SessionMonitor is the loop behind the timers of game and player sessions:
//
//   - a game session still ACTIVATING when its activation timeout passes is TERMINATED, with a
//     GAME_SESSION_ACTIVATION_TIMEOUT fleet event, and its process is told to terminate (the
//     SDK tracks one game session per process, so the process is of no further use);
//   - a player session still RESERVED 60 s after it was created is TIMEDOUT, freeing its slot;
//   - ended game sessions, with their player sessions, are purged once the retention period
//     (30 days) has passed, which frees their idempotency tokens.
//
// Only timer records are scanned (gsactivation, psreservation, gsended), never all sessions.
// Each transition re-reads its records and writes with compare-and-set, so Step may run on
// several nodes at once.
type SessionMonitor struct{ s *Service }

// SessionMonitor returns the monitor of s's game and player sessions.
func (s *Service) SessionMonitor() *SessionMonitor { return &SessionMonitor{s: s} }

// Run calls Step every interval of the Service's clock until ctx is done, passing Step's
// errors to onError (which may be nil).
func (m *SessionMonitor) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	clock.Every(ctx, m.s.clock, interval, m.Step, onError)
}

// Step makes every transition due at the clock's current time; errors are joined, and one
// failure does not stop the others.
func (m *SessionMonitor) Step(ctx context.Context) error {
	now := m.s.nowMillis()
	activations, err := m.due(ctx, kindActivation, now, false)
	if err != nil {
		return err
	}
	reservations, err := m.due(ctx, kindReservation, now, true)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range activations {
		errs = append(errs, m.activationTimeout(ctx, key, now))
	}
	for _, id := range reservations {
		errs = append(errs, m.s.timeOutPlayer(ctx, id, now))
	}
	errs = append(errs, m.purge(ctx, now))
	return errors.Join(errs...)
}

// due lists the IDs of the timer records of kind whose time has come. ordered means the
// records' times grow with their insertion order, so the scan stops at the first not due.
func (m *SessionMonitor) due(ctx context.Context, kind string, now int64, ordered bool) ([]string, error) {
	var ids []string
	err := m.s.view(ctx, func(tx store.Tx) error {
		ids = nil
		recs, err := tx.List(kind, store.ListOptions{})
		if err != nil {
			return err
		}
		for _, r := range recs {
			var d deadlineDoc
			if err := unmarshal(r.Data, &d); err != nil {
				return err
			}
			if d.At <= now {
				ids = append(ids, r.ID)
			} else if ordered {
				return nil
			}
		}
		return nil
	})
	return ids, err
}

// activationTimeout ends a game session that did not activate in time.
func (m *SessionMonitor) activationTimeout(ctx context.Context, key string, now int64) error {
	err := m.s.update(ctx, func(tx store.Tx) error {
		var t deadlineDoc
		if _, err := getDoc(tx, kindActivation, key, &t, func() error { return errUnchanged }); err != nil {
			return err
		}
		if t.At > now {
			return errUnchanged
		}
		var d gameSessionDoc
		rec, err := getDoc(tx, kindGameSession, key, &d, func() error { return errNoRecord })
		if errors.Is(err, errNoRecord) || (err == nil && d.Status != gsActivating) {
			return tx.Delete(kindActivation, key)
		}
		if err != nil {
			return err
		}
		msg := fmt.Sprintf("Game session %s did not activate within its activation timeout on server process %s.", d.ARN, d.ProcessID)
		if err := m.s.addEvent(tx, d.FleetID, api.EventCodeGameSessionActivationTimeout, msg); err != nil {
			return err
		}
		if err := m.s.endSession(tx, rec, &d, ""); err != nil {
			return err
		}
		if err := deleteIfThere(tx, kindProcessSession, d.processKey()); err != nil {
			return err
		}
		return m.s.terminateHost(tx, &d)
	})
	return ignoreUnchanged(err)
}

// purgeBatch bounds the sessions one purge transaction deletes.
const purgeBatch = 200

// purge deletes game sessions that ended more than the retention period ago, with their player
// sessions, player index entries and creator records.
func (m *SessionMonitor) purge(ctx context.Context, now int64) error {
	cutoff := now - m.s.sessions.retention.Milliseconds()
	if old, err := m.due(ctx, kindSessionEnded, cutoff-1, true); err != nil || len(old) == 0 {
		return err // nothing to purge: no write transaction
	}
	for {
		var gone []string
		err := m.s.update(ctx, func(tx store.Tx) error {
			gone = nil
			recs, err := tx.List(kindSessionEnded, store.ListOptions{Limit: purgeBatch})
			if err != nil {
				return err
			}
			for _, r := range recs {
				var e deadlineDoc
				if err := unmarshal(r.Data, &e); err != nil {
					return err
				}
				if e.At >= cutoff {
					break
				}
				if err := m.purgeSession(tx, r.ID); err != nil {
					return err
				}
				gone = append(gone, r.ID)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(gone) < purgeBatch {
			return nil
		}
	}
}

// purgeSession deletes one ended game session and everything that belongs to it.
func (m *SessionMonitor) purgeSession(tx store.Tx, key string) error {
	var d gameSessionDoc
	_, err := getDoc(tx, kindGameSession, key, &d, func() error { return errNoRecord })
	if err != nil && !errors.Is(err, errNoRecord) {
		return err
	}
	err = eachChild(tx, kindPlayerSession, key, func(r *store.Record, ps *playerSessionDoc) error {
		for _, k := range [][2]string{{kindPlayerSession, r.ID}, {kindPlayerIndex, r.ID}, {kindReservation, r.ID}} {
			if err := deleteIfThere(tx, k[0], k[1]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, kind := range []string{kindGameSession, kindCreatorLog, kindActivation, kindSessionEnded} {
		if err := deleteIfThere(tx, kind, key); err != nil {
			return err
		}
	}
	return nil
}
