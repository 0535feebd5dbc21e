// Package clock is the injected time source. Everything in Hoist that reads the time or waits
// takes a Clock; production code uses Real, tests use a *Fake and Advance it instead of
// sleeping.
package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock tells the time and makes timers.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives the time once d has passed.
	After(d time.Duration) <-chan time.Time
	// NewTicker returns a ticker that fires every d.
	NewTicker(d time.Duration) Ticker
}

// Ticker is the part of time.Ticker that Hoist uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

// Real is the wall clock.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// NewTicker returns a time.Ticker.
func (Real) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Fake is a clock that moves only when Advance or Set is called. Timers and tickers whose time
// has come fire during that call, in time order.
type Fake struct {
	mu      sync.Mutex
	now     time.Time
	waiters []*waiter
}

type waiter struct {
	at      time.Time
	every   time.Duration // >0 for tickers
	c       chan time.Time
	stopped bool
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that receives once the fake time has advanced by d.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &waiter{at: f.now.Add(d), c: make(chan time.Time, 1)}
	f.waiters = append(f.waiters, w)
	return w.c
}

// NewTicker returns a ticker driven by the fake time. Like time.Ticker it drops ticks that the
// reader is not ready for.
func (f *Fake) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w := &waiter{at: f.now.Add(d), every: d, c: make(chan time.Time, 1)}
	f.waiters = append(f.waiters, w)
	return fakeTicker{f, w}
}

type fakeTicker struct {
	f *Fake
	w *waiter
}

func (t fakeTicker) C() <-chan time.Time { return t.w.c }
func (t fakeTicker) Stop() {
	t.f.mu.Lock()
	t.w.stopped = true
	t.f.mu.Unlock()
}

// Advance moves the fake time forward by d, firing what falls due on the way.
func (f *Fake) Advance(d time.Duration) { f.Set(f.Now().Add(d)) }

// Set moves the fake time to t (never backwards), firing what falls due on the way.
func (f *Fake) Set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		sort.Slice(f.waiters, func(i, j int) bool { return f.waiters[i].at.Before(f.waiters[j].at) })
		if len(f.waiters) == 0 || f.waiters[0].at.After(t) {
			break
		}
		w := f.waiters[0]
		if w.at.After(f.now) {
			f.now = w.at
		}
		f.waiters = f.waiters[1:]
		if w.stopped {
			continue
		}
		select {
		case w.c <- f.now:
		default:
		}
		if w.every > 0 {
			w.at = w.at.Add(w.every)
			f.waiters = append(f.waiters, w)
		}
	}
	if t.After(f.now) {
		f.now = t
	}
}

// Every calls step each interval of c until ctx is done, passing step's errors to onError
// (which may be nil). It is the body of every background loop's Run method.
func Every(ctx context.Context, c Clock, interval time.Duration, step func(context.Context) error, onError func(error)) {
	t := c.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			if err := step(ctx); err != nil && ctx.Err() == nil && onError != nil {
				onError(err)
			}
		}
	}
}

// EveryOrWake is Every for a loop that can also be woken: it calls step at once, then each
// interval of c and whenever wake receives, until ctx is done.
func EveryOrWake(ctx context.Context, c Clock, interval time.Duration, wake <-chan struct{}, step func(context.Context) error, onError func(error)) {
	t := c.NewTicker(interval)
	defer t.Stop()
	for {
		if err := step(ctx); err != nil && ctx.Err() == nil && onError != nil {
			onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		case <-wake:
		}
	}
}

// WithTimeout is context.WithTimeout on c: the context is cancelled when d has passed on c
// (so a fake clock's Advance fires it), or when parent ends or cancel is called.
func WithTimeout(parent context.Context, c Clock, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	fire := c.After(d)
	go func() {
		select {
		case <-fire:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// Sleep waits d on c, or returns ctx's error as soon as ctx ends.
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	select {
	case <-c.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
