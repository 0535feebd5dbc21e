package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/hoist-gg/hoist/internal/clock"
)

// gameText is what a registry holding only g serves for the named families.
func gameText(t *testing.T, g *Game, names ...string) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(g)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var b strings.Builder
	for _, f := range fams {
		for _, n := range names {
			if f.GetName() == n {
				if _, err := expfmt.MetricFamilyToText(&b, f); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return b.String()
}

func TestGameMetrics(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	g := NewGame(GameConfig{Clock: clk, MaxSeries: 5})
	g.ProcessLaunched(Origin{FleetID: "fleet-1", Location: "us-west-2", Compute: "i-1", ProcessID: "p-1"})
	g.Ingest([]byte("server.bytes_in:5|c|@0.5|#gamelift_process_id:p-1,process_pid:77,map:dust\n" +
		"server.players:3|g|#gamelift_process_id:p-1\n" +
		"server.tick:20|ms|#gamelift_process_id:p-1,le:x\n" +
		"server.size:2:4|h|#gamelift_process_id:p-1\n" +
		"orphan:1|c\nbad line\nneg:-1|c|#gamelift_process_id:p-1\nmore:1|g|#gamelift_process_id:p-1\nextra:1|g|#gamelift_process_id:p-1"))
	const o = `compute="i-1",fleet_id="fleet-1",location="us-west-2"`
	want := map[string]string{
		"hoist_game_server_bytes_in_total": `hoist_game_server_bytes_in_total{` + o + `,map="dust",process_id="p-1"} 10`,
		"hoist_game_server_players":        `hoist_game_server_players{` + o + `,process_id="p-1"} 3`,
		"hoist_game_server_tick_seconds":   `hoist_game_server_tick_seconds_bucket{` + o + `,process_id="p-1",tag_le="x",le="0.025"} 1`,
		"hoist_game_server_size":           `hoist_game_server_size_sum{` + o + `,process_id="p-1"} 6`,
		"hoist_game_statsd_dropped_total":  `hoist_game_statsd_dropped_total{reason="unattributed"} 1`,
		"hoist_game_neg_total":             ``,
	}
	for name, line := range want {
		got := gameText(t, g, name)
		if (line == "") != (got == "") || line != "" && !strings.Contains(got, line+"\n") {
			t.Errorf("%s: got\n%s\nwant the line %s", name, got, line)
		}
	}
	for _, reason := range []string{"malformed", "negative_counter", "series_limit"} {
		if v := counterValue(t, g.dropped.WithLabelValues(reason)); v != 1 {
			t.Errorf("dropped{reason=%s} = %v, want 1", reason, v)
		}
	}
}

func TestGameLingerAndRemote(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	g := NewGame(GameConfig{Clock: clk})
	g.ProcessLaunched(Origin{FleetID: "f", Location: "l", Compute: "c", ProcessID: "p"})
	g.Ingest([]byte("hits:1|c|#gamelift_process_id:p"))
	g.ProcessEnded("p")
	clk.Advance(DefaultGameLinger - time.Second)
	if len(g.Snapshot().Processes) != 1 {
		t.Fatal("series gone before the linger")
	}
	clk.Advance(time.Second)
	if len(g.Snapshot().Processes) != 0 {
		t.Fatal("series kept after the linger")
	}

	agent := NewGame(GameConfig{Clock: clk, Fallback: &Origin{FleetID: "f", Location: "custom", Compute: "host-1"}})
	agent.Ingest([]byte("hits:2|c|#mode:ranked\nplayers:4|g"))
	snap := agent.Snapshot()
	snap.IntervalMillis = 10000
	snap.Processes[0].Origin.FleetID = "spoofed"
	g.ApplyRemote("f", "host-1", snap)
	got := gameText(t, g, "hoist_game_hits_total", "hoist_game_players")
	for _, line := range []string{`hoist_game_hits_total{compute="host-1",fleet_id="f",location="custom",mode="ranked",process_id=""} 2`,
		`hoist_game_players{compute="host-1",fleet_id="f",location="custom",process_id=""} 4`} {
		if !strings.Contains(got, line+"\n") {
			t.Errorf("forwarded series lack %s:\n%s", line, got)
		}
	}
	clk.Advance(minRemoteTTL)
	if got := gameText(t, g, "hoist_game_hits_total"); got != "" {
		t.Errorf("forwarded series kept after expiry: %s", got)
	}
}

// TestGameTypeConflict: a name used by two kinds is served with the first only.
func TestGameTypeConflict(t *testing.T) {
	g := NewGame(GameConfig{Fallback: &Origin{FleetID: "f"}})
	g.Ingest([]byte("x:1|c\nx_total:2|g\ny:1|g\ny:1|c"))
	got := gameText(t, g, "hoist_game_x_total", "hoist_game_y", "hoist_game_y_total")
	const o = `{compute="",fleet_id="f",location="",process_id=""}`
	if !strings.Contains(got, "hoist_game_x_total"+o+" 1\n") || !strings.Contains(got, "hoist_game_y"+o+" 1\n") ||
		!strings.Contains(got, "hoist_game_y_total"+o+" 1\n") || strings.Contains(got, " 2\n") {
		t.Errorf("conflicting kinds served: %s", got)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
