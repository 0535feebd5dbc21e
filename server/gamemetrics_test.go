package server_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hoist-gg/hoist/agent"
	"github.com/hoist-gg/hoist/server"
)

// sendStatsD writes one DogStatsD datagram to host:port, as a game server's client does.
func sendStatsD(t *testing.T, host, port, datagram string) {
	t.Helper()
	c, err := net.Dial("udp", net.JoinHostPort(host, port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte(datagram)); err != nil {
		t.Fatal(err)
	}
}

// TestStatsDManagedFleet: a process of a managed fleet gets GAMELIFT_STATSD_HOST/PORT; a
// counter and a gauge sent there with the SDK's gamelift_process_id tag show in /metrics with
// the fleet, location, instance and process labels and the datagram's own tags.
func TestStatsDManagedFleet(t *testing.T) {
	r := newManagedRig(t, false)
	fleet := r.createFleet(1)
	eventually(t, 60*time.Second, "fleet with 1 ACTIVE process", func() bool { return r.settled(fleet, 1, 1) })
	pids := sandboxPIDs(r.data)
	if len(pids) != 1 {
		t.Fatalf("%d sandbox processes", len(pids))
	}
	host, port := environOf(pids[0], "GAMELIFT_STATSD_HOST"), environOf(pids[0], "GAMELIFT_STATSD_PORT")
	proc := environOf(pids[0], "GAMELIFT_SDK_PROCESS_ID")
	if host == "" || port == "" || proc == "" {
		t.Fatalf("process environment: GAMELIFT_STATSD_HOST=%q GAMELIFT_STATSD_PORT=%q process %q", host, port, proc)
	}
	inst := r.instances(fleet)[0]
	sendStatsD(t, host, port, "server.kills:3|c|#gamelift_process_id:"+proc+",process_pid:1,map:dust\n"+
		"server.players:7|g|#gamelift_process_id:"+proc)
	labels := []string{"fleet_id", fleet, "location", aws.ToString(inst.Location),
		"compute", aws.ToString(inst.InstanceId), "process_id", proc}
	eventually(t, 10*time.Second, "game metrics in /metrics", func() bool {
		return scrapeMetrics(t, r.srv.MetricsURL()).value("hoist_game_server_players", labels...) == 7
	})
	m := scrapeMetrics(t, r.srv.MetricsURL())
	m.expect(t, map[string]float64{"hoist_game_server_kills_total": 3}, append(labels, "map", "dust")...)
}

// TestStatsDAgentForwards: an Anywhere host's agent receives its processes' datagrams and
// forwards them over its link; the server it is connected to serves them.
func TestStatsDAgentForwards(t *testing.T) {
	srv := startServer(t, server.Config{})
	gl := client(srv.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, gl, "custom-statsd")
	a, err := agent.New(agent.Config{
		Compute:      agent.Compute{FleetID: fleet, ComputeName: "host-1", Location: "custom-statsd", IPAddress: "127.0.0.1"},
		ControlPlane: agent.NewRemote(agent.RemoteConfig{Endpoints: []string{srv.URL()}, Region: srv.Region(), AccessKeyID: testKeyID, SecretAccessKey: testSecret}),
		StatsD:       "127.0.0.1:0", GameMetricsInterval: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	var host, port string
	eventually(t, 10*time.Second, "agent's StatsD receiver", func() bool {
		host, port = a.StatsDAddress()
		return port != ""
	})
	labels := []string{"fleet_id", fleet, "location", "custom-statsd", "compute", "host-1", "process_id", ""}
	eventually(t, 10*time.Second, "forwarded game metrics in /metrics", func() bool {
		sendStatsD(t, host, port, "match.started:2|c|#mode:ranked\nmatch.players:5|g")
		m := scrapeMetrics(t, srv.MetricsURL())
		return m.value("hoist_game_match_players", labels...) == 5 &&
			m.value("hoist_game_match_started_total", append(labels, "mode", "ranked")...) > 0
	})
}
