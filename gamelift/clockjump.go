package gamelift

import (
	"context"
	"encoding/json"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// CarryHealthThroughJump prepares a forward jump of the clock by d (dev mode's virtual time,
// docs/dev.md). Every connected ACTIVE process that last reported healthy within two health
// intervals is taken to have kept reporting through the jump, so running processes keep
// working; a process that is disconnected, silent for longer or reporting unhealthy is not,
// and misses its health checks as soon as the clock has moved. Call it before moving the
// clock.
func (s *Service) CarryHealthThroughJump(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	return s.update(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindProcess, store.ListOptions{})
		if err != nil {
			return err
		}
		now := s.nowMillis()
		for _, r := range recs {
			var p processDoc
			if err := json.Unmarshal(r.Data, &p); err != nil {
				return err
			}
			if !s.hosting.keepsReporting(&p, now) {
				continue
			}
			p.LastHealthy += d.Milliseconds()
			p.LastHeartbeat += d.Milliseconds()
			if err := putDoc(tx, r, &p); err != nil {
				return err
			}
		}
		return nil
	})
}

// keepsReporting reports whether p is a live, healthy process at now: connected, ACTIVE, its
// last report healthy and at most one health check missed.
func (h hosting) keepsReporting(p *processDoc, now int64) bool {
	recent := time.Duration(now-p.LastHealthy)*time.Millisecond < 2*h.healthInterval
	return p.Status == processActive && p.Connected && p.Unhealthy == 0 && recent
}
