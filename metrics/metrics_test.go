package metrics

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/gamelift"
)

// emptySource is a domain with nothing in it.
type emptySource struct{}

func (emptySource) FleetStats(context.Context) ([]gamelift.FleetStats, error)   { return nil, nil }
func (emptySource) FleetTallies(context.Context) ([]gamelift.FleetTally, error) { return nil, nil }
func (emptySource) QueueStats(context.Context) ([]gamelift.QueueStats, error)   { return nil, nil }
func (emptySource) MatchmakingStats(context.Context) ([]gamelift.MatchmakingStats, error) {
	return []gamelift.MatchmakingStats{{Name: "arena", Tickets: map[string]int{"SEARCHING": 2},
		TimeToMatch: gamelift.Histogram{Count: 1, Sum: 3, Bounds: []float64{1, 5}, Buckets: []int64{0, 1}}}}, nil
}
func (emptySource) GameServerGroupStats(context.Context) ([]gamelift.GameServerGroupStats, error) {
	return nil, nil
}

func TestObserveAndServe(t *testing.T) {
	m := New(emptySource{}, nil)
	m.ObserveRequest("DescribeAlias", "", time.Millisecond)
	m.ObserveRequest("DescribeAlias", "NotFoundException", time.Millisecond)
	m.ObserveRequest("HoistExtension", "", time.Millisecond)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", Path, nil))
	body := rec.Body.String()
	for _, want := range []string{
		`hoist_api_requests_total{code="OK",operation="DescribeAlias"} 1`,
		`hoist_api_requests_total{code="NotFoundException",operation="DescribeAlias"} 1`,
		`hoist_api_requests_total{code="OK",operation="HoistExtension"} 1`,
		`hoist_api_request_duration_seconds_count{operation="DescribeAlias"} 2`,
		`hoist_matchmaking_current_tickets{configuration="arena",status="SEARCHING"} 2`,
		`hoist_matchmaking_time_to_match_seconds_bucket{configuration="arena",le="5"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// BenchmarkObserveRequest is the cost the metrics add to an API request.
func BenchmarkObserveRequest(b *testing.B) {
	m := New(emptySource{}, nil)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			start := time.Now()
			m.ObserveRequest("DescribeAlias", "", time.Since(start))
		}
	})
}
