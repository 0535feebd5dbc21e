package server

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
)

// maxStoreDelay bounds a SlowStore's latency (a minute per write).
const maxStoreDelay = time.Minute

// errInjectedOutage is what a write fails with during FailingStore: the store's own
// unavailability error, so that the API answers it as it answers a real outage
// (ServiceUnavailableException, which AWS SDKs retry) and the loops pause as they do then.
var errInjectedOutage = fmt.Errorf("%w (a FailingStore fault injected with Hoist.InjectFault)", store.ErrUnavailable)

// faultStore is the dev mode's embedded store with SlowStore's latency added to every write
// transaction and FailingStore's failures. It embeds the concrete store, so that the optional
// interfaces the server looks for (store.Watcher, store.Blobs, ...) stay visible.
type faultStore struct {
	*sqlite.Store
	clock clock.Clock
	mu    sync.Mutex
	delay time.Duration
	until time.Time
	// failUntil ends FailingStore; fraction is the share of writes that fail until then.
	failUntil time.Time
	fraction  float64
}

// devStore wraps the embedded store of a dev-mode server so that SlowStore and FailingStore
// can reach it; any other store is returned as it is.
func (s *Server) devStore(st store.Store) store.Store {
	sq, ok := st.(*sqlite.Store)
	if !s.cfg.Dev || !ok {
		return st
	}
	s.faulty = &faultStore{Store: sq, clock: s.cfg.Clock}
	return s.faulty
}

// slowDown adds delay to every write until until.
func (w *faultStore) slowDown(delay time.Duration, until time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.delay, w.until = delay, until
}

// failWrites makes the given fraction of writes fail until until.
func (w *faultStore) failWrites(fraction float64, until time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fraction, w.failUntil = fraction, until
}

// latency is the delay a write gets now.
func (w *faultStore) latency() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.clock.Now().Before(w.until) {
		return 0
	}
	return w.delay
}

// fails decides whether a write made now with ctx fails. The server's own time control is
// exempt (exemptFromFaults), so that virtual time can still move past the outage.
func (w *faultStore) fails(ctx context.Context) bool {
	if exempt, _ := ctx.Value(faultExemptKey{}).(bool); exempt {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.clock.Now().Before(w.failUntil) {
		return false
	}
	return w.fraction >= 1 || rand.Float64() < w.fraction
}

type faultExemptKey struct{}

// exemptFromFaults marks ctx for store writes that FailingStore lets through: those of the
// virtual time operations, which a test uses to end the outage.
func exemptFromFaults(ctx context.Context) context.Context {
	return context.WithValue(ctx, faultExemptKey{}, true)
}

// Update fails during FailingStore, else waits out SlowStore's latency, then writes. A
// failed write never reaches the store: nothing of it is committed.
func (w *faultStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if w.fails(ctx) {
		return errInjectedOutage
	}
	if d := w.latency(); d > 0 {
		select {
		case <-w.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return w.Store.Update(ctx, fn)
}

// PutBlob fails during FailingStore as Update does.
func (w *faultStore) PutBlob(ctx context.Context, key string, r io.Reader) (int64, error) {
	if w.fails(ctx) {
		return 0, errInjectedOutage
	}
	return w.Store.PutBlob(ctx, key, r)
}

// slowStoreFault adds in.Millis of latency to store writes for in.Seconds.
func (s *Server) slowStoreFault(in *InjectFaultInput) (*InjectFaultOutput, error) {
	if s.faulty == nil {
		return nil, api.Errorf(api.InvalidRequestException, "SlowStore needs the embedded store.")
	}
	delay := time.Duration(in.Millis) * time.Millisecond
	if in.Millis <= 0 || delay > maxStoreDelay || !validSpan(in.Seconds) {
		return nil, api.Errorf(api.InvalidRequestException,
			"SlowStore needs Millis between 1 and %d and Seconds more than 0 and at most %.0f.", maxStoreDelay.Milliseconds(), maxPartition.Seconds())
	}
	until := s.faultEnd(in.Seconds)
	s.faulty.slowDown(delay, until)
	s.log.Info("fault injected: slow store", "delay", delay, "until", until)
	return &InjectFaultOutput{Kind: in.Kind, Until: until.UTC().Format(time.RFC3339Nano)}, nil
}

// failingStoreFault makes in.Fraction of store writes (all when it is 0) fail for in.Seconds.
func (s *Server) failingStoreFault(in *InjectFaultInput) (*InjectFaultOutput, error) {
	if s.faulty == nil {
		return nil, api.Errorf(api.InvalidRequestException, "FailingStore needs the embedded store.")
	}
	if !validSpan(in.Seconds) || !(in.Fraction >= 0 && in.Fraction <= 1) {
		return nil, api.Errorf(api.InvalidRequestException,
			"FailingStore needs Seconds more than 0 and at most %.0f, and Fraction between 0 and 1 (0 means every write).", maxPartition.Seconds())
	}
	fraction := in.Fraction
	if fraction == 0 {
		fraction = 1
	}
	until := s.faultEnd(in.Seconds)
	s.faulty.failWrites(fraction, until)
	s.log.Info("fault injected: failing store", "fraction", fraction, "until", until)
	return &InjectFaultOutput{Kind: in.Kind, Until: until.UTC().Format(time.RFC3339Nano)}, nil
}

// validSpan reports whether a fault's Seconds is more than 0 and at most maxPartition.
func validSpan(seconds float64) bool {
	return seconds > 0 && seconds <= maxPartition.Seconds()
}

// faultEnd is when a fault lasting seconds from now ends on the server's clock.
func (s *Server) faultEnd(seconds float64) time.Time {
	return s.cfg.Clock.Now().Add(time.Duration(seconds * float64(time.Second)))
}
