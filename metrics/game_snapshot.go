package metrics

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Bounds of what an agent forwards.
const (
	// minRemoteTTL is the least time a forwarded snapshot stays exposed without a newer one.
	minRemoteTTL = 30 * time.Second
	// maxRemoteProcesses bounds the processes of one forwarded snapshot.
	maxRemoteProcesses = 256
)

// GameSnapshot is every series of a receiver, by process: what an agent forwards to its
// server (the HoistGameMetrics frame of the agent link, docs/agent.md).
type GameSnapshot struct {
	// IntervalMillis is how often the agent sends one; a snapshot expires after three.
	IntervalMillis int64           `json:"IntervalMillis,omitempty"`
	Processes      []ProcessSeries `json:"Processes"`
}

// ProcessSeries are one process's series.
type ProcessSeries struct {
	Origin Origin   `json:"Origin"`
	Series []Series `json:"Series"`
}

// remoteSnapshot is a forwarded snapshot and when it expires.
type remoteSnapshot struct {
	procs   []ProcessSeries
	expires time.Time
}

// Snapshot copies the series of the processes that have any, after removing those of
// processes that ended more than Linger ago.
func (g *Game) Snapshot() GameSnapshot {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.cfg.Clock.Now()
	var snap GameSnapshot
	for _, id := range slices.Sorted(maps.Keys(g.procs)) {
		p := g.procs[id]
		if !p.ended.IsZero() && now.Sub(p.ended) >= g.cfg.Linger {
			delete(g.procs, id)
			continue
		}
		if len(p.series) == 0 {
			continue
		}
		ps := ProcessSeries{Origin: p.origin}
		for _, k := range slices.Sorted(maps.Keys(p.series)) {
			s := p.series[k].Series
			s.Labels, s.Buckets = slices.Clone(s.Labels), slices.Clone(s.Buckets)
			ps.Series = append(ps.Series, s)
		}
		snap.Processes = append(snap.Processes, ps)
	}
	return snap
}

// ApplyRemote keeps the snapshot an agent of compute (fleetID, computeName) forwarded, in
// place of its previous one, with the fleet and compute of the authenticated link.
func (g *Game) ApplyRemote(fleetID, computeName string, snap GameSnapshot) {
	ttl := max(3*time.Duration(snap.IntervalMillis)*time.Millisecond, minRemoteTTL)
	procs := snap.Processes[:min(len(snap.Processes), maxRemoteProcesses)]
	for i := range procs {
		procs[i].Origin.FleetID, procs[i].Origin.Compute = fleetID, computeName
		procs[i].Series = procs[i].Series[:min(len(procs[i].Series), g.cfg.MaxSeries)]
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.remote[fleetID+"/"+computeName] = remoteSnapshot{procs: procs, expires: g.cfg.Clock.Now().Add(ttl)}
}

// remoteProcesses are the forwarded snapshots not expired.
func (g *Game) remoteProcesses() []ProcessSeries {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.cfg.Clock.Now()
	var out []ProcessSeries
	for _, k := range slices.Sorted(maps.Keys(g.remote)) {
		r := g.remote[k]
		if !now.Before(r.expires) {
			delete(g.remote, k)
			continue
		}
		out = append(out, r.procs...)
	}
	return out
}

// emitter sends series to a scrape, skipping those whose name another series already used
// with another kind, and repeated ones.
type emitter struct {
	ch    chan<- prometheus.Metric
	kinds map[string]string
	seen  map[string]bool
}

func newEmitter(ch chan<- prometheus.Metric) *emitter {
	return &emitter{ch: ch, kinds: map[string]string{}, seen: map[string]bool{}}
}

// process sends one process's series.
func (e *emitter) process(ps ProcessSeries) {
	for _, s := range ps.Series {
		if k, ok := e.kinds[s.Name]; ok && k != s.Kind {
			continue
		}
		key := seriesKey(s.Name, append(ps.Origin.labels(), s.Labels...))
		if e.seen[key] {
			continue
		}
		m, err := constMetric(ps.Origin, s)
		if err != nil {
			continue
		}
		e.kinds[s.Name], e.seen[key] = s.Kind, true
		e.ch <- m
	}
}

// gameHelp is the help of each kind of game series.
var gameHelp = map[string]string{
	kindCounter:   "Game server counter (DogStatsD c).",
	kindGauge:     "Game server gauge (DogStatsD g), or distinct members of a set (s).",
	kindHistogram: "Game server timer (DogStatsD ms), in seconds.",
	kindSummary:   "Game server histogram or distribution (DogStatsD h, d): count and sum.",
}

// constMetric is a series as a Prometheus metric.
func constMetric(o Origin, s Series) (prometheus.Metric, error) {
	if len(s.Labels)%2 != 0 || gameHelp[s.Kind] == "" {
		return nil, fmt.Errorf("game series %s: bad labels or kind", s.Name)
	}
	names, values := slices.Clone(gameOriginLabels), o.labels()
	for i := 0; i < len(s.Labels); i += 2 {
		names, values = append(names, s.Labels[i]), append(values, s.Labels[i+1])
	}
	desc := prometheus.NewDesc(s.Name, gameHelp[s.Kind], names, nil)
	switch s.Kind {
	case kindCounter:
		return prometheus.NewConstMetric(desc, prometheus.CounterValue, s.Value, values...)
	case kindGauge:
		return prometheus.NewConstMetric(desc, prometheus.GaugeValue, s.Value, values...)
	case kindSummary:
		return prometheus.NewConstSummary(desc, round(s.Count), s.Sum, nil, values...)
	}
	return timerMetric(desc, s, values)
}

// timerMetric is a timer series as a histogram.
func timerMetric(desc *prometheus.Desc, s Series, values []string) (prometheus.Metric, error) {
	if len(s.Buckets) != len(gameTimerBuckets) {
		return nil, fmt.Errorf("game series %s: %d buckets", s.Name, len(s.Buckets))
	}
	buckets := make(map[float64]uint64, len(gameTimerBuckets))
	cum := 0.0
	for i, b := range gameTimerBuckets {
		cum += s.Buckets[i]
		buckets[b] = round(cum)
	}
	return prometheus.NewConstHistogram(desc, round(s.Count), s.Sum, buckets, values...)
}
