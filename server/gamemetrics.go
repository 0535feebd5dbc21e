package server

import (
	"cmp"
	"encoding/json"
	"net"

	"github.com/hoist-gg/hoist/hostd"
	"github.com/hoist-gg/hoist/metrics"
	"github.com/hoist-gg/hoist/metrics/statsd"
	"github.com/hoist-gg/hoist/sdkws"
)

// Game server telemetry (docs/metrics.md, "Game server metrics"): the node receives the
// DogStatsD datagrams of its local instances' processes on a UDP listener (Config.StatsDListen)
// and the snapshots its connected agents forward, and serves both in /metrics.

// StatsDOff is the Config.StatsDListen value that turns the node's DogStatsD receiver off
// (what agents forward is still served).
const StatsDOff = "off"

// DefaultStatsDListen is the node's DogStatsD receiver: loopback, a free port.
const DefaultStatsDListen = "127.0.0.1:0"

// gameTelemetry is the node's game metrics and receiver.
type gameTelemetry struct {
	game       *metrics.Game
	ln         *statsd.Listener // nil when the receiver is off
	host, port string
}

// setupGameMetrics makes the game metrics and binds the receiver, unless metrics are off.
func (s *Server) setupGameMetrics() error {
	if s.cfg.MetricsListen == MetricsOff {
		return nil
	}
	t := &gameTelemetry{game: metrics.NewGame(metrics.GameConfig{Clock: s.cfg.Clock})}
	s.game = t
	if s.cfg.StatsDListen == StatsDOff {
		return nil
	}
	ln, err := statsd.Listen(cmp.Or(s.cfg.StatsDListen, DefaultStatsDListen), t.game.Ingest)
	if err != nil {
		return err
	}
	t.ln = ln
	t.host, t.port = ln.HostPort()
	s.log.Info("DogStatsD receiver for local server processes listening", "address", net.JoinHostPort(t.host, t.port))
	return nil
}

// hostdTelemetry completes the local instances' configuration with the receiver.
func (s *Server) hostdTelemetry(cfg hostd.Config) hostd.Config {
	if s.game != nil {
		cfg.StatsDHost, cfg.StatsDPort, cfg.Processes = s.game.host, s.game.port, s.game
	}
	return cfg
}

// ProcessLaunched attributes a local process's samples (hostd.ProcessTracker).
func (t *gameTelemetry) ProcessLaunched(fleetID, location, computeName, processID string) {
	t.game.ProcessLaunched(metrics.Origin{FleetID: fleetID, Location: location, Compute: computeName, ProcessID: processID})
}

// ProcessEnded starts the linger of a local process's series (hostd.ProcessTracker).
func (t *gameTelemetry) ProcessEnded(processID string) { t.game.ProcessEnded(processID) }

// registerGameMetrics adds the game metrics to the endpoint's registry.
func (s *Server) registerGameMetrics() {
	if s.game != nil && s.metrics != nil {
		s.metrics.m.Registry().MustRegister(s.game.game)
	}
}

// agentGameMetrics keeps the snapshot an agent forwarded (sdkws.Config.OnAgentGameMetrics).
func (s *Server) agentGameMetrics(ref sdkws.ComputeRef, frame []byte) {
	if s.game == nil {
		return
	}
	var snap metrics.GameSnapshot
	if err := json.Unmarshal(frame, &snap); err != nil {
		s.log.Warn("agent sent undecodable game metrics", "compute", ref.ComputeName, "error", err)
		return
	}
	s.game.game.ApplyRemote(ref.FleetID, ref.ComputeName, snap)
}

// closeGameMetrics stops the receiver.
func (s *Server) closeGameMetrics() {
	if s.game != nil && s.game.ln != nil {
		s.game.ln.Close()
	}
}
