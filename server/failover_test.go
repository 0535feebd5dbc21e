package server_test

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

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
	dsn, bin := pgtest.DSN(t), buildHoist(t)
	game := goBuild(t, "../examples/gameserver", "gameserver")
	t.Cleanup(func() {
		for _, pid := range pidsOf(game) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
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
