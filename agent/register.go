package agent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// Register registers the compute and returns its endpoints. NotReady is retried up to eight
// times with exponential backoff on clk (1 s, 2 s, 4 s, ... at most 30 s), as the GameLift
// Agent does; Conflict means the compute is already registered, and its registration is read
// with DescribeCompute instead. Any other error is returned at once.
func Register(ctx context.Context, clk clock.Clock, cp ControlPlane, c Compute) (Registration, error) {
	delay := time.Second
	for attempt := 0; ; attempt++ {
		reg, err := cp.RegisterCompute(ctx, c)
		switch {
		case err == nil:
			return reg, nil
		case errors.Is(err, ErrConflict):
			reg, err = cp.DescribeCompute(ctx, c.FleetID, c.ComputeName)
			if err != nil {
				return Registration{}, fmt.Errorf("compute already registered, and: %w", err)
			}
			return reg, nil
		case !errors.Is(err, ErrNotReady) || attempt >= registerRetries:
			return Registration{}, err
		}
		select {
		case <-ctx.Done():
			return Registration{}, ctx.Err()
		case <-clk.After(delay):
		}
		delay = min(2*delay, 30*time.Second)
	}
}
