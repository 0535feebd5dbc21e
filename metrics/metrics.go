// Package metrics is Hoist's Prometheus endpoint: GameLift's CloudWatch metrics read from the
// domain at scrape time (domain.go), per-operation API request counts and latencies
// (ObserveRequest, the httpapi.Config.Observe hook), and the few counters only the node that
// did the work can count (WrapHandlers). docs/metrics.md lists every metric with its
// CloudWatch name.
package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hoist-gg/hoist/api"
)

// Path is where the endpoint is served.
const Path = "/metrics"

// codeOK is the code label of a request that succeeded.
const codeOK = "OK"

// Metrics is one node's registry.
type Metrics struct {
	reg     *prometheus.Registry
	handler http.Handler
	// requests and latency are the API metrics; ops holds their children for each
	// operation of the table, so that observing a request takes no lock and no allocation.
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	ops      map[string]opMetrics
	// placements and tickets count what this node started (WrapHandlers).
	placements, tickets *prometheus.CounterVec
}

// opMetrics are the metrics of one operation.
type opMetrics struct {
	ok      prometheus.Counter
	latency prometheus.Observer
}

// New returns a registry with the domain's metrics read from src at scrape time, the API
// metrics, and the Go runtime's and the process's.
func New(src Source, log *slog.Logger) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry(), ops: map[string]opMetrics{}}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hoist_api_requests_total",
		Help: "API requests answered by this node, by operation and code (the error code, OK for success)."},
		[]string{"operation", "code"})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "hoist_api_request_duration_seconds",
		Help:    "Time this node took to answer API requests, by operation.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}},
		[]string{"operation"})
	m.placements = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hoist_queue_placements_started_total",
		Help: "Game session placements started through this node (PlacementsStarted)."}, []string{"queue"})
	m.tickets = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "hoist_matchmaking_tickets_started_total",
		Help: "Matchmaking tickets started through this node (TicketsStarted)."}, []string{"configuration"})
	for _, op := range api.Operations {
		m.ops[op.Name] = opMetrics{ok: m.requests.WithLabelValues(op.Name, codeOK), latency: m.latency.WithLabelValues(op.Name)}
	}
	m.reg.MustRegister(m.requests, m.latency, m.placements, m.tickets, newDomainCollector(src, log),
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError,
		ErrorLog: slogErrors{log}})
	return m
}

// Handler serves the endpoint (GET /metrics).
func (m *Metrics) Handler() http.Handler { return m.handler }

// Registry is the registry, for collectors added by the server (e.g. game server telemetry).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest counts one API request and its latency; it is httpapi.Config.Observe.
func (m *Metrics) ObserveRequest(op, code string, d time.Duration) {
	om, ok := m.ops[op]
	if !ok { // an extension operation
		m.latency.WithLabelValues(op).Observe(d.Seconds())
	} else {
		om.latency.Observe(d.Seconds())
	}
	if code == "" && ok {
		om.ok.Inc()
		return
	}
	if code == "" {
		code = codeOK
	}
	m.requests.WithLabelValues(op, code).Inc()
}

// WrapHandlers counts, on this node, the placements and matchmaking tickets that start
// through h: StartGameSessionPlacement and StartMatchmaking calls that succeed.
func (m *Metrics) WrapHandlers(h *api.Handlers) {
	if place := h.StartGameSessionPlacement; place != nil {
		h.StartGameSessionPlacement = func(ctx context.Context, in *api.StartGameSessionPlacementInput) (*api.StartGameSessionPlacementOutput, error) {
			out, err := place(ctx, in)
			if err == nil {
				m.placements.WithLabelValues(lastPart(api.Deref(in.GameSessionQueueName))).Inc()
			}
			return out, err
		}
	}
	if start := h.StartMatchmaking; start != nil {
		h.StartMatchmaking = func(ctx context.Context, in *api.StartMatchmakingInput) (*api.StartMatchmakingOutput, error) {
			out, err := start(ctx, in)
			if err == nil {
				m.tickets.WithLabelValues(lastPart(api.Deref(in.ConfigurationName))).Inc()
			}
			return out, err
		}
	}
}

// lastPart is the name in a name or an ARN (the part after its last slash).
func lastPart(s string) string { return s[strings.LastIndexByte(s, '/')+1:] }

// slogErrors passes promhttp's error log to a slog.Logger.
type slogErrors struct{ log *slog.Logger }

func (l slogErrors) Println(v ...any) {
	if l.log != nil {
		l.log.Warn("metrics", "error", strings.TrimSpace(fmt.Sprintln(v...)))
	}
}
