package agent

import (
	"context"
	"net"
	"time"

	"github.com/hoist-gg/hoist/metrics"
	"github.com/hoist-gg/hoist/metrics/statsd"
)

// Game server telemetry on an Anywhere host (docs/agent.md, docs/metrics.md): the agent
// receives its processes' DogStatsD datagrams on a loopback UDP port it hands them as
// GAMELIFT_STATSD_HOST and GAMELIFT_STATSD_PORT, keeps them per process, and forwards a
// snapshot of every series over the agent link (ActionHoistGameMetrics) every
// Config.GameMetricsInterval. The server it is connected to exposes them in its /metrics.

// ActionHoistGameMetrics is the agent link frame carrying a metrics.GameSnapshot (a Hoist
// extension of the agent protocol).
const ActionHoistGameMetrics = "HoistGameMetrics"

// DefaultGameMetricsInterval is how often the agent forwards its processes' metrics.
const DefaultGameMetricsInterval = 10 * time.Second

// telemetry is the agent's DogStatsD receiver.
type telemetry struct {
	game       *metrics.Game
	ln         *statsd.Listener
	host, port string
	next       time.Time // owned by the Run goroutine
}

// startTelemetry binds the receiver when Config.StatsD names an address.
func (a *Agent) startTelemetry() error {
	if a.cfg.StatsD == "" {
		return nil
	}
	c := a.cfg.Compute
	g := metrics.NewGame(metrics.GameConfig{Clock: a.clk,
		Fallback: &metrics.Origin{FleetID: c.FleetID, Location: c.Location, Compute: c.ComputeName}})
	ln, err := statsd.Listen(a.cfg.StatsD, g.Ingest)
	if err != nil {
		return err
	}
	t := &telemetry{game: g, ln: ln}
	t.host, t.port = ln.HostPort()
	a.mu.Lock()
	a.tel = t
	a.mu.Unlock()
	a.log.Info("server processes send DogStatsD metrics to the agent", "address", net.JoinHostPort(t.host, t.port))
	return nil
}

// telemetryEnv is the StatsD environment of a process, which it registers for attribution.
func (a *Agent) telemetryEnv(processID string) []string {
	a.mu.Lock()
	t := a.tel
	a.mu.Unlock()
	if t == nil {
		return nil
	}
	c := a.cfg.Compute
	t.game.ProcessLaunched(metrics.Origin{FleetID: c.FleetID, Location: c.Location, Compute: c.ComputeName, ProcessID: processID})
	return []string{"GAMELIFT_STATSD_HOST=" + t.host, "GAMELIFT_STATSD_PORT=" + t.port}
}

// telemetryEnded starts the linger of an ended process's series.
func (a *Agent) telemetryEnded(processID string) {
	a.mu.Lock()
	t := a.tel
	a.mu.Unlock()
	if t != nil {
		t.game.ProcessEnded(processID)
	}
}

// gameMetricsSender is a Link that forwards game metrics (wsLink is one).
type gameMetricsSender interface {
	SendGameMetrics(ctx context.Context, snap metrics.GameSnapshot) error
}

// sendGameMetrics forwards the snapshot when it is due and the link is up.
func (a *Agent) sendGameMetrics(ctx context.Context, now time.Time) {
	t := a.tel
	if t == nil || a.link == nil || now.Before(t.next) {
		return
	}
	t.next = now.Add(a.cfg.GameMetricsInterval)
	sender, ok := a.link.(gameMetricsSender)
	if !ok {
		return
	}
	snap := t.game.Snapshot()
	if len(snap.Processes) == 0 {
		return
	}
	snap.IntervalMillis = a.cfg.GameMetricsInterval.Milliseconds()
	if err := sender.SendGameMetrics(ctx, snap); err != nil {
		a.linkLost(err.Error())
	}
}

// gameMetricsDue is when the next forward is due; zero when there is none to do.
func (a *Agent) gameMetricsDue() time.Time {
	if a.tel == nil || a.link == nil {
		return time.Time{}
	}
	return a.tel.next
}

// stopTelemetry closes the receiver.
func (a *Agent) stopTelemetry() {
	if a.tel != nil {
		a.tel.ln.Close()
	}
}

// SendGameMetrics sends a HoistGameMetrics frame.
func (l *wsLink) SendGameMetrics(ctx context.Context, snap metrics.GameSnapshot) error {
	f := request(ActionHoistGameMetrics)
	f["IntervalMillis"] = snap.IntervalMillis
	f["Processes"] = snap.Processes
	return l.send(ctx, f)
}

// StatsDAddress is the host and port processes send their metrics to; empty until the
// receiver is bound, or without one.
func (a *Agent) StatsDAddress() (host, port string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tel == nil {
		return "", ""
	}
	return a.tel.host, a.tel.port
}
