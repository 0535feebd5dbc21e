// Package testwait polls a condition on the wall clock, with a deadline, for tests that wait
// on real processes, sockets and goroutines. Timeouts of the code under test are driven by
// fake clocks (internal/clock); the deadline here only bounds how long a failing test takes.
// Only tests import this package.
package testwait

import (
	"testing"
	"time"
)

// Until calls cond at once and then every interval until it returns true. If timeout passes
// first, it fails t with what. cond may advance a fake clock between polls.
func Until(t testing.TB, timeout, interval time.Duration, what string, cond func() bool) {
	t.Helper()
	if cond() {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case <-deadline.C:
			if cond() {
				return
			}
			t.Fatalf("after %v: %s", timeout, what)
			return
		case <-tick.C:
			if cond() {
				return
			}
		}
	}
}
