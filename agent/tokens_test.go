package agent

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

var epoch = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// TestTokenRefreshTiming: with one-hour tokens the keeper checks every 5 minutes, fetches a
// new token only once less than 15 minutes remain, and keeps the old one when a fetch fails.
func TestTokenRefreshTiming(t *testing.T) {
	fc := clock.NewFake(epoch)
	var fetches []time.Time
	fail := false
	k := &tokenKeeper{
		clk: fc, refreshBefore: DefaultTokenRefreshBefore, checkEvery: DefaultTokenCheckInterval,
		fetch: func(context.Context) (Token, error) {
			if fail {
				return Token{}, errors.New("control plane down")
			}
			fetches = append(fetches, fc.Now())
			return Token{Value: "tok-" + fc.Now().Format("1504"), Expires: fc.Now().Add(time.Hour)}, nil
		},
	}
	ctx := context.Background()
	check := func(wantNext time.Duration, wantFetches int) {
		t.Helper()
		next, err := k.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if next != wantNext || len(fetches) != wantFetches {
			t.Fatalf("at +%v: next %v fetches %d, want %v and %d", fc.Now().Sub(epoch), next, len(fetches), wantNext, wantFetches)
		}
	}
	check(5*time.Minute, 1) // first check fetches
	first := k.Current()
	for i := 0; i < 8; i++ { // +5 ... +40 min: 20+ min remain, nothing to do
		fc.Advance(5 * time.Minute)
		check(5*time.Minute, 1)
	}
	fc.Advance(5 * time.Minute) // +45: exactly 15 min remain, still not "less than"
	check(5*time.Minute, 1)
	fc.Advance(time.Minute) // +46: 14 min remain
	check(5*time.Minute, 2)
	if k.Current() == first || !k.Current().Expires.Equal(epoch.Add(46*time.Minute+time.Hour)) {
		t.Fatalf("token not replaced: %+v", k.Current())
	}
	// The window can come sooner than the check interval: check exactly when it opens.
	fc.Advance(42 * time.Minute) // 18 min remain: window opens in 3 min
	check(3*time.Minute, 2)
	fc.Advance(3*time.Minute + time.Second)
	fail = true
	before := k.Current()
	if next, err := k.Check(ctx); err == nil || next != tokenRetry {
		t.Fatalf("failed fetch: next %v err %v, want retry in %v", next, err, tokenRetry)
	}
	if k.Current() != before {
		t.Fatal("a failed fetch dropped the token")
	}
}

// TestShortLivedTokenDoesNotSpin: a token shorter than the refresh window is re-checked
// halfway to its expiry, not immediately.
func TestShortLivedTokenDoesNotSpin(t *testing.T) {
	fc := clock.NewFake(epoch)
	k := &tokenKeeper{
		clk: fc, refreshBefore: DefaultTokenRefreshBefore, checkEvery: DefaultTokenCheckInterval,
		fetch: func(context.Context) (Token, error) {
			return Token{Value: "t", Expires: fc.Now().Add(4 * time.Minute)}, nil
		},
	}
	next, err := k.Check(context.Background())
	if err != nil || next != 2*time.Minute {
		t.Fatalf("next %v err %v, want 2m", next, err)
	}
}

// idleLink is a Link that is up and does nothing.
type idleLink struct{}

func (idleLink) SendHeartbeat(context.Context, Heartbeat) error       { return nil }
func (idleLink) NotifyTermination(context.Context, Termination) error { return nil }
func (idleLink) RequestRuntimeConfiguration(context.Context) error    { return nil }
func (idleLink) Done() <-chan struct{}                                { return nil }
func (idleLink) Close() error                                         { return nil }

// TestNextWakeIgnoresWorkThatCannotRun: deadlines long past for work that cannot run now (a
// dial while connected, token and config checks while stopping) must not make the loop spin.
func TestNextWakeIgnoresWorkThatCannotRun(t *testing.T) {
	fc := clock.NewFake(epoch)
	a, err := New(Config{Compute: Compute{FleetID: "fleet-1", ComputeName: "host-1"},
		ControlPlane: &fakeControlPlane{clk: fc}, Clock: fc})
	if err != nil {
		t.Fatal(err)
	}
	now := fc.Now()
	a.reg.AgentEndpoint = "ws://agent.test/"
	a.tokens.Set(Token{Value: "t", Expires: now.Add(time.Hour)})
	a.link = idleLink{}
	a.nextConnect = now.Add(-time.Hour)
	a.nextToken, a.nextConfig, a.nextHeartbeat = now.Add(5*time.Minute), now.Add(time.Minute), now.Add(30*time.Second)
	if d := a.nextWake(now); d != 30*time.Second {
		t.Fatalf("connected: next wake in %v, want the heartbeat in 30s", d)
	}
	a.stopping = true
	a.nextToken, a.nextConfig = now.Add(-time.Hour), now.Add(-time.Hour)
	if d := a.nextWake(now); d != 30*time.Second {
		t.Fatalf("stopping: next wake in %v, want the heartbeat in 30s", d)
	}
	a.link = nil
	a.nextHeartbeat = now.Add(-time.Hour)
	a.nextConnect = now.Add(10 * time.Second)
	if d := a.nextWake(now); d != 10*time.Second {
		t.Fatalf("disconnected: next wake in %v, want the redial in 10s", d)
	}
}
