package bench

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// steppingClock jumps forward by exactly the requested wait whenever pace waits, so a paced
// run completes instantly and its schedule can be checked exactly.
type steppingClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *steppingClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

func (c *steppingClock) NewTicker(time.Duration) clock.Ticker { panic("not used") }

func collect(ch <-chan time.Time) []time.Time {
	var out []time.Time
	for at := range ch {
		out = append(out, at)
	}
	return out
}

func TestPaceByCount(t *testing.T) {
	start := time.Unix(1000, 0)
	clk := &steppingClock{now: start}
	ch := make(chan time.Time, 100)
	pace(context.Background(), clk, 400, 10, 0, ch)
	got := collect(ch)
	if len(got) != 10 {
		t.Fatalf("scheduled %d requests, want 10", len(got))
	}
	for i, at := range got {
		if want := start.Add(time.Duration(i) * 2500 * time.Microsecond); !at.Equal(want) {
			t.Errorf("request %d scheduled at +%v, want +%v", i, at.Sub(start), want.Sub(start))
		}
	}
	if len(clk.waits) != 9 {
		t.Errorf("waited %d times, want 9 (no wait before the first request)", len(clk.waits))
	}
}

func TestPaceByDuration(t *testing.T) {
	start := time.Unix(1000, 0)
	ch := make(chan time.Time, 100)
	pace(context.Background(), &steppingClock{now: start}, 100, 0, 55*time.Millisecond, ch)
	got := collect(ch)
	if len(got) != 6 || !got[5].Equal(start.Add(50*time.Millisecond)) {
		t.Fatalf("schedule = %v, want 6 requests 10ms apart", got)
	}
}

func TestPaceCatchesUpWhenLate(t *testing.T) {
	// A clock that is past every due time: nothing waits, every request is released at once,
	// stamped with the late release time rather than its due time.
	start := time.Unix(1000, 0)
	clk := &lateClock{steppingClock{now: start}}
	ch := make(chan time.Time, 100)
	pace(context.Background(), clk, 1000, 5, 0, ch)
	got := collect(ch)
	if len(got) != 5 || len(clk.waits) != 0 {
		t.Fatalf("schedule = %v, waits = %v; want 5 requests and no waits", got, clk.waits)
	}
	for i, at := range got {
		if at.Sub(start) < time.Hour {
			t.Errorf("request %d stamped +%v, want its late release time (+1h or more)", i, at.Sub(start))
		}
	}
}

// lateClock reports its start time once, then an hour later for ever after.
type lateClock struct{ steppingClock }

func (c *lateClock) Now() time.Time {
	now := c.steppingClock.Now()
	c.mu.Lock()
	c.now = now.Add(time.Hour)
	c.mu.Unlock()
	return now
}

func TestPaceStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ch := make(chan time.Time) // unbuffered and unread: only cancellation ends pace
	pace(ctx, &steppingClock{now: time.Unix(0, 0)}, 10, 0, time.Hour, ch)
	if _, open := <-ch; open {
		t.Fatal("pace did not close its channel after cancellation")
	}
}
