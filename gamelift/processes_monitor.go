package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// processRetention is how long a TERMINATED process record is kept before the monitor purges
// it.
const processRetention = time.Hour

// ProcessMonitor is the loop behind the timers of server processes and fleet deletion:
//
//	INITIALIZING ──ProcessReady──▶ ACTIVE ──ProcessEnding──────────────▶ TERMINATED
//	     │ no ProcessReady             │ unhealthy or silent                ▲
//	     │ within ProcessReadyTimeout  │ for 3 health periods               │ ended, exited,
//	     ▼                             ▼                                    │ or grace over
//	     └────────────────────▶ TERMINATING (TerminateProcess pushed) ──────┘
//
// and DELETING fleets become TERMINATED once their processes have ended or the grace period
// has passed. It also purges expired auth tokens and old TERMINATED process records.
//
// Every transition re-reads the record and is written with compare-and-set, and its fleet
// event is written in the same transaction, so Step running on several server nodes at once
// makes each transition (and pushes each TerminateProcess) once.
//
// A process is not ended for health reports Hoist could not record. While the store is
// unavailable the reports fail, so the monitor counts a process's silence at the earliest
// from when its node last found the store unavailable (Service.unavailableAt), or from when
// it started running (on the node that leads: after an outage of PostgreSQL that is when
// some node leads again). A healthy process reports again within one health period; one
// that does not is ended a whole health timeout after the store came back.
type ProcessMonitor struct {
	s *Service
	// started (Unix milliseconds) is when Run last started.
	started atomic.Int64
}

// ProcessMonitor returns the monitor of s's server processes.
func (s *Service) ProcessMonitor() *ProcessMonitor { return &ProcessMonitor{s: s} }

// Run calls Step every interval of the Service's clock until ctx is done, passing Step's
// errors to onError (which may be nil).
func (m *ProcessMonitor) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	m.started.Store(m.s.nowMillis())
	clock.Every(ctx, m.s.clock, interval, m.Step, onError)
}

// Step makes every transition that is due at the clock's current time. It returns store
// errors and TerminateProcess delivery errors, joined; a failure on one process does not stop
// the others.
func (m *ProcessMonitor) Step(ctx context.Context) error {
	now := m.s.nowMillis()
	due, deleting, err := m.scan(ctx, now)
	if err != nil {
		return err
	}
	var errs []error
	for _, key := range due {
		errs = append(errs, m.advance(ctx, key, now))
	}
	for _, id := range deleting {
		errs = append(errs, m.finishDeletion(ctx, id, now))
	}
	errs = append(errs, m.s.purgeExpiredTokens(ctx), m.purgeProcesses(ctx, now))
	return errors.Join(errs...)
}

// scan finds, in one read-only transaction, the processes with a transition due and the
// fleets being deleted.
func (m *ProcessMonitor) scan(ctx context.Context, now int64) (due, deleting []string, err error) {
	err = m.s.view(ctx, func(tx store.Tx) error {
		due, deleting = nil, nil
		if err := eachRecord(tx, kindProcess, func(r *store.Record, p *processDoc) {
			if _, ok := m.s.hosting.verdict(p, now, m.silentFrom()); ok {
				due = append(due, r.ID)
			}
		}); err != nil {
			return err
		}
		return eachRecord(tx, kindFleet, func(_ *store.Record, f *fleetDoc) {
			if f.Status == fleetDeleting {
				deleting = append(deleting, f.ID)
			}
		})
	})
	return due, deleting, err
}

// silentFrom returns when health silence starts to count at the earliest (Unix milliseconds).
func (m *ProcessMonitor) silentFrom() int64 {
	return max(m.started.Load(), m.s.unavailableAt.Load())
}

// eachRecord calls fn for every record of kind, decoded into a T.
func eachRecord[T any](tx store.Tx, kind string, fn func(*store.Record, *T)) error {
	recs, err := tx.List(kind, store.ListOptions{})
	if err != nil {
		return err
	}
	for _, r := range recs {
		doc := new(T)
		if err := json.Unmarshal(r.Data, doc); err != nil {
			return err
		}
		fn(r, doc)
	}
	return nil
}

// verdict is a due transition of a process.
type verdict struct {
	next string        // the status it moves to
	code api.EventCode // the fleet event recording it
	msg  string
}

// verdict decides the transition due for p at now, if any: the whole health policy. Health
// silence counts from silentFrom at the earliest (ProcessMonitor).
func (h hosting) verdict(p *processDoc, now, silentFrom int64) (verdict, bool) {
	since := func(ms int64) time.Duration { return time.Duration(now-ms) * time.Millisecond }
	switch p.Status {
	case processInitializing:
		if since(p.ConnectedAt) >= h.readyTimeout {
			return verdict{processTerminating, api.EventCodeServerProcessProcessReadyTimeout,
				fmt.Sprintf("%s did not call ProcessReady within %s of connecting.", p.describe(), h.readyTimeout)}, true
		}
	case processActive:
		silent := since(max(p.LastHealthy, silentFrom)) >= healthChecksMissed*h.healthInterval
		if p.Unhealthy >= healthChecksMissed || silent {
			return verdict{processTerminating, api.EventCodeServerProcessTerminatedUnhealthy,
				fmt.Sprintf("%s was unhealthy for %d health checks (%d unhealthy reports, last healthy %s ago).",
					p.describe(), healthChecksMissed, p.Unhealthy, since(p.LastHealthy))}, true
		}
	case processTerminating:
		if since(p.TerminateAt) >= h.grace {
			return verdict{processTerminated, api.EventCodeServerProcessForceTerminated,
				fmt.Sprintf("%s did not end within %s of being told to terminate.", p.describe(), h.grace)}, true
		}
	}
	return verdict{}, false
}

// advance makes the transition due for the process stored under key, if it is still due
// once re-read.
func (m *ProcessMonitor) advance(ctx context.Context, key string, now int64) error {
	err := m.s.update(ctx, func(tx store.Tx) error {
		var p processDoc
		rec, err := getDoc(tx, kindProcess, key, &p, func() error { return errUnchanged })
		if err != nil {
			return err
		}
		v, ok := m.s.hosting.verdict(&p, now, m.silentFrom())
		if !ok {
			return errUnchanged
		}
		if v.next == processTerminating {
			return m.s.markTerminating(tx, rec, &p, v.code, v.msg)
		}
		p.Status, p.Ended, p.Connected = processTerminated, now, false
		if err := m.s.addEvent(tx, p.FleetID, v.code, v.msg); err != nil {
			return err
		}
		if err := m.s.processEnded(tx, &p); err != nil {
			return err
		}
		return putDoc(tx, rec, &p)
	})
	return ignoreUnchanged(err)
}

// finishDeletion moves a DELETING fleet to TERMINATED once none of its processes is running or
// the grace period since DeleteFleet has passed (remaining processes are then marked
// TERMINATED). Its computes and auth tokens go with it; its events stay readable.
func (m *ProcessMonitor) finishDeletion(ctx context.Context, fleetID string, now int64) error {
	err := m.s.update(ctx, func(tx store.Tx) error {
		var f fleetDoc
		rec, err := getDoc(tx, kindFleet, fleetID, &f, func() error { return errUnchanged })
		if err != nil {
			return err
		}
		if f.Status != fleetDeleting {
			return errUnchanged
		}
		graceOver := time.Duration(now-f.DeletingSince)*time.Millisecond >= m.s.hosting.grace
		if err := m.s.endFleetProcesses(tx, fleetID, now, graceOver); err != nil {
			return err
		}
		if err := deleteTokens(tx, fleetID, ""); err != nil {
			return err
		}
		if err := eachChild(tx, kindCompute, fleetID, func(r *store.Record, _ *computeDoc) error {
			return tx.Delete(kindCompute, r.ID)
		}); err != nil {
			return err
		}
		f.Status, f.Terminated = fleetTerminated, now
		if err := m.s.addEvent(tx, fleetID, api.EventCodeFleetDeleted, "Fleet "+fleetID+" deleted."); err != nil {
			return err
		}
		return putDoc(tx, rec, &f)
	})
	return ignoreUnchanged(err)
}

// endFleetProcesses returns errUnchanged while a process of the fleet still runs and the grace
// period is not over; once it is over, it marks the remaining processes TERMINATED.
func (s *Service) endFleetProcesses(tx store.Tx, fleetID string, now int64, graceOver bool) error {
	return eachChild(tx, kindProcess, fleetID, func(r *store.Record, p *processDoc) error {
		if p.Status == processTerminated {
			return nil
		}
		if !graceOver {
			return errUnchanged
		}
		p.Status, p.Ended, p.Connected = processTerminated, now, false
		if err := s.processEnded(tx, p); err != nil {
			return err
		}
		return putDoc(tx, r, p)
	})
}

// purgeProcesses deletes TERMINATED process records that ended more than processRetention ago.
func (m *ProcessMonitor) purgeProcesses(ctx context.Context, now int64) error {
	cutoff := now - processRetention.Milliseconds()
	return m.s.update(ctx, func(tx store.Tx) error {
		var old []string
		if err := eachRecord(tx, kindProcess, func(r *store.Record, p *processDoc) {
			if p.Status == processTerminated && p.Ended < cutoff {
				old = append(old, r.ID)
			}
		}); err != nil {
			return err
		}
		for _, id := range old {
			if err := tx.Delete(kindProcess, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
}
