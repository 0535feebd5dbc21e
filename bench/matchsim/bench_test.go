package matchsim

import (
	"context"
	"testing"
	"time"
)

// BenchmarkMatchsim5v5 runs 100,000 solo tickets through testdata/5v5-skill-latency.json at
// a steady 10,000 tickets per virtual second (skill normal:1500:300, two Regions with
// latencies uniform:20:200) and reports the matcher's throughput and the virtual time to
// match. Run it with -benchtime 1x: one iteration is one whole simulation.
func BenchmarkMatchsim5v5(b *testing.B) {
	rs := ruleSet(b, "5v5-skill-latency.json")
	pop, err := Generate(rs, fiveVFiveSpec(b, 100_000, 10_000))
	if err != nil {
		b.Fatal(err)
	}
	var rep *Report
	for b.Loop() {
		res, err := Run(context.Background(), rs, pop, Config{})
		if err != nil {
			b.Fatal(err)
		}
		rep = NewReport(res)
	}
	b.ReportMetric(rep.MatchedPerS, "matched/s")
	b.ReportMetric(rep.TimeToMatchMS.P50, "p50-ttm-ms")
	b.ReportMetric(rep.TimeToMatchMS.P99, "p99-ttm-ms")
	b.ReportMetric(rep.StepUS.P99, "p99-step-µs")
	b.ReportMetric(float64(rep.TimedOut), "timeouts")
}

// BenchmarkLonePair measures the real time from Add of the second ticket of a 1v1 pair to
// the Step that returns their match.
func BenchmarkLonePair(b *testing.B) {
	rs := ruleSet(b, "1v1.json")
	var total time.Duration
	n := 0
	for b.Loop() {
		total += addToMatch(b, rs)
		n++
	}
	b.ReportMetric(float64(total.Nanoseconds())/float64(n)/1e3, "add-to-match-µs")
}
