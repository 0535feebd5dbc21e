package clock

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func fired(c <-chan time.Time) (time.Time, bool) {
	select {
	case t := <-c:
		return t, true
	default:
		return time.Time{}, false
	}
}

func TestFakeAfter(t *testing.T) {
	f := NewFake(start)
	c := f.After(time.Minute)
	f.Advance(59 * time.Second)
	if _, ok := fired(c); ok {
		t.Fatal("After(1m) fired after 59s")
	}
	f.Advance(time.Second)
	got, ok := fired(c)
	if !ok || !got.Equal(start.Add(time.Minute)) {
		t.Fatalf("After(1m) at 60s: fired=%v at %v", ok, got)
	}
	if !f.Now().Equal(start.Add(time.Minute)) {
		t.Errorf("Now = %v", f.Now())
	}
}

func TestFakeTickerFiresInOrderAndStops(t *testing.T) {
	f := NewFake(start)
	tk := f.NewTicker(10 * time.Second)
	late := f.After(25 * time.Second)
	f.Advance(10 * time.Second)
	if got, ok := fired(tk.C()); !ok || !got.Equal(start.Add(10*time.Second)) {
		t.Fatalf("first tick: %v %v", ok, got)
	}
	f.Advance(20 * time.Second) // ticks at 20s and 30s; the reader missed one, so one is kept
	if got, ok := fired(tk.C()); !ok || !got.Equal(start.Add(20*time.Second)) {
		t.Fatalf("tick kept while nobody read: %v %v", ok, got)
	}
	if _, ok := fired(tk.C()); ok {
		t.Fatal("a dropped tick was delivered")
	}
	if got, ok := fired(late); !ok || !got.Equal(start.Add(25*time.Second)) {
		t.Fatalf("After(25s) fired at %v (%v)", got, ok)
	}
	tk.Stop()
	f.Advance(time.Minute)
	if _, ok := fired(tk.C()); ok {
		t.Fatal("a stopped ticker fired")
	}
}

func TestFakeSetNeverGoesBack(t *testing.T) {
	f := NewFake(start)
	f.Set(start.Add(-time.Hour))
	if !f.Now().Equal(start) {
		t.Errorf("Set to the past moved the clock to %v", f.Now())
	}
}

func TestRealClock(t *testing.T) {
	var c Clock = Real{}
	if d := time.Since(c.Now()); d < 0 || d > time.Minute {
		t.Errorf("Real.Now is %v away from time.Now", d)
	}
	tk := c.NewTicker(time.Millisecond)
	defer tk.Stop()
	select {
	case <-tk.C():
	case <-c.After(10 * time.Second):
		t.Fatal("a 1ms ticker did not tick within 10s")
	}
}

func TestEveryStepsOnTheClockAndStops(t *testing.T) {
	f := NewFake(start)
	ctx, cancel := context.WithCancel(context.Background())
	steps, errs := make(chan struct{}, 10), make(chan error, 10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(ctx, f, time.Minute, func(context.Context) error { steps <- struct{}{}; return errors.New("boom") },
			func(err error) { errs <- err })
	}()
	for i := 0; i < 2; i++ {
		// The ticker is created inside the goroutine: advance until it has fired.
		deadline := time.Now().Add(10 * time.Second)
		for len(steps) == 0 && time.Now().Before(deadline) {
			f.Advance(time.Minute)
			runtime.Gosched()
		}
		select {
		case <-steps:
		case <-time.After(10 * time.Second):
			t.Fatalf("step %d did not run", i+1)
		}
		if err := <-errs; err == nil || err.Error() != "boom" {
			t.Fatalf("onError got %v", err)
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after its context ended")
	}
}

func TestEveryOrWakeStepsAtOnceOnWakeAndOnTheClock(t *testing.T) {
	f := NewFake(start)
	ctx, cancel := context.WithCancel(context.Background())
	steps, wake := make(chan struct{}, 10), make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		EveryOrWake(ctx, f, time.Minute, wake, func(context.Context) error { steps <- struct{}{}; return nil }, nil)
	}()
	step := func(what string) {
		t.Helper()
		select {
		case <-steps:
		case <-time.After(10 * time.Second):
			t.Fatalf("no step %s", what)
		}
	}
	step("at once")
	wake <- struct{}{}
	step("on a wake")
	deadline := time.Now().Add(10 * time.Second)
	for len(steps) == 0 && time.Now().Before(deadline) { // the ticker fires as the fake clock moves
		f.Advance(time.Minute)
		runtime.Gosched()
	}
	step("on the clock")
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("EveryOrWake did not return after its context ended")
	}
}

// WithTimeout's context ends when the fake clock passes the timeout, not before.
func TestWithTimeout(t *testing.T) {
	f := NewFake(start)
	ctx, cancel := WithTimeout(context.Background(), f, time.Second)
	defer cancel()
	f.Advance(999 * time.Millisecond)
	runtime.Gosched()
	if ctx.Err() != nil {
		t.Fatal("context ended before the timeout")
	}
	f.Advance(time.Millisecond)
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("context did not end when the clock reached the timeout")
	}
	if !errors.Is(ctx.Err(), context.Canceled) {
		t.Errorf("err = %v", ctx.Err())
	}
}
