package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/metrics/statsd"
)

// Game server telemetry (docs/metrics.md, "Game server metrics"): the DogStatsD samples the
// processes Hoist launches send, kept per process as Prometheus series named hoist_game_*.

// Defaults for GameConfig.
const (
	// DefaultMaxGameSeries is the most series one process may have; samples that would add
	// more are dropped.
	DefaultMaxGameSeries = 1000
	// DefaultGameLinger is how long the series of an ended process stay exposed.
	DefaultGameLinger = 2 * time.Minute
)

// Labels every game series carries before the sample's tags.
var gameOriginLabels = []string{"fleet_id", "location", "compute", "process_id"}

// Origin is where a process runs: the labels of its series.
type Origin struct {
	FleetID   string `json:"FleetId"`
	Location  string `json:"Location"`
	Compute   string `json:"Compute"`
	ProcessID string `json:"ProcessId"`
}

func (o Origin) labels() []string { return []string{o.FleetID, o.Location, o.Compute, o.ProcessID} }

// GameConfig configures a Game.
type GameConfig struct {
	// Clock dates process ends and snapshots; clock.Real{} when nil.
	Clock clock.Clock
	// MaxSeries bounds the series of one process (DefaultMaxGameSeries when zero).
	MaxSeries int
	// Linger is how long an ended process's series stay (DefaultGameLinger when zero).
	Linger time.Duration
	// Fallback, when set, is the origin of samples whose gamelift_process_id tag names no
	// process launched here (the agent: its compute, with an empty process ID). When nil
	// they are dropped.
	Fallback *Origin
}

// Game holds the game servers' metrics of one receiver (a server node or an agent) and,
// on a server, the snapshots agents forward. It is a prometheus.Collector.
type Game struct {
	cfg     GameConfig
	dropped *prometheus.CounterVec

	mu     sync.Mutex
	procs  map[string]*gameProcess // by process ID; "" is the fallback
	remote map[string]remoteSnapshot
}

// gameProcess is one process's series.
type gameProcess struct {
	origin Origin
	series map[string]*gameSeries
	ended  time.Time // zero while it runs
}

// NewGame returns an empty Game.
func NewGame(cfg GameConfig) *Game {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.MaxSeries <= 0 {
		cfg.MaxSeries = DefaultMaxGameSeries
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultGameLinger
	}
	return &Game{cfg: cfg, procs: map[string]*gameProcess{}, remote: map[string]remoteSnapshot{},
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hoist_game_statsd_dropped_total",
			Help: "DogStatsD lines from game servers that were not kept, by reason."}, []string{"reason"})}
}

// ProcessLaunched makes samples tagged gamelift_process_id=o.ProcessID count for o.
func (g *Game) ProcessLaunched(o Origin) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.procs[o.ProcessID] = &gameProcess{origin: o, series: map[string]*gameSeries{}}
}

// ProcessEnded starts the linger of a process's series; they go Linger later.
func (g *Game) ProcessEnded(processID string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if p := g.procs[processID]; p != nil && processID != "" {
		p.ended = g.cfg.Clock.Now()
	}
}

// Ingest parses a datagram and records its samples.
func (g *Game) Ingest(datagram []byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	statsd.ParsePacket(datagram, func(s statsd.Sample, err error) {
		switch {
		case err == statsd.ErrNotMetric:
			g.drop("not_metric")
		case err != nil:
			g.drop("malformed")
		default:
			g.record(s)
		}
	})
}

func (g *Game) drop(reason string) { g.dropped.WithLabelValues(reason).Inc() }

// record adds one sample to its process's series.
func (g *Game) record(s statsd.Sample) {
	p := g.process(s.Tags)
	if p == nil {
		g.drop("unattributed")
		return
	}
	name, kind := familyName(s.Name, s.Type)
	labels, ok := tagLabels(s.Tags)
	if !ok {
		g.drop(reasonTooManyTg)
		return
	}
	key := seriesKey(name, labels)
	ser, old := p.series[key]
	if !old && len(p.series) >= g.cfg.MaxSeries {
		g.drop("series_limit")
		return
	}
	if !old {
		ser = newGameSeries(name, kind, labels)
	}
	if reason := ser.add(s); reason != "" {
		g.drop(reason)
		return
	}
	p.series[key] = ser
}

// process is the process a sample's tags name, else the fallback, else nil.
func (g *Game) process(tags []statsd.Tag) *gameProcess {
	id := ""
	for _, t := range tags {
		if t.Key == processIDTag {
			id = t.Value
		}
	}
	if p := g.procs[id]; p != nil && id != "" {
		return p
	}
	if g.cfg.Fallback == nil {
		return nil
	}
	p := g.procs[""]
	if p == nil {
		p = &gameProcess{origin: *g.cfg.Fallback, series: map[string]*gameSeries{}}
		p.origin.ProcessID = ""
		g.procs[""] = p
	}
	return p
}

// Describe describes nothing: the game series are only known when collected.
func (g *Game) Describe(chan<- *prometheus.Desc) {}

// Collect sends the dropped counter and every live series, local and forwarded.
func (g *Game) Collect(ch chan<- prometheus.Metric) {
	g.dropped.Collect(ch)
	e := newEmitter(ch)
	for _, ps := range g.Snapshot().Processes {
		e.process(ps)
	}
	for _, ps := range g.remoteProcesses() {
		e.process(ps)
	}
}
