package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// Token and registration timing, as the GameLift Agent does it.
const (
	// DefaultTokenRefreshBefore: a token is replaced once less than this remains.
	DefaultTokenRefreshBefore = 15 * time.Minute
	// DefaultTokenCheckInterval: the token is checked at least this often.
	DefaultTokenCheckInterval = 5 * time.Minute
	// registerRetries is how often RegisterCompute is retried on NotReady.
	registerRetries = 8
	// tokenRetry is the pause after a failed token request (capped by the check interval).
	tokenRetry = 30 * time.Second
)

// tokenKeeper holds the compute auth token and replaces it before it expires. Its Check is
// the whole loop body: the agent calls it when the returned delay has passed.
type tokenKeeper struct {
	clk           clock.Clock
	fetch         func(context.Context) (Token, error)
	refreshBefore time.Duration
	checkEvery    time.Duration

	mu  sync.Mutex
	tok Token
}

// Current returns the token held now (zero before the first successful fetch).
func (k *tokenKeeper) Current() Token {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.tok
}

// Set replaces the token (a RefreshConnection push carries one).
func (k *tokenKeeper) Set(t Token) {
	k.mu.Lock()
	k.tok = t
	k.mu.Unlock()
}

// Invalidate drops the token so the next Check fetches a new one.
func (k *tokenKeeper) Invalidate() { k.Set(Token{}) }

// Check fetches a new token if there is none or less than refreshBefore remains, and returns
// how long to wait before checking again: at most checkEvery, and no later than the moment the
// token enters its refresh window. A failed fetch keeps the old token and asks to be retried
// sooner.
func (k *tokenKeeper) Check(ctx context.Context) (time.Duration, error) {
	now := k.clk.Now()
	tok := k.Current()
	if tok.Value == "" || tok.Expires.Sub(now) < k.refreshBefore {
		fresh, err := k.fetch(ctx)
		if err != nil {
			return min(tokenRetry, k.checkEvery), fmt.Errorf("compute auth token: %w", err)
		}
		if fresh.Value == "" {
			return min(tokenRetry, k.checkEvery), errors.New("compute auth token: empty")
		}
		k.Set(fresh)
		tok = fresh
	}
	return k.nextCheck(now, tok), nil
}

func (k *tokenKeeper) nextCheck(now time.Time, tok Token) time.Duration {
	if tok.Expires.IsZero() { // no expiry given: just keep checking
		return k.checkEvery
	}
	untilWindow := tok.Expires.Add(-k.refreshBefore).Sub(now)
	if untilWindow <= 0 {
		// The token is born inside the refresh window (a short-lived token): check again
		// halfway to its expiry rather than spinning.
		untilWindow = max(tok.Expires.Sub(now)/2, time.Second)
	}
	return min(k.checkEvery, untilWindow)
}
