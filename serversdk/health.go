package serversdk

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// healthLoop reports health right away and then every HealthInterval ± HealthJitter on the
// SDK's clock until ctx ends (§6.3).
func (s *SDK) healthLoop(ctx context.Context) {
	for {
		s.heartbeat(ctx)
		wait := s.opt.HealthInterval
		if j := int64(s.opt.HealthJitter); j > 0 {
			wait += time.Duration(rand.Int64N(2*j+1) - j)
		}
		select {
		case <-ctx.Done():
			return
		case <-s.opt.Clock.After(wait):
		}
	}
}

// heartbeat asks OnHealthCheck (HealthTimeout to answer, else unhealthy) and sends
// HeartbeatServerProcess. Its answer is ignored beyond logging.
func (s *SDK) heartbeat(ctx context.Context) {
	healthy := s.checkHealth(ctx)
	l, err := s.conn()
	if err != nil || ctx.Err() != nil {
		return
	}
	if err := l.call(ctx, message.HeartbeatServerProcess{HealthStatus: healthy}, s.opt.CallTimeout, nil); err != nil && ctx.Err() == nil {
		s.log.Warn("serversdk: heartbeat failed", "err", err)
	}
}

func (s *SDK) checkHealth(ctx context.Context) bool {
	p, _ := s.readyProc()
	if p.OnHealthCheck == nil {
		return true
	}
	answer := make(chan bool, 1)
	go func() { answer <- p.OnHealthCheck() }()
	select {
	case h := <-answer:
		return h
	case <-s.opt.Clock.After(s.opt.HealthTimeout):
		return false
	case <-ctx.Done():
		return false
	}
}
