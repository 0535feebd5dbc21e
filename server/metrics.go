package server

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/metrics"
)

// MetricsOff is the Config.MetricsListen value that turns the metrics endpoint off.
const MetricsOff = "off"

// metricsEndpoint is the node's Prometheus endpoint (docs/metrics.md).
type metricsEndpoint struct {
	m    *metrics.Metrics
	ln   net.Listener // its own listener; nil when it is served on the API listener
	http *http.Server
}

// setupMetrics builds the metrics registry (unless Config.MetricsListen is MetricsOff),
// counts the placements and tickets started through handlers, and returns the
// httpapi.Config.Observe hook (nil when off).
func (s *Server) setupMetrics(svc *gamelift.Service, handlers *api.Handlers) func(op, code string, d time.Duration) {
	if s.cfg.MetricsListen == MetricsOff {
		return nil
	}
	m := metrics.New(svc, s.log)
	m.WrapHandlers(handlers)
	s.metrics = &metricsEndpoint{m: m}
	return m.ObserveRequest
}

// listenMetrics binds the endpoint's own listener when Config.MetricsListen names one.
func (s *Server) listenMetrics() error {
	if s.metrics == nil || s.cfg.MetricsListen == "" {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.MetricsListen)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("GET "+metrics.Path, s.metrics.m.Handler())
	s.metrics.ln = ln
	s.metrics.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	return nil
}

// withMetrics serves GET /metrics from next's listener when the endpoint is on and has no
// listener of its own.
func (s *Server) withMetrics(next http.Handler) http.Handler {
	if s.metrics == nil || s.cfg.MetricsListen != "" {
		return next
	}
	h := s.metrics.m.Handler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == metrics.Path && r.Method == http.MethodGet && !strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// serveMetrics serves the endpoint's own listener, if it has one.
func (s *Server) serveMetrics() {
	if s.metrics == nil || s.metrics.ln == nil {
		return
	}
	s.log.Info("metrics endpoint listening", "endpoint", s.MetricsURL())
	go func() {
		if err := s.metrics.http.Serve(s.metrics.ln); !errors.Is(err, http.ErrServerClosed) {
			s.log.Error("metrics endpoint stopped", "error", err)
		}
	}()
}

// shutdownMetrics stops the endpoint's own listener, if it has one.
func (s *Server) shutdownMetrics(ctx context.Context) {
	if s.metrics != nil && s.metrics.http != nil {
		s.metrics.http.Shutdown(ctx)
	}
}

// MetricsURL returns the URL of the metrics endpoint, or "" when it is off.
func (s *Server) MetricsURL() string {
	switch {
	case s.metrics == nil:
		return ""
	case s.metrics.ln != nil:
		return "http://" + s.metrics.ln.Addr().String() + metrics.Path
	}
	return s.URL() + metrics.Path
}
