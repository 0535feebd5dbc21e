package flexmatch

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// BenchmarkMatcher5v5 feeds 20,000 tickets arriving at 10,000 per second (virtual) to the 5v5
// skill and latency rule set, stepping every 10 ms of virtual time, and reports tickets matched
// per second of matcher time.
func BenchmarkMatcher5v5(b *testing.B) {
	rs := mustParse(b, fiveVFive)
	const n = 20000
	r := rand.New(rand.NewPCG(3, 4))
	tickets := make([]*Ticket, n)
	for i := range tickets {
		lat := map[string]int{"us-east-1": 20 + r.IntN(150), "eu-west-1": 20 + r.IntN(150)}
		tickets[i] = player(fmt.Sprint("p", i), 1000+r.NormFloat64()*300, lat, t0.Add(time.Duration(i)*100*time.Microsecond))
	}
	b.ResetTimer()
	matched := 0
	var waits []time.Duration
	for b.Loop() {
		m := NewMatcher(rs, Options{})
		now := t0
		next := 0
		for next < n {
			now = now.Add(10 * time.Millisecond)
			for next < n && !tickets[next].Start.After(now) {
				if err := m.Add(tickets[next]); err != nil {
					b.Fatal(err)
				}
				next++
			}
			for _, mt := range m.Step(now) {
				matched += len(mt.Tickets)
				for _, t := range mt.Tickets {
					waits = append(waits, now.Sub(t.Start))
				}
			}
		}
	}
	b.ReportMetric(float64(matched)/b.Elapsed().Seconds(), "matched/s")
	slices.Sort(waits)
	b.ReportMetric(float64(waits[len(waits)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(waits[len(waits)*99/100].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(matched)/float64(n*b.N), "matched-fraction")
}
