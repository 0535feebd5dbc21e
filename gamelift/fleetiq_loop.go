package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// Defaults of FleetIQLoop.
const (
	// DefaultFleetIQInterval is how often Run steps the loop.
	DefaultFleetIQInterval = time.Second
	// DefaultGameServerHealthTimeout is how long a game server may go without a HEALTHY report
	// (or, before its first one, since it registered) before it is deregistered. GameLift
	// says only "a certain length of time" and advises a report every 60 s; Hoist allows
	// three missed reports, like its server process health checks.
	DefaultGameServerHealthTimeout = 3 * time.Minute
)

// FleetIQLoop moves game server groups through their statuses and deregisters game servers
// that stopped reporting health. Each Step is idempotent and writes with compare-and-set, so
// running it on several nodes at once is safe (if wasteful). Tests call Step on a fake clock;
// servers call Run. Concurrent Steps (a test's StepLoops beside Run) take turns.
type FleetIQLoop struct {
	svc *Service
	// HealthTimeout is DefaultGameServerHealthTimeout when zero.
	HealthTimeout time.Duration
	// Interval is DefaultFleetIQInterval when zero.
	Interval time.Duration
	// Logger receives step errors; nil discards them.
	Logger *slog.Logger

	mu        sync.Mutex      // serialises Step
	lastSweep int64           // Unix ms of the last health sweep
	sweeping  bool            // this Step sweeps health (every HealthTimeout/6: reading every game server is not free)
	moved     map[string]bool // groups whose legacy claimed slots this loop has moved back
}

func (l *FleetIQLoop) sweepDue() bool { return l.sweeping }

func (l *FleetIQLoop) healthTimeout() time.Duration {
	if l.HealthTimeout <= 0 {
		return DefaultGameServerHealthTimeout
	}
	return l.HealthTimeout
}

// NewFleetIQLoop returns the loop for s with the defaults.
func NewFleetIQLoop(s *Service) *FleetIQLoop {
	return &FleetIQLoop{svc: s, HealthTimeout: DefaultGameServerHealthTimeout, Interval: DefaultFleetIQInterval}
}

// Run steps the loop every Interval on the service's clock until ctx ends.
func (l *FleetIQLoop) Run(ctx context.Context) {
	interval := l.Interval
	if interval <= 0 {
		interval = DefaultFleetIQInterval
	}
	clock.Every(ctx, l.svc.clock, interval, l.Step, func(err error) {
		if l.Logger != nil {
			l.Logger.Error("fleetiq loop step", "error", err)
		}
	})
}

// Step advances every group by one status where it can and sweeps unhealthy game servers:
//
//	NEW -> ACTIVATING -> ACTIVE
//	DELETE_SCHEDULED -> DELETING   FORCE_DELETE at once; SAFE_DELETE and RETAIN once no game
//	                               server is UTILIZED. Remaining game servers are deregistered.
//	DELETING -> DELETED            the group's instances are removed
//	DELETED -> (record removed)
func (l *FleetIQLoop) Step(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var names []string
	err := l.svc.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServerGroup, store.ListOptions{})
		for _, r := range recs {
			names = append(names, r.ID)
		}
		return err
	})
	if err != nil {
		return err
	}
	l.sweeping = l.svc.nowMillis()-l.lastSweep >= l.healthTimeout().Milliseconds()/6
	if l.sweeping {
		l.lastSweep = l.svc.nowMillis()
	}
	var errs []error
	for _, name := range names {
		errs = append(errs, l.stepGroup(ctx, name))
	}
	return errors.Join(errs...)
}

func (l *FleetIQLoop) stepGroup(ctx context.Context, name string) error {
	var g groupDoc
	if err := l.svc.read(ctx, kindGameServerGroup, name, &g, func() error { return store.ErrNotFound }); err != nil {
		return ignoreNotFound(err)
	}
	switch g.Status {
	case groupNew:
		return l.setStatus(ctx, name, groupNew, groupActivating)
	case groupActivating:
		return l.setStatus(ctx, name, groupActivating, groupActive)
	case groupActive:
		if err := l.moveLegacySlots(ctx, name); err != nil {
			return err
		}
		if !l.sweepDue() {
			return nil
		}
		return l.sweepHealth(ctx, name)
	case groupDeleteScheduled:
		return l.drainForDelete(ctx, &g)
	case groupDeleting:
		if err := l.removeAll(ctx, kindGameServerInstance, name); err != nil {
			return err
		}
		return l.setStatus(ctx, name, groupDeleting, groupDeleted)
	case groupDeleted:
		return ignoreNotFound(l.svc.update(ctx, func(tx store.Tx) error { return tx.Delete(kindGameServerGroup, name) }))
	}
	return nil
}

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// setStatus moves group name from status from to status to; it does nothing if the group
// has moved on meanwhile (another node stepped it).
func (l *FleetIQLoop) setStatus(ctx context.Context, name, from, to string) error {
	err := l.svc.update(ctx, func(tx store.Tx) error {
		var g groupDoc
		rec, err := getDoc(tx, kindGameServerGroup, name, &g, func() error { return store.ErrNotFound })
		if err != nil || g.Status != from {
			return err
		}
		g.Status, g.Updated = to, l.svc.nowMillis()
		if to == groupActive && g.ASGARN == "" {
			g.ASGARN = "arn:aws:autoscaling:" + l.svc.region + ":" + l.svc.account +
				":autoScalingGroup:" + l.svc.newID() + ":autoScalingGroupName/gamelift-gameservergroup-" + name
		}
		return putDoc(tx, rec, &g)
	})
	return ignoreNotFound(err)
}

// moveLegacySlots moves the slots that earlier versions kept under an instance's
// legacyClaimedParent back to its slot list, once per group and loop: claims no longer move
// slots, and a game server whose slot stayed there would never be claimed by group again.
func (l *FleetIQLoop) moveLegacySlots(ctx context.Context, group string) error {
	if l.moved[group] {
		return nil
	}
	var instances []*store.Record
	err := l.svc.view(ctx, func(tx store.Tx) error {
		var err error
		instances, err = tx.List(kindGameServerInstance, store.ListOptions{Parent: group})
		return err
	})
	if err != nil {
		return err
	}
	moved := 0
	for _, r := range instances {
		n, err := l.moveInstanceSlots(ctx, group, strings.TrimPrefix(r.ID, group+"/"))
		if err != nil {
			return err
		}
		moved += n
	}
	if moved > 0 {
		l.svc.placements().invalidate(group)
		if l.Logger != nil {
			l.Logger.Info("fleetiq: moved claimed game servers' slots to their instances' lists", "group", group, "slots", moved)
		}
	}
	if l.moved == nil {
		l.moved = map[string]bool{}
	}
	l.moved[group] = true
	return nil
}

// moveInstanceSlots moves one instance's legacy claimed slots (moveLegacySlots) and returns
// how many it moved.
func (l *FleetIQLoop) moveInstanceSlots(ctx context.Context, group, instance string) (int, error) {
	n := 0
	err := l.svc.update(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServerSlot, store.ListOptions{Parent: legacyClaimedParent(group, instance)})
		n = len(recs)
		for _, r := range recs {
			r.Parent, r.Data = slotParent(group, instance), nil
			if err := tx.Put(r); err != nil {
				return err
			}
		}
		return err
	})
	return n, err
}

// servers returns the stored game servers of a group.
func (l *FleetIQLoop) servers(ctx context.Context, group string) ([]serverDoc, error) {
	var out []serverDoc
	err := l.svc.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServer, store.ListOptions{Parent: group})
		out = make([]serverDoc, len(recs))
		for i, r := range recs {
			if err := json.Unmarshal(r.Data, &out[i]); err != nil {
				return err
			}
		}
		return err
	})
	return out, err
}

// sweepHealth deregisters the group's game servers whose last HEALTHY report (or their
// registration, before the first) is HealthTimeout old.
func (l *FleetIQLoop) sweepHealth(ctx context.Context, group string) error {
	timeout := l.healthTimeout()
	all, err := l.servers(ctx, group)
	if err != nil {
		return err
	}
	now := l.svc.nowMillis()
	for _, d := range all {
		if now-max(d.Health, d.Registered) >= timeout.Milliseconds() {
			if err := l.svc.deregister(ctx, group, d.ID); err != nil && !isCode(err, api.NotFoundException) {
				return err
			}
		}
	}
	return nil
}

// drainForDelete deregisters a DELETE_SCHEDULED group's game servers when its delete option
// allows and then moves it to DELETING.
func (l *FleetIQLoop) drainForDelete(ctx context.Context, g *groupDoc) error {
	all, err := l.servers(ctx, g.Name)
	if err != nil {
		return err
	}
	if g.DeleteOption != string(api.GameServerGroupDeleteOptionForceDelete) {
		for _, d := range all {
			if d.Utilized {
				return nil // SAFE_DELETE and RETAIN wait for UTILIZED game servers to end
			}
		}
	}
	for _, d := range all {
		if err := l.svc.deregister(ctx, g.Name, d.ID); err != nil && !isCode(err, api.NotFoundException) {
			return err
		}
	}
	return l.setStatus(ctx, g.Name, groupDeleteScheduled, groupDeleting)
}

// removeAll deletes every record of kind under parent.
func (l *FleetIQLoop) removeAll(ctx context.Context, kind, parent string) error {
	defer l.svc.placements().invalidate(parent)
	return l.svc.update(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kind, store.ListOptions{Parent: parent})
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := tx.Delete(kind, r.ID); err != nil {
				return err
			}
		}
		return nil
	})
}
