package server

import (
	"context"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
)

// maxStoreDelay bounds a SlowStore's latency (a minute per write).
const maxStoreDelay = time.Minute

// slowStore is the dev mode's embedded store with SlowStore's latency added to every write
// transaction. It embeds the concrete store, so that the optional interfaces the server looks
// for (store.Watcher, store.Blobs, ...) stay visible.
type slowStore struct {
	*sqlite.Store
	clock clock.Clock
	mu    sync.Mutex
	delay time.Duration
	until time.Time
}

// devStore wraps the embedded store of a dev-mode server so that SlowStore can slow it; any
// other store is returned as it is.
func (s *Server) devStore(st store.Store) store.Store {
	sq, ok := st.(*sqlite.Store)
	if !s.cfg.Dev || !ok {
		return st
	}
	s.slow = &slowStore{Store: sq, clock: s.cfg.Clock}
	return s.slow
}

// slowDown adds delay to every write until until.
func (w *slowStore) slowDown(delay time.Duration, until time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.delay, w.until = delay, until
}

// latency is the delay a write gets now.
func (w *slowStore) latency() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.clock.Now().Before(w.until) {
		return 0
	}
	return w.delay
}

// Update waits out the latency, then writes.
func (w *slowStore) Update(ctx context.Context, fn func(store.Tx) error) error {
	if d := w.latency(); d > 0 {
		select {
		case <-w.clock.After(d):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return w.Store.Update(ctx, fn)
}

// slowStoreFault adds in.Millis of latency to store writes for in.Seconds.
func (s *Server) slowStoreFault(in *InjectFaultInput) (*InjectFaultOutput, error) {
	if s.slow == nil {
		return nil, api.Errorf(api.InvalidRequestException, "SlowStore needs the embedded store.")
	}
	delay := time.Duration(in.Millis) * time.Millisecond
	if in.Millis <= 0 || delay > maxStoreDelay || !(in.Seconds > 0 && in.Seconds <= maxPartition.Seconds()) {
		return nil, api.Errorf(api.InvalidRequestException,
			"SlowStore needs Millis between 1 and %d and Seconds more than 0 and at most %.0f.", maxStoreDelay.Milliseconds(), maxPartition.Seconds())
	}
	until := s.cfg.Clock.Now().Add(time.Duration(in.Seconds * float64(time.Second)))
	s.slow.slowDown(delay, until)
	s.log.Info("fault injected: slow store", "delay", delay, "until", until)
	return &InjectFaultOutput{Kind: in.Kind, Until: until.UTC().Format(time.RFC3339Nano)}, nil
}
