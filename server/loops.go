package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
)

// processMonitorInterval is how often the server-process monitor looks for due transitions
// (health periods are 60 s, so a few seconds of lateness is well inside GameLift's own).
const processMonitorInterval = 5 * time.Second

// sessionMonitorInterval is how often the game and player session timers are checked (the
// player reservation timeout is 60 s; activation timeouts are at least 1 s).
const sessionMonitorInterval = time.Second

// startLoops runs the background loops until Shutdown. Every node runs them: each step
// writes with compare-and-set, so nodes sharing PostgreSQL do not corrupt each other.
func (s *Server) startLoops(svc *gamelift.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	fleetIQ := gamelift.NewFleetIQLoop(svc)
	fleetIQ.Logger = s.log
	monitor := svc.ProcessMonitor()
	sessions := svc.SessionMonitor()
	s.fleetIQ, s.monitor, s.sessions = fleetIQ, monitor, sessions
	s.instances = svc.InstanceMonitor()
	s.outbox = svc.OutboxMonitor()
	s.placer = svc.PlacementLoop()
	wg.Add(9)
	go func() {
		defer wg.Done()
		s.placer.Run(ctx, placementInterval, func(err error) { s.log.Error("placement step failed", "err", err) })
	}()
	go func() {
		defer wg.Done()
		s.delivery.run(ctx, s.store)
	}()
	go func() {
		defer wg.Done()
		s.outbox.Run(ctx, outboxMonitorInterval, s.delivery.logExpired, func(err error) { s.log.Error("outbox monitor step failed", "err", err) })
	}()
	go func() {
		defer wg.Done()
		clock.Every(ctx, s.cfg.Clock, logPurgeInterval, func(ctx context.Context) error { s.logs.purge(ctx); return nil }, nil)
	}()
	go func() {
		defer wg.Done()
		s.instances.Run(ctx, instanceMonitorInterval, func(err error) { s.log.Error("instance monitor step failed", "err", err) })
	}()
	go func() {
		defer wg.Done()
		s.host.Run(ctx, hostInterval, func(err error) { s.log.Error("local instance host step failed", "err", err) })
	}()
	go func() {
		defer wg.Done()
		sessions.Run(ctx, sessionMonitorInterval, func(err error) { s.log.Error("session monitor step failed", "err", err) })
	}()
	go func() {
		defer wg.Done()
		fleetIQ.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		monitor.Run(ctx, processMonitorInterval, func(err error) { s.log.Error("process monitor step failed", "err", err) })
	}()
	s.stopLoops = func() {
		cancel()
		wg.Wait()
	}
}

// logPurgeInterval is how often game session logs past their retention are deleted.
const logPurgeInterval = time.Hour

// StepLoops runs one step of every background loop now. Tests call it after advancing a fake
// clock instead of waiting for the loops' tickers.
func (s *Server) StepLoops(ctx context.Context) error {
	s.logs.purge(ctx)
	expired, err := s.outbox.Step(ctx)
	s.delivery.logExpired(expired)
	return errors.Join(s.monitor.Step(ctx), s.sessions.Step(ctx), s.fleetIQ.Step(ctx),
		s.instances.Step(ctx), s.host.Step(ctx), s.placer.Step(ctx), err)
}

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
