package server_test

import (
	"os"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/server"
)

// TestIsolationOverhead measures, with HOIST_MEASURE_ISOLATION=1, the time from CreateFleet to
// ACTIVE and from scaling 1 to 10 instances to all ACTIVE, isolation on and off alternately in
// the same run, and logs the ratios (docs/isolation.md). It asserts only that fleets come up.
func TestIsolationOverhead(t *testing.T) {
	if os.Getenv("HOIST_MEASURE_ISOLATION") == "" {
		t.Skip("set HOIST_MEASURE_ISOLATION=1 to measure")
	}
	if !contain.Probe().Available {
		t.Skip("this host cannot isolate instances: " + contain.Probe().Reason)
	}
	const rounds = 3
	total := map[string][2]time.Duration{}
	for i := 0; i < rounds; i++ {
		for _, mode := range []string{server.IsolationOn, server.IsolationOff} {
			var create, scale time.Duration
			t.Run(mode, func(t *testing.T) { create, scale = measureFleet(t, mode) })
			sum := total[mode]
			total[mode] = [2]time.Duration{sum[0] + create, sum[1] + scale}
			t.Logf("round %d isolation %s: CreateFleet→ACTIVE %v, 1→10 instances %v", i+1, mode, create, scale)
		}
	}
	on, off := total[server.IsolationOn], total[server.IsolationOff]
	t.Logf("isolation on / off over %d rounds: CreateFleet→ACTIVE %.2f×, 1→10 instances %.2f×", rounds,
		float64(on[0])/float64(off[0]), float64(on[1])/float64(off[1]))
}

// measureFleet creates a fleet of one instance, waits for ACTIVE, scales it to 10 instances
// and waits until all run their process.
func measureFleet(t *testing.T, mode string) (create, scale time.Duration) {
	r, _, _ := isolationRig(t, mode)
	start := time.Now()
	fleet, _ := r.probeFleet()
	create = time.Since(start)
	start = time.Now()
	r.setCapacity(fleet, 10)
	r.waitFor("10 ACTIVE instances", func() bool { return r.settled(fleet, 10, 1) })
	return create, time.Since(start)
}
