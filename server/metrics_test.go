package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
)

// scrape is one parse of /metrics.
type scrape map[string]*dto.MetricFamily

func scrapeMetrics(t *testing.T, url string) scrape {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing %s: %v", url, err)
	}
	return fams
}

// value is the value of the series of name whose labels include want; -1 when there is none.
func (s scrape) value(name string, want ...string) float64 {
	fam := s[name]
	if fam == nil {
		return -1
	}
	for _, m := range fam.Metric {
		if hasLabels(m, want) {
			switch {
			case m.Gauge != nil:
				return m.Gauge.GetValue()
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return -1
}

// hasLabels reports whether m has the label pairs in want (name, value, name, value, ...).
func hasLabels(m *dto.Metric, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		found := false
		for _, l := range m.Label {
			if l.GetName() == want[i] && l.GetValue() == want[i+1] {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// expect checks series against their wanted values.
func (s scrape) expect(t *testing.T, want map[string]float64, labels ...string) {
	t.Helper()
	for name, v := range want {
		if got := s.value(name, labels...); got != v {
			t.Errorf("%s%v = %v, want %v", name, labels, got, v)
		}
	}
}

// TestMetricsMatchDescribe: on a fake clock, /metrics (parsed with the Prometheus text
// parser) reports per fleet and location what DescribeFleetUtilization and
// DescribeFleetLocationUtilization report at the same moment, the queue's depth and wait,
// placement outcomes, process activations, and API request counts; FleetAttributes shows
// the default metric group.
func TestMetricsMatchDescribe(t *testing.T) {
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	srv := startServer(t, server.Config{Clock: clk})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	const loc = "custom-metrics"
	fleet := createAnywhereFleet(t, gl, loc)
	_, token := computeToken(t, gl, fleet, loc, "m-host")
	procs := startSDKProcesses(t, srv, fleet, "m-host", token, 3, true)
	gs, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), Location: aws.String(loc),
		MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatal(err)
	}
	waitStarted(t, procs)
	eventually(t, 10*time.Second, "game session ACTIVE", func() bool {
		return sessionStatus(t, gl, gs.GameSession.GameSessionId) == types.GameSessionStatusActive
	})
	for _, p := range []string{"p1", "p2"} {
		if _, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: gs.GameSession.GameSessionId, PlayerId: aws.String(p)}); err != nil {
			t.Fatal(err)
		}
	}
	placements(t, gl, clk, fleet)
	util, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
	if err != nil || len(util.FleetUtilization) != 1 {
		t.Fatalf("DescribeFleetUtilization: %v", err)
	}
	locUtil, err := gl.DescribeFleetLocationUtilization(ctx, &gamelift.DescribeFleetLocationUtilizationInput{FleetId: aws.String(fleet), Location: aws.String(loc)})
	if err != nil {
		t.Fatal(err)
	}
	m := scrapeMetrics(t, srv.MetricsURL())
	u, lu := util.FleetUtilization[0], locUtil.FleetUtilization
	l := []string{"fleet_id", fleet, "location", loc, "metric_group", "default"}
	m.expect(t, map[string]float64{
		"hoist_fleet_active_game_sessions":      float64(aws.ToInt32(lu.ActiveGameSessionCount)),
		"hoist_fleet_current_player_sessions":   float64(aws.ToInt32(lu.CurrentPlayerSessionCount)),
		"hoist_fleet_maximum_player_sessions":   float64(aws.ToInt32(lu.MaximumPlayerSessionCount)),
		"hoist_fleet_available_player_sessions": float64(aws.ToInt32(lu.MaximumPlayerSessionCount) - aws.ToInt32(lu.CurrentPlayerSessionCount)),
		"hoist_fleet_available_game_sessions":   float64(aws.ToInt32(lu.ActiveServerProcessCount) - aws.ToInt32(lu.ActiveGameSessionCount)),
		"hoist_fleet_activating_game_sessions":  0,
	}, l...)
	m.expect(t, map[string]float64{"hoist_fleet_server_processes": float64(aws.ToInt32(u.ActiveServerProcessCount))}, append(l, "status", "ACTIVE")...)
	if got := aws.ToInt32(u.ActiveGameSessionCount); got != 2 || m.value("hoist_fleet_active_game_sessions", l...) != 2 {
		t.Errorf("DescribeFleetUtilization ActiveGameSessionCount %d, metrics %v: want 2 (one created, one placed)", got, m.value("hoist_fleet_active_game_sessions", l...))
	}
	m.expect(t, map[string]float64{"hoist_fleet_server_process_activations_total": 3, "hoist_fleet_server_process_terminations_total": 0},
		"fleet_id", fleet, "metric_group", "default")
	m.expect(t, map[string]float64{"hoist_queue_placements_succeeded_total": 1, "hoist_queue_placements_started_total": 1,
		"hoist_queue_depth": 0}, "queue", "mq")
	m.expect(t, map[string]float64{"hoist_queue_depth": 1, "hoist_queue_average_wait_seconds": 7,
		"hoist_queue_placements_cancelled_total": 1, "hoist_queue_placements_started_total": 2}, "queue", "stuck")
	m.expect(t, map[string]float64{"hoist_api_requests_total": 1}, "operation", "CreateGameSession", "code", "OK")
	m.expect(t, map[string]float64{"hoist_api_requests_total": 1}, "operation", "DescribeFleetUtilization", "code", "OK")
	m.expect(t, map[string]float64{"hoist_api_request_duration_seconds": 1}, "operation", "CreateGameSession")

	// Errors are counted by code; the counters move between scrapes.
	_, err = gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: aws.String("alias-00000000-0000-0000-0000-000000000000")})
	if apiCode(err) != "NotFoundException" {
		t.Fatalf("DescribeAlias of nothing: %v", err)
	}
	m = scrapeMetrics(t, srv.MetricsURL())
	m.expect(t, map[string]float64{"hoist_api_requests_total": 1}, "operation", "DescribeAlias", "code", "NotFoundException")
	fa, err := gl.DescribeFleetAttributes(ctx, &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet}})
	if err != nil || len(fa.FleetAttributes) != 1 || len(fa.FleetAttributes[0].MetricGroups) != 1 || fa.FleetAttributes[0].MetricGroups[0] != "default" {
		t.Fatalf("FleetAttributes.MetricGroups = %+v, %v; want [default]", fa.FleetAttributes, err)
	}
}

func waitStarted(t *testing.T, procs []*sdkProcess) {
	t.Helper()
	for {
		for _, p := range procs {
			select {
			case <-p.started:
				return
			default:
			}
		}
		select {
		case <-time.After(5 * time.Millisecond):
		case <-t.Context().Done():
			return
		}
	}
}

// placements fulfills one placement on queue "mq" (over fleet) and, on queue "stuck" (a
// fleet without processes), leaves one PENDING for 7 s of the fake clock and cancels another.
func placements(t *testing.T, gl *gamelift.Client, clk *clock.Fake, fleet string) {
	ctx := context.Background()
	empty := createAnywhereFleet(t, gl, "custom-metrics-empty")
	for name, f := range map[string]string{"mq": fleet, "stuck": empty} {
		if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String(name),
			Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + f)}}}); err != nil {
			t.Fatal(err)
		}
	}
	start := func(queue, id string) {
		if _, err := gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{GameSessionQueueName: aws.String(queue),
			PlacementId: aws.String(id), MaximumPlayerSessionCount: aws.Int32(2)}); err != nil {
			t.Fatal(err)
		}
	}
	start("mq", "pl-ok")
	start("stuck", "pl-wait")
	start("stuck", "pl-cancel")
	if _, err := gl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("pl-cancel")}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "placement FULFILLED", func() bool {
		out, err := gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("pl-ok")})
		return err == nil && out.GameSessionPlacement.Status == types.GameSessionPlacementStateFulfilled &&
			sessionStatus(t, gl, out.GameSessionPlacement.GameSessionArn) == types.GameSessionStatusActive
	})
	clk.Advance(7 * time.Second)
}

// TestMetricsListen: --metrics-listen moves /metrics to its own listener (the API listener
// no longer serves it), and "off" turns it off.
func TestMetricsListen(t *testing.T) {
	srv := startServer(t, server.Config{MetricsListen: "127.0.0.1:0"})
	if srv.MetricsURL() == srv.URL()+"/metrics" {
		t.Fatalf("MetricsURL %s is on the API listener", srv.MetricsURL())
	}
	m := scrapeMetrics(t, srv.MetricsURL())
	if m["go_goroutines"] == nil {
		t.Errorf("own listener: no go_goroutines")
	}
	if resp, err := http.Get(srv.URL() + "/metrics"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("the API listener still serves /metrics")
		}
	}
	off := startServer(t, server.Config{MetricsListen: server.MetricsOff})
	if off.MetricsURL() != "" {
		t.Errorf("MetricsURL with metrics off = %q", off.MetricsURL())
	}
	resp, err := http.Get(off.URL() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("metrics off: GET /metrics answered 200")
	}
}

// TestMetricsMatchmaking: a match accepted and placed moves the configuration's durable
// counters (matches created, accepted and placed, rule evaluations, time to match) and the
// per-node tickets started; CurrentTickets reports a ticket still searching.
func TestMetricsMatchmaking(t *testing.T) {
	l := newMMLab(t)
	l.start("t-alice", "alice", 1000)
	l.start("t-bob", "bob", 1100)
	l.await("t-alice", types.MatchmakingConfigurationStatusRequiresAcceptance)
	l.clk.Advance(2 * time.Second)
	l.accept("t-alice", "alice", types.AcceptanceTypeAccept)
	l.accept("t-bob", "bob", types.AcceptanceTypeAccept)
	l.await("t-bob", types.MatchmakingConfigurationStatusCompleted)
	l.start("t-carol", "carol", 5000)
	l.await("t-carol", types.MatchmakingConfigurationStatusSearching)
	m := scrapeMetrics(t, l.srv.MetricsURL())
	c := []string{"configuration", "arena"}
	m.expect(t, map[string]float64{
		"hoist_matchmaking_tickets_started_total":  3,
		"hoist_matchmaking_matches_created_total":  1,
		"hoist_matchmaking_matches_accepted_total": 1,
		"hoist_matchmaking_matches_placed_total":   1,
		"hoist_matchmaking_time_to_match_seconds":  2, // two tickets observed
	}, c...)
	m.expect(t, map[string]float64{"hoist_matchmaking_current_tickets": 1}, append(c, "status", "SEARCHING")...)
	if m.value("hoist_matchmaking_rule_evaluations_passed_total", append(c, "rule", "CloseSkill")...) < 1 {
		t.Errorf("no passed evaluation of CloseSkill")
	}
	m.expect(t, map[string]float64{"hoist_queue_placements_succeeded_total": 1}, "queue", "mmq")
}

// TestMetricsManagedCapacity: for a managed fleet of real processes, /metrics reports the
// instance counts DescribeFleetCapacity reports at the same moment, and its processes.
func TestMetricsManagedCapacity(t *testing.T) {
	r := newManagedRig(t, false)
	fleet := r.createFleet(2)
	eventually(t, 60*time.Second, "fleet with 1 instance and 2 ACTIVE processes", func() bool { return r.settled(fleet, 1, 2) })
	out, err := r.gl.DescribeFleetCapacity(context.Background(), &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetCapacity) != 1 {
		t.Fatalf("DescribeFleetCapacity: %v", err)
	}
	m := scrapeMetrics(t, r.srv.MetricsURL())
	c := out.FleetCapacity[0].InstanceCounts
	l := []string{"fleet_id", fleet, "location", aws.ToString(out.FleetCapacity[0].Location), "metric_group", "default"}
	for status, n := range map[string]*int32{"ACTIVE": c.ACTIVE, "IDLE": c.IDLE, "PENDING": c.PENDING, "TERMINATING": c.TERMINATING} {
		m.expect(t, map[string]float64{"hoist_fleet_instances": float64(aws.ToInt32(n))}, append(l, "status", status)...)
	}
	for setting, n := range map[string]*int32{"desired": c.DESIRED, "minimum": c.MINIMUM, "maximum": c.MAXIMUM} {
		m.expect(t, map[string]float64{"hoist_fleet_capacity_instances": float64(aws.ToInt32(n))}, append(l, "setting", setting)...)
	}
	m.expect(t, map[string]float64{"hoist_fleet_idle_instances_ratio": 1, "hoist_fleet_available_game_sessions": 2}, l...)
	m.expect(t, map[string]float64{"hoist_fleet_server_processes": 2}, append(l, "status", "ACTIVE")...)
	m.expect(t, map[string]float64{"hoist_fleet_server_process_activations_total": 2}, "fleet_id", fleet)
}
