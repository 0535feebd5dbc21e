package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// processMonitorInterval is how often the server-process monitor looks for due transitions
// (health periods are 60 s, so a few seconds of lateness is well inside GameLift's own).
const processMonitorInterval = 5 * time.Second

// sessionMonitorInterval is how often the game and player session timers are checked (the
// player reservation timeout is 60 s; activation timeouts are at least 1 s).
const sessionMonitorInterval = time.Second

// startLoops runs the background loops until Shutdown. The node's own loops — delivery to
// the sockets it holds, its local instances, its log files, its membership report — run on
// every node; the timer loops that must run once in the cluster run on the leader only
// (cluster.go). Every step still writes with compare-and-set, so a leader that lost its
// store connection and has not noticed yet cannot corrupt anything.
func (s *Server) startLoops(svc *gamelift.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	s.fleetIQ = gamelift.NewFleetIQLoop(svc)
	s.fleetIQ.Logger = s.log
	s.monitor, s.sessions, s.instances = svc.ProcessMonitor(), svc.SessionMonitor(), svc.InstanceMonitor()
	s.outbox, s.placer, s.matchmaker = svc.OutboxMonitor(), svc.PlacementLoop(), svc.MatchmakingLoop()
	s.wakeMatchmaker(ctx)
	run := func(loop func(ctx context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loop(ctx)
		}()
	}
	// The node is in the cluster (placeable, an owner of instances) before it answers its
	// first request: a node that served before its first report could see instances given
	// only to the others.
	s.reportNode(ctx)
	run(func(ctx context.Context) { s.delivery.run(ctx, s.store) })
	run(func(ctx context.Context) {
		clock.Every(ctx, s.cfg.Clock, logPurgeInterval, func(ctx context.Context) error { s.logs.purge(ctx); return nil }, nil)
	})
	run(func(ctx context.Context) { s.host.Run(ctx, hostInterval, s.logError("local instance host step")) })
	run(s.reportNodes)
	run(func(ctx context.Context) { s.lead(ctx, s.leaderLoops) })
	s.stopLoops = func() {
		cancel()
		wg.Wait()
	}
}

// leaderLoops runs the loops that must run once in the cluster until ctx is done.
func (s *Server) leaderLoops(ctx context.Context) {
	var wg sync.WaitGroup
	for _, loop := range []func(){
		func() { s.placer.Run(ctx, placementInterval, s.logError("placement step")) },
		func() { s.matchmaker.Run(ctx, matchmakingInterval, s.logError("matchmaking step")) },
		func() {
			s.outbox.Run(ctx, outboxMonitorInterval, s.delivery.logExpired, s.logError("outbox monitor step"))
		},
		func() { s.instances.Run(ctx, instanceMonitorInterval, s.logError("instance monitor step")) },
		func() { s.svc.Autoscaler().Run(ctx, gamelift.ScalingInterval, s.logError("autoscaler step")) },
		func() { s.sessions.Run(ctx, sessionMonitorInterval, s.logError("session monitor step")) },
		func() { s.fleetIQ.Run(ctx) },
		func() { s.notify.run(ctx, s.logError("notification delivery step")) },
		func() { s.monitor.Run(ctx, processMonitorInterval, s.logError("process monitor step")) },
		func() {
			clock.Every(ctx, s.cfg.Clock, uploadSweepInterval, func(ctx context.Context) error { s.s3h.SweepUploads(ctx); return nil }, nil)
		},
	} {
		wg.Go(loop)
	}
	wg.Wait()
}

// logError returns a loop's error handler: it logs what failed. While the store is
// unreachable the loop's steps fail until it is back; that is logged once a minute per loop.
func (s *Server) logError(what string) func(error) {
	var quietUntil time.Time
	var mu sync.Mutex
	return func(err error) {
		if !storeUnavailable(err) {
			s.log.Error(what+" failed", "err", err)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if now := time.Now(); now.After(quietUntil) {
			quietUntil = now.Add(time.Minute)
			s.log.Warn(what+" paused: the store is unavailable", "err", err)
		}
	}
}

// logPurgeInterval is how often game session logs past their retention are deleted.
const logPurgeInterval = time.Hour

// uploadSweepInterval is how often the leader removes multipart uploads nobody can finish
// (s3api.Handler.SweepUploads).
const uploadSweepInterval = time.Hour

// StepLoops runs one step of every background loop now. Tests call it after advancing a fake
// clock instead of waiting for the loops' tickers.
func (s *Server) StepLoops(ctx context.Context) error {
	s.logs.purge(ctx)
	s.s3h.SweepUploads(ctx)
	expired, err := s.outbox.Step(ctx)
	s.delivery.logExpired(expired)
	return errors.Join(s.monitor.Step(ctx), s.sessions.Step(ctx), s.fleetIQ.Step(ctx),
		s.instances.Step(ctx), s.svc.Autoscaler().Step(ctx), s.host.Step(ctx), s.placer.Step(ctx), s.matchmaker.Step(ctx), s.notify.step(ctx), err)
}

// wakeMatchmaker wakes the matchmaker whenever its inbox gets a note, on whichever node
// wrote it (a node that does not lead ignores the wake-up). Every announcement also wakes
// the web console's event streams (console.go); they share this watch because on
// PostgreSQL each watch holds a connection of the pool.
func (s *Server) wakeMatchmaker(ctx context.Context) {
	w, ok := s.store.(store.Watcher)
	if !ok {
		return
	}
	w.Watch(ctx, func(a store.Announcement) {
		s.changes.Notify()
		if a.Missed || a.Parent == gamelift.MatchmakerAddress {
			s.matchmaker.Wake()
		}
	})
}

// matchmakingInterval is how often the matchmaker steps without being woken: for timeouts
// and expansions (new tickets wake it at once).
const matchmakingInterval = 100 * time.Millisecond

// placementInterval is how often pending game session placements are tried again (a
// placement that can be placed at once is placed by StartGameSessionPlacement itself).
const placementInterval = 250 * time.Millisecond

// outboxMonitorInterval is how often undelivered outbox messages past their deadline are
// given up.
const outboxMonitorInterval = 5 * time.Second

// instanceMonitorInterval is how often managed fleets' capacity is reconciled (scale-down
// held back by protected game sessions is retried) and activation is checked.
const instanceMonitorInterval = 5 * time.Second

// hostInterval is how often the local instance host converges even without a change it
// was told about (pokeOnCapacityChanges tells it at once).
const hostInterval = 5 * time.Second

// pokeOnCapacityChanges wraps the operations that change which local instances should run
// (fleet creation and deletion, capacity, runtime configuration) so that the host acts at
// once instead of at its next tick.
func pokeOnCapacityChanges(h *api.Handlers, poke func()) {
	create, del, capacity, rc := h.CreateFleet, h.DeleteFleet, h.UpdateFleetCapacity, h.UpdateRuntimeConfiguration
	h.CreateFleet = func(ctx context.Context, in *api.CreateFleetInput) (*api.CreateFleetOutput, error) {
		defer poke()
		return create(ctx, in)
	}
	h.DeleteFleet = func(ctx context.Context, in *api.DeleteFleetInput) (*api.DeleteFleetOutput, error) {
		defer poke()
		return del(ctx, in)
	}
	h.UpdateFleetCapacity = func(ctx context.Context, in *api.UpdateFleetCapacityInput) (*api.UpdateFleetCapacityOutput, error) {
		defer poke()
		return capacity(ctx, in)
	}
	h.UpdateRuntimeConfiguration = func(ctx context.Context, in *api.UpdateRuntimeConfigurationInput) (*api.UpdateRuntimeConfigurationOutput, error) {
		defer poke()
		return rc(ctx, in)
	}
}

// Sockets returns the number of open Server SDK and agent websockets on this node.
func (s *Server) Sockets() int { return s.hub.Sockets() }
