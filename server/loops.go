package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/gamelift"
)

// processMonitorInterval is how often the server-process monitor looks for due transitions
// (health periods are 60 s, so a few seconds of lateness is well inside GameLift's own).
const processMonitorInterval = 5 * time.Second

// startLoops runs the background loops until Shutdown. Every node runs them: each step
// writes with compare-and-set, so nodes sharing PostgreSQL do not corrupt each other.
func (s *Server) startLoops(svc *gamelift.Service) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	fleetIQ := gamelift.NewFleetIQLoop(svc)
	fleetIQ.Logger = s.log
	monitor := svc.ProcessMonitor()
	s.fleetIQ, s.monitor = fleetIQ, monitor
	wg.Add(2)
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

// StepLoops runs one step of every background loop now. Tests call it after advancing a fake
// clock instead of waiting for the loops' tickers.
func (s *Server) StepLoops(ctx context.Context) error {
	return errors.Join(s.monitor.Step(ctx), s.fleetIQ.Step(ctx))
}

// Sockets returns the number of open Server SDK and agent websockets on this node.
func (s *Server) Sockets() int { return s.hub.Sockets() }
