package server_test

import (
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/server"
)

// TestIsolationOverhead measures, with HOIST_MEASURE_ISOLATION=1, the time from CreateFleet to
// ACTIVE and from scaling 1 to 10 instances to all ACTIVE, isolation on and off alternately in
// the same run, and logs the ratios (docs/isolation.md): of the totals, and of the medians,
// which a machine shared with other work skews less. Three rounds; HOIST_MEASURE_ISOLATION=N
// with a larger N runs N. It asserts only that fleets come up.
func TestIsolationOverhead(t *testing.T) {
	if os.Getenv("HOIST_MEASURE_ISOLATION") == "" {
		t.Skip("set HOIST_MEASURE_ISOLATION=1 to measure")
	}
	if !contain.Probe().Available {
		t.Skip("this host cannot isolate instances: " + contain.Probe().Reason)
	}
	rounds := 3
	if n, err := strconv.Atoi(os.Getenv("HOIST_MEASURE_ISOLATION")); err == nil && n > rounds {
		rounds = n
	}
	times := map[string][2][]time.Duration{} // by mode: CreateFleet→ACTIVE, 1→10 instances
	for i := 0; i < rounds; i++ {
		for _, mode := range []string{server.IsolationOn, server.IsolationOff} {
			var create, scale time.Duration
			t.Run(mode, func(t *testing.T) { create, scale = measureFleet(t, mode) })
			m := times[mode]
			times[mode] = [2][]time.Duration{append(m[0], create), append(m[1], scale)}
			t.Logf("round %d isolation %s: CreateFleet→ACTIVE %v, 1→10 instances %v", i+1, mode, create, scale)
		}
	}
	logRatios(t, times[server.IsolationOn], times[server.IsolationOff])
}

// logRatios logs the ratios on / off of the totals and of the medians of each measure.
func logRatios(t *testing.T, on, off [2][]time.Duration) {
	for _, stat := range []struct {
		name string
		f    func([]time.Duration) time.Duration
	}{{"totals", total}, {"medians", median}} {
		t.Logf("isolation on / off over %d rounds, %s: CreateFleet→ACTIVE %.2f× (%v / %v), 1→10 instances %.2f× (%v / %v)",
			len(on[0]), stat.name, ratio(stat.f(on[0]), stat.f(off[0])), stat.f(on[0]), stat.f(off[0]),
			ratio(stat.f(on[1]), stat.f(off[1])), stat.f(on[1]), stat.f(off[1]))
	}
}

func total(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum
}

func median(ds []time.Duration) time.Duration {
	s := slices.Sorted(slices.Values(ds))
	return s[len(s)/2]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

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
