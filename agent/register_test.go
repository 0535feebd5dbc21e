package agent

import (
	"context"
	"errors"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// register runs Register in a goroutine, moving the fake clock until it returns, and reports
// the fake time it took.
func registerOnClock(t *testing.T, cp *fakeControlPlane) (Registration, error, time.Duration) {
	t.Helper()
	fc := cp.clk.(*clock.Fake)
	start := fc.Now()
	type result struct {
		reg Registration
		err error
	}
	done := make(chan result, 1)
	go func() {
		reg, err := Register(context.Background(), fc, cp, Compute{FleetID: "fleet-1", ComputeName: "host-1"})
		done <- result{reg, err}
	}()
	var r result
	testwait.Until(t, 20*time.Second, time.Millisecond, "Register returning", func() bool {
		select {
		case r = <-done:
			return true
		default:
			fc.Advance(250 * time.Millisecond)
			return false
		}
	})
	return r.reg, r.err, fc.Now().Sub(start)
}

func notReady() error { return fmt.Errorf("RegisterCompute: %w", ErrNotReady) }

// TestRegisterRetriesNotReady: two NotReady answers are retried after 1 s and 2 s of backoff.
func TestRegisterRetriesNotReady(t *testing.T) {
	cp := &fakeControlPlane{clk: clock.NewFake(epoch), agentEndpoint: "ws://agent.test/",
		registerErrs: []error{notReady(), notReady()}}
	reg, err, took := registerOnClock(t, cp)
	if err != nil {
		t.Fatal(err)
	}
	if n, _, _ := cp.counts(); n != 3 {
		t.Fatalf("%d RegisterCompute calls, want 3", n)
	}
	if took < 3*time.Second || took > 6*time.Second {
		t.Fatalf("took %v of clock time, want the 1 s + 2 s backoff", took)
	}
	if reg.AgentEndpoint != "ws://agent.test/" || reg.SdkEndpoint == "" {
		t.Fatalf("registration = %+v", reg)
	}
}

// TestRegisterGivesUpAfterEightRetries: NotReady forever fails after 1 + 8 attempts.
func TestRegisterGivesUpAfterEightRetries(t *testing.T) {
	errs := make([]error, 20)
	for i := range errs {
		errs[i] = notReady()
	}
	cp := &fakeControlPlane{clk: clock.NewFake(epoch), registerErrs: errs}
	_, err, _ := registerOnClock(t, cp)
	if !errors.Is(err, ErrNotReady) {
		t.Fatalf("err = %v, want NotReady", err)
	}
	if n, _, _ := cp.counts(); n != 9 {
		t.Fatalf("%d RegisterCompute calls, want 9", n)
	}
}

// TestRegisterConflictMeansRegistered: Conflict reads the existing registration instead.
func TestRegisterConflictMeansRegistered(t *testing.T) {
	cp := &fakeControlPlane{clk: clock.NewFake(epoch), agentEndpoint: "ws://agent.test/",
		registerErrs: []error{fmt.Errorf("RegisterCompute: %w", ErrConflict)}}
	reg, err, _ := registerOnClock(t, cp)
	if err != nil || reg.AgentEndpoint != "ws://agent.test/" {
		t.Fatalf("reg %+v err %v", reg, err)
	}
	if n, d, _ := cp.counts(); n != 1 || d != 1 {
		t.Fatalf("register %d describe %d, want 1 and 1", n, d)
	}
}

// TestRegisterOtherErrorsFailAtOnce: an Unauthorized answer is not retried.
func TestRegisterOtherErrorsFailAtOnce(t *testing.T) {
	cp := &fakeControlPlane{clk: clock.NewFake(epoch),
		registerErrs: []error{fmt.Errorf("RegisterCompute: %w", ErrUnauthorized)}}
	_, err, _ := registerOnClock(t, cp)
	if !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("err = %v", err)
	}
	if n, _, _ := cp.counts(); n != 1 {
		t.Fatalf("%d calls, want 1", n)
	}
}
