package testwait

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestUntilReturnsOnceTrue(t *testing.T) {
	var n atomic.Int32
	Until(t, 10*time.Second, time.Millisecond, "three polls", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Errorf("cond called %d times, want 3", got)
	}
}

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed = format
}

func TestUntilFailsAfterTimeout(t *testing.T) {
	r := &recorder{TB: t}
	Until(r, 20*time.Millisecond, time.Millisecond, "never", func() bool { return false })
	if r.failed == "" {
		t.Error("Until did not fail when cond never held")
	}
}
