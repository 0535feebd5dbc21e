package server

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/httpapi"
	"github.com/hoist-gg/hoist/internal/clock"
)

// The X-Amz-Targets of the virtual time operations (docs/dev.md). Like every Hoist operation
// outside GameLift's model they are awsJson1_1 requests signed with the server's keys; a
// server not started with --dev refuses them.
const (
	AdvanceTimeTarget = "Hoist.AdvanceTime"
	SetTimeTarget     = "Hoist.SetTime"
	GetTimeTarget     = "Hoist.GetTime"
)

// AdvanceTimeInput is the input of Hoist.AdvanceTime.
type AdvanceTimeInput struct {
	// Seconds is how far to move the server's clock forward (fractions allowed; not negative).
	Seconds float64 `json:"Seconds"`
}

// SetTimeInput is the input of Hoist.SetTime.
type SetTimeInput struct {
	// Time is the server's new time, RFC 3339; it must not be before the current time.
	Time string `json:"Time"`
}

// GetTimeInput is the input of Hoist.GetTime (empty).
type GetTimeInput struct{}

// TimeOutput is the output of the three time operations: the server's time after the call.
type TimeOutput struct {
	// Time is the server's time, RFC 3339 with nanoseconds.
	Time string `json:"Time"`
	// OffsetSeconds is how far the server's clock is ahead of the wall clock.
	OffsetSeconds float64 `json:"OffsetSeconds"`
	// Dev is whether the server runs in dev mode (and so whether its time can be moved).
	Dev bool `json:"Dev"`
}

// errNotDev is the answer to a virtual time operation on a server not in dev mode.
var errNotDev = api.Errorf(api.InvalidRequestException,
	"Virtual time needs a server in dev mode: start it with `hoist server --dev` (docs/dev.md).")

// devExtensions are the dev mode operations: virtual time and fault injection (refused by a
// server not in dev mode).
func (s *Server) devExtensions() []httpapi.Extension {
	return append(s.devTimeExtensions(), s.faultExtensions()...)
}

// devTimeExtensions are the virtual time operations.
func (s *Server) devTimeExtensions() []httpapi.Extension {
	return []httpapi.Extension{
		{Target: AdvanceTimeTarget, NewInput: func() any { return new(AdvanceTimeInput) },
			Call: func(ctx context.Context, in any) (any, error) { return s.advanceTime(ctx, in.(*AdvanceTimeInput)) }},
		{Target: SetTimeTarget, NewInput: func() any { return new(SetTimeInput) },
			Call: func(ctx context.Context, in any) (any, error) { return s.setTime(ctx, in.(*SetTimeInput)) }},
		{Target: GetTimeTarget, NewInput: func() any { return new(GetTimeInput) },
			Call: func(context.Context, any) (any, error) { return s.timeOutput(), nil }},
	}
}

// virtualClock returns the server's clock when it can be moved (dev mode), else nil.
func (s *Server) virtualClock() *clock.Virtual {
	if !s.cfg.Dev {
		return nil
	}
	v, _ := s.cfg.Clock.(*clock.Virtual)
	return v
}

func (s *Server) advanceTime(ctx context.Context, in *AdvanceTimeInput) (*TimeOutput, error) {
	v := s.virtualClock()
	if v == nil {
		return nil, errNotDev
	}
	if in.Seconds < 0 || math.IsNaN(in.Seconds) || in.Seconds > maxAdvance.Seconds() {
		return nil, api.Errorf(api.InvalidRequestException, "Seconds must be between 0 and %.0f.", maxAdvance.Seconds())
	}
	d := time.Duration(in.Seconds * float64(time.Second))
	if err := s.svc.CarryHealthThroughJump(exemptFromFaults(ctx), d); err != nil {
		return nil, err
	}
	if err := v.Advance(d); err != nil {
		return nil, api.Errorf(api.InvalidRequestException, "%v", err)
	}
	s.log.Info("virtual time advanced", "by", d, "now", v.Now().Format(time.RFC3339))
	return s.timeOutput(), nil
}

// maxAdvance bounds one AdvanceTime (ten years), so that the offset cannot overflow.
const maxAdvance = 10 * 365 * 24 * time.Hour

func (s *Server) setTime(ctx context.Context, in *SetTimeInput) (*TimeOutput, error) {
	v := s.virtualClock()
	if v == nil {
		return nil, errNotDev
	}
	t, err := time.Parse(time.RFC3339Nano, in.Time)
	if err != nil {
		return nil, api.Errorf(api.InvalidRequestException, "Time must be RFC 3339 (e.g. 2026-12-01T10:00:00Z): %v", err)
	}
	if t.Sub(time.Now()) > maxAdvance {
		return nil, api.Errorf(api.InvalidRequestException, "Time must be within ten years of the wall clock.")
	}
	if err := s.svc.CarryHealthThroughJump(exemptFromFaults(ctx), t.Sub(v.Now())); err != nil {
		return nil, err
	}
	if err := v.Set(t); errors.Is(err, clock.ErrBackwards) {
		return nil, api.Errorf(api.InvalidRequestException, "Time %s is before the server's time %s: virtual time never moves backwards.",
			in.Time, v.Now().Format(time.RFC3339))
	}
	s.log.Info("virtual time set", "now", v.Now().Format(time.RFC3339))
	return s.timeOutput(), nil
}

func (s *Server) timeOutput() *TimeOutput {
	out := &TimeOutput{Time: s.cfg.Clock.Now().UTC().Format(time.RFC3339Nano), Dev: s.cfg.Dev}
	if v := s.virtualClock(); v != nil {
		out.OffsetSeconds = v.Offset().Seconds()
	}
	return out
}

// checkDev refuses dev mode on a PostgreSQL store: virtual time is one node's clock, and the
// nodes sharing a database would disagree about the time their timers are judged on.
func checkDev(cfg Config) error {
	if cfg.Dev && cfg.Store != "" {
		return errors.New("--dev needs the embedded store: virtual time is per node, and a PostgreSQL store may be shared by several nodes")
	}
	return nil
}
