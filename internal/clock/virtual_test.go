package clock

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// received reports whether c delivers within a short real wait.
func received(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	case <-time.After(time.Second):
		return false
	}
}

func TestVirtualNowFollowsWallPlusOffset(t *testing.T) {
	v := NewVirtual()
	if d := v.Now().Sub(time.Now()); d > time.Second || d < -time.Second {
		t.Fatalf("virtual now is %v from the wall clock", d)
	}
	if err := v.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := v.Now().Sub(time.Now()); d < 59*time.Minute || d > 61*time.Minute {
		t.Fatalf("after Advance(1h) virtual now is %v ahead", d)
	}
	if v.Offset() != time.Hour {
		t.Fatalf("offset = %v", v.Offset())
	}
}

func TestVirtualNeverBackwards(t *testing.T) {
	v := NewVirtual()
	if err := v.Advance(-time.Second); !errors.Is(err, ErrBackwards) {
		t.Fatalf("Advance(-1s) = %v", err)
	}
	if err := v.Set(time.Now().Add(-time.Minute)); !errors.Is(err, ErrBackwards) {
		t.Fatalf("Set(past) = %v", err)
	}
	target := time.Now().Add(24 * time.Hour)
	if err := v.Set(target); err != nil {
		t.Fatal(err)
	}
	if now := v.Now(); now.Before(target) || now.Sub(target) > time.Second {
		t.Fatalf("after Set now = %v, want %v", now, target)
	}
	if err := v.Set(target.Add(-time.Hour)); !errors.Is(err, ErrBackwards) {
		t.Fatalf("Set(before current) = %v", err)
	}
}

func TestVirtualAfterFiresOnJump(t *testing.T) {
	v := NewVirtual()
	due, later := v.After(time.Minute), v.After(time.Hour)
	if err := v.Advance(90 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-due:
		if got.Before(time.Now().Add(89 * time.Second)) {
			t.Fatalf("fired with %v, not the virtual time", got)
		}
	default:
		t.Fatal("a 1 min timer did not fire during a 90 s jump")
	}
	select {
	case <-later:
		t.Fatal("a 1 h timer fired after a 90 s jump")
	default:
	}
}

func TestVirtualAfterFiresWithRealTime(t *testing.T) {
	v := NewVirtual()
	if err := v.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	if !received(v.After(20 * time.Millisecond)) {
		t.Fatal("a short timer did not fire as real time passed")
	}
}

func TestVirtualTickerStepsOnJumpAndWithRealTime(t *testing.T) {
	v := NewVirtual()
	tk := v.NewTicker(time.Minute)
	defer tk.Stop()
	if err := v.Advance(90 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !received(tk.C()) {
		t.Fatal("a 1 min ticker did not tick during a 90 s jump")
	}
	if err := v.Advance(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	if !received(tk.C()) {
		t.Fatal("the ticker did not tick again a minute of virtual time later")
	}
	fast := v.NewTicker(10 * time.Millisecond)
	defer fast.Stop()
	for range 3 {
		if !received(fast.C()) {
			t.Fatal("a fast ticker did not tick as real time passed")
		}
	}
}

func TestVirtualTickerStop(t *testing.T) {
	v := NewVirtual()
	tk := v.NewTicker(time.Minute)
	tk.Stop()
	if err := v.Advance(time.Hour); err != nil {
		t.Fatal(err)
	}
	select {
	case <-tk.C():
		t.Fatal("a stopped ticker ticked")
	default:
	}
	if n := len(v.waiters); n != 0 {
		t.Fatalf("%d waiters left", n)
	}
}

func TestVirtualEveryAndWithTimeout(t *testing.T) {
	v := NewVirtual()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var steps atomic.Int32
	stepped := make(chan struct{}, 1)
	go Every(ctx, v, time.Minute, func(context.Context) error {
		steps.Add(1)
		select {
		case stepped <- struct{}{}:
		default:
		}
		return nil
	}, nil)
	tctx, tcancel := WithTimeout(context.Background(), v, 5*time.Minute)
	defer tcancel()
	// Every makes its ticker in its goroutine: jump until it has stepped.
	for deadline := time.Now().Add(10 * time.Second); len(stepped) == 0 && time.Now().Before(deadline); runtime.Gosched() {
		if err := v.Advance(6 * time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-stepped:
	case <-time.After(time.Second):
		t.Fatal("Every did not step after a 6 min jump")
	}
	select {
	case <-tctx.Done():
	case <-time.After(time.Second):
		t.Fatal("WithTimeout(5m) did not fire after a 6 min jump")
	}
}

func TestVirtualConcurrentUse(t *testing.T) {
	v := NewVirtual()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			tk := v.NewTicker(time.Duration(i+1) * time.Millisecond)
			defer tk.Stop()
			for range 50 {
				select {
				case <-tk.C():
				case <-v.After(time.Duration(i) * time.Second):
				case <-time.After(time.Millisecond):
				}
				_ = v.Now()
			}
		})
		wg.Go(func() {
			for range 50 {
				if err := v.Advance(time.Second); err != nil {
					t.Error(err)
				}
				_ = v.Set(v.Now().Add(time.Millisecond))
			}
		})
	}
	wg.Wait()
	if v.Offset() < 400*time.Second {
		t.Fatalf("offset = %v after 400 one-second advances", v.Offset())
	}
}
