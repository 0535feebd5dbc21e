package clock

import (
	"errors"
	"sync"
	"time"
)

// ErrBackwards is returned when a Virtual clock is asked to move back in time.
var ErrBackwards = errors.New("clock: virtual time never moves backwards")

// Virtual is the wall clock plus an offset that can only grow: it runs at the real pace and
// can also be moved forward (`hoist server --dev`, docs/dev.md). Its timers and tickers are
// due at a virtual time: they fire as real time passes, and a forward jump fires at once every
// timer it passes and every ticker at least once (a ticker then goes on from the new time,
// dropping the ticks it jumped over, as time.Ticker drops ticks its reader is not ready for).
// It is safe for concurrent use.
type Virtual struct {
	mu      sync.Mutex
	offset  time.Duration
	waiters map[*vwaiter]struct{}
}

// vwaiter is one timer (every == 0) or ticker on a Virtual clock.
type vwaiter struct {
	at    time.Time
	every time.Duration
	c     chan time.Time
	timer *time.Timer // the real timer armed for at
	gen   int         // bumped at each arming, so a superseded real timer does nothing
}

// NewVirtual returns a virtual clock that starts at the wall time.
func NewVirtual() *Virtual { return &Virtual{waiters: map[*vwaiter]struct{}{}} }

// Now returns the wall time plus the offset.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now()
}

func (v *Virtual) now() time.Time { return time.Now().Add(v.offset) }

// Offset returns how far ahead of the wall clock v is.
func (v *Virtual) Offset() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.offset
}

// After returns a channel that receives the virtual time once d has passed on v.
func (v *Virtual) After(d time.Duration) <-chan time.Time {
	return v.add(d, 0).c
}

// NewTicker returns a ticker that fires every d of virtual time.
func (v *Virtual) NewTicker(d time.Duration) Ticker {
	if d <= 0 {
		panic("clock: non-positive ticker interval")
	}
	return virtualTicker{v, v.add(d, d)}
}

func (v *Virtual) add(d, every time.Duration) *vwaiter {
	v.mu.Lock()
	defer v.mu.Unlock()
	w := &vwaiter{at: v.now().Add(d), every: every, c: make(chan time.Time, 1)}
	v.waiters[w] = struct{}{}
	v.arm(w, v.now())
	return w
}

type virtualTicker struct {
	v *Virtual
	w *vwaiter
}

func (t virtualTicker) C() <-chan time.Time { return t.w.c }

func (t virtualTicker) Stop() {
	t.v.mu.Lock()
	defer t.v.mu.Unlock()
	t.v.remove(t.w)
}

// Advance moves v forward by d (d must not be negative), firing what falls due.
func (v *Virtual) Advance(d time.Duration) error {
	if d < 0 {
		return ErrBackwards
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	v.offset += d
	v.fireDue()
	return nil
}

// Set moves v forward to t, firing what falls due. A t before v's time is refused with
// ErrBackwards.
func (v *Virtual) Set(t time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := time.Now()
	offset := t.Sub(now)
	if offset < v.offset {
		return ErrBackwards
	}
	v.offset = offset
	v.fireDue()
	return nil
}

// fireDue fires every waiter whose time has come and re-arms the real timers of the rest for
// the new offset. v.mu is held.
func (v *Virtual) fireDue() {
	now := v.now()
	for w := range v.waiters {
		if !w.at.After(now) {
			v.fire(w, now)
			continue
		}
		v.arm(w, now)
	}
}

// fire delivers now to w's channel (dropping it if the reader has not taken the last one),
// then forgets a timer or moves a ticker to its next time after now. v.mu is held.
func (v *Virtual) fire(w *vwaiter, now time.Time) {
	select {
	case w.c <- now:
	default:
	}
	if w.every == 0 {
		v.remove(w)
		return
	}
	w.at = w.at.Add(w.every)
	if !w.at.After(now) {
		w.at = now.Add(w.every)
	}
	v.arm(w, now)
}

// arm (re)starts w's real timer for the real time left until w.at. v.mu is held.
func (v *Virtual) arm(w *vwaiter, now time.Time) {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.gen++
	gen := w.gen
	w.timer = time.AfterFunc(w.at.Sub(now), func() { v.expire(w, gen) })
}

// expire is w's real timer going off.
func (v *Virtual) expire(w *vwaiter, gen int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if _, ok := v.waiters[w]; !ok || w.gen != gen {
		return
	}
	now := v.now()
	if w.at.After(now) { // the real timer ran early against the virtual time: wait the rest
		v.arm(w, now)
		return
	}
	v.fire(w, now)
}

// remove stops and forgets w. v.mu is held.
func (v *Virtual) remove(w *vwaiter) {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.gen++
	delete(v.waiters, w)
}
