package server_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/agent"
	"github.com/hoist-gg/hoist/internal/pgtest"
)

// TestAgentAndProcessesSurviveTheirNodesDeath runs three `hoist server` processes on one
// PostgreSQL and `hoist agent` given every node's URL (and a dead one first), with the example
// game as the fleet's build. The agent and its processes are connected to node 0. kill -9 of
// node 0 keeps the ACTIVE game session ACTIVE and its player connected, and within 10 s a new
// game session can be placed through another node and is activated by a process. Node 0 then
// comes back on its data directory, nodes 1 and 2 are killed, and the processes move to node 0:
// it accepts them, and a player joins the first game through it.
func TestAgentAndProcessesSurviveTheirNodesDeath(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes, an agent and game servers")
	}
	dsn, bin, game := clusterWithGame(t)
	var nodes []*clusterNode
	for range 3 {
		nodes = append(nodes, startClusterNode(t, bin, dsn))
	}
	ctx := context.Background()
	gl1, gl2 := client(nodes[1].url(), testKeyID, testSecret), client(nodes[2].url(), testKeyID, testSecret)
	if _, err := gl1.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-failover")}); err != nil {
		t.Fatal(err)
	}
	f, err := gl1.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("failover"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String("custom-failover")}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String(game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(2)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(f.FleetAttributes.FleetId)
	servers := strings.Join([]string{"http://" + freeAddr(t), nodes[0].url(), nodes[1].url(), nodes[2].url()}, ",")
	runAgent(t, bin, servers, fleet, "custom-failover", "failover-host")
	active := func(gl *gamelift.Client) int32 {
		out, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
		if err != nil {
			return -1
		}
		return aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount)
	}
	eventually(t, 60*time.Second, "2 ACTIVE processes", func() bool { return active(gl1) == 2 })
	first := startActiveSession(t, gl1, fleet, "first")
	alice := joinGame(t, gl1, first, "alice")
	defer alice.c.Close()

	nodes[0].kill()
	killed := time.Now()
	second := startActiveSession(t, gl2, fleet, "second")
	t.Logf("a new game session ACTIVE through node 2 %v after node 0 was killed", time.Since(killed).Round(10*time.Millisecond))
	if d := time.Since(killed); d > 10*time.Second {
		t.Errorf("the fleet took %v to be placeable again, want under 10 s", d)
	}
	eventually(t, 10*time.Second, "the agent connected to a live node, as DescribeCompute shows", func() bool {
		c, err := gl2.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String("failover-host")})
		return err == nil && !strings.Contains(aws.ToString(c.Compute.GameLiftAgentEndpoint), nodes[0].addr)
	})
	fmt.Fprintln(alice.c, "50")
	if !alice.in.Scan() {
		t.Fatal("alice lost her game")
	}
	for _, id := range []*string{first.GameSessionId, second.GameSessionId} {
		if st := sessionStatus(t, gl2, id); st != types.GameSessionStatusActive {
			t.Errorf("game session %s is %s after node 0 died", aws.ToString(id), st)
		}
	}

	back := startClusterNodeAt(t, bin, dsn, nodes[0].addr, nodes[0].data)
	nodes[1].kill()
	nodes[2].kill()
	gl0 := client(back.url(), testKeyID, testSecret)
	eventually(t, 20*time.Second, "bob joining the first game through the node that came back", func() bool {
		ps, err := gl0.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: first.GameSessionId, PlayerId: aws.String("bob")})
		if err != nil {
			return false
		}
		bob, hello := join(t, ps.PlayerSession)
		bob.c.Close()
		return strings.HasPrefix(hello, "WELCOME")
	})
	if n := active(gl0); n != 2 {
		t.Errorf("%d ACTIVE processes after moving to the node that came back, want 2", n)
	}
}

// clusterWithGame returns a PostgreSQL store, the hoist binary and the example game server,
// built for the test; the game's processes are killed when the test ends.
func clusterWithGame(t *testing.T) (dsn, bin, game string) {
	t.Helper()
	dsn, bin = pgtest.DSN(t), buildHoist(t)
	game = goBuild(t, "../examples/gameserver", "gameserver")
	t.Cleanup(func() {
		for _, pid := range pidsOf(game) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return dsn, bin, game
}

// startActiveSession creates a game session through gl and waits until a process activates
// it.
func startActiveSession(t *testing.T, gl *gamelift.Client, fleet, name string) *types.GameSession {
	t.Helper()
	ctx := context.Background()
	var gs *types.GameSession
	eventually(t, 15*time.Second, "CreateGameSession "+name, func() bool {
		out, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
			Location: aws.String("custom-failover"), MaximumPlayerSessionCount: aws.Int32(4), Name: aws.String(name),
			IdempotencyToken: aws.String("failover-" + name)})
		if err == nil {
			gs = out.GameSession
		}
		return err == nil
	})
	eventually(t, 15*time.Second, name+" ACTIVE", func() bool {
		return sessionStatus(t, gl, gs.GameSessionId) == types.GameSessionStatusActive
	})
	return gs
}

func sessionStatus(t *testing.T, gl *gamelift.Client, id *string) types.GameSessionStatus {
	out, err := gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: id})
	if err != nil || len(out.GameSessions) != 1 {
		return ""
	}
	return out.GameSessions[0].Status
}

// joinGame reserves a player session in gs and connects the player to the example game.
func joinGame(t *testing.T, gl *gamelift.Client, gs *types.GameSession, player string) *player {
	t.Helper()
	ps, err := gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId, PlayerId: aws.String(player)})
	if err != nil {
		t.Fatal(err)
	}
	p, hello := join(t, ps.PlayerSession)
	if !strings.HasPrefix(hello, "WELCOME") {
		t.Fatalf("the game answered %s %q", player, hello)
	}
	return p
}

// TestAgentFollowsADNSNameToALiveNode runs two `hoist server` processes on one PostgreSQL,
// on 127.0.0.2 and 127.0.0.3 with the same port, and `hoist agent` (in the test process,
// through agent.Main) given one URL whose DNS name resolves to both addresses (a DNS server
// in the test, asked by Go's resolver). The agent registers, connects and runs a process
// through one node; after kill -9 of that node its websocket and the process's SDK
// connection go to the other address of the name.
func TestAgentFollowsADNSNameToALiveNode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two server processes, an agent and a game server")
	}
	dsn, bin, game := clusterWithGame(t)
	port := freePortOn(t, "127.0.0.2", "127.0.0.3")
	nodes := map[string]*clusterNode{}
	for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
		nodes[ip] = startClusterNodeAt(t, bin, dsn, net.JoinHostPort(ip, port), t.TempDir())
	}
	resolveNameTo(t, "hoist-nodes.test", "127.0.0.2", "127.0.0.3")
	gl := client(nodes["127.0.0.2"].url(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, gl, "custom-failover")
	ctx := context.Background()
	if _, err := gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String(fleet),
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String(game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}}); err != nil {
		t.Fatal(err)
	}
	runAgentInProcess(t, "http://hoist-nodes.test:"+port, fleet, "custom-failover", "dns-host")
	connected := func(gl *gamelift.Client) string { // the address of the node the agent is connected to
		c, err := gl.DescribeCompute(ctx, &gamelift.DescribeComputeInput{FleetId: aws.String(fleet), ComputeName: aws.String("dns-host")})
		if err != nil {
			return ""
		}
		for ip := range nodes {
			if strings.Contains(aws.ToString(c.Compute.GameLiftAgentEndpoint), ip) {
				return ip
			}
		}
		return ""
	}
	eventually(t, 60*time.Second, "1 ACTIVE process", func() bool { return activeProcesses(gl, fleet) == 1 })
	used := connected(gl)
	if used == "" {
		t.Fatal("the compute names no node's agent endpoint")
	}
	other := map[string]string{"127.0.0.2": "127.0.0.3", "127.0.0.3": "127.0.0.2"}[used]
	nodes[used].kill()
	gl = client(nodes[other].url(), testKeyID, testSecret)
	// Within the dead node's 15 s lease, DescribeCompute names the other node only once the
	// agent's websocket is on it.
	eventually(t, 10*time.Second, "the agent connected to the node at "+other, func() bool { return connected(gl) == other })
	// The process activates a new game session only once its SDK connection is on a live
	// node: the push reaches it through the node holding its socket.
	startActiveSession(t, gl, fleet, "after-dns-failover")
}

// freePortOn returns a TCP port free on every one of the loopback addresses.
func freePortOn(t *testing.T, ips ...string) string {
	t.Helper()
	for range 20 {
		_, port, _ := net.SplitHostPort(freeAddr(t))
		free := true
		for _, ip := range ips {
			ln, err := net.Listen("tcp", net.JoinHostPort(ip, port))
			if err != nil {
				free = false
				break
			}
			ln.Close()
		}
		if free {
			return port
		}
	}
	t.Fatalf("no port free on all of %v", ips)
	return ""
}

// runAgentInProcess runs `hoist agent` (agent.Main) in the test process until the test ends.
func runAgentInProcess(t *testing.T, servers, fleet, location, compute string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	args := []string{"--server", servers, "--fleet-id", fleet, "--location", location, "--compute-name", compute,
		"--grace-period", "5s", "--ip-address", "127.0.0.1", "--region", "us-west-2",
		"--access-key-id", testKeyID, "--secret-access-key", testSecret}
	go func() { done <- agent.Main(ctx, args, testLogOut()) }()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

// activeProcesses returns the fleet's ACTIVE server processes, -1 when it cannot be read.
func activeProcesses(gl *gamelift.Client, fleet string) int32 {
	out, err := gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetUtilization) != 1 {
		return -1
	}
	return aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount)
}
