package server_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
)

// instanceRuns maps each instance to the nodes whose sandboxes run its game processes, and
// counts the processes.
func instanceRuns(nodes []*clusterNode) (where map[string]map[string]bool, procs int) {
	where = map[string]map[string]bool{}
	for _, n := range nodes {
		for _, pid := range sandboxPIDs(n.data) {
			id := environOf(pid, "GAMELIFT_SDK_HOST_ID")
			if where[id] == nil {
				where[id] = map[string]bool{}
			}
			where[id][n.addr] = true
			procs++
		}
	}
	return where, procs
}

// TestManagedFleetOnThreeNodes: a managed fleet of three instances on three `hoist server`
// processes sharing PostgreSQL runs each instance on exactly one node; kill -9 of a node
// ends its instance's game session (INTERRUPTED) and the instance is set up again on a live
// node, still exactly once; DeleteFleet then answers and every process ends.
func TestManagedFleetOnThreeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes and game servers")
	}
	dsn, bin := pgtest.DSN(t), buildHoist(t)
	dir := t.TempDir()
	game, err := os.ReadFile(goBuild(t, "../examples/gameserver", "gameserver"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gameserver"), game, 0o755); err != nil {
		t.Fatal(err)
	}
	var nodes []*clusterNode
	for range 3 {
		n := startClusterNode(t, bin, dsn)
		t.Cleanup(func() { killSandboxProcesses(n.data) })
		nodes = append(nodes, n)
	}
	ctx := context.Background()
	gl := client(nodes[0].url(), testKeyID, testSecret)
	b, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(dir)}})
	if err != nil {
		t.Fatal(err)
	}
	f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("managed-cluster"), BuildId: b.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeC5Large,
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/gameserver"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(2)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(f.FleetAttributes.FleetId)
	if _, err := gl.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
		DesiredInstances: aws.Int32(3), MaxSize: aws.Int32(3)}); err != nil {
		t.Fatal(err)
	}
	exactlyOnce := func(live []*clusterNode, instances int) func() bool {
		return func() bool {
			where, procs := instanceRuns(live)
			if len(where) != instances || procs != 2*instances {
				return false
			}
			for _, on := range where {
				if len(on) != 1 {
					return false
				}
			}
			return true
		}
	}
	eventually(t, 90*time.Second, "3 instances with 2 processes each, each on one node", exactlyOnce(nodes, 3))
	eventually(t, 30*time.Second, "6 ACTIVE processes", func() bool {
		out, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
		return err == nil && aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount) == 6
	})
	where, _ := instanceRuns(nodes)
	spread := map[string]int{}
	for _, on := range where {
		for n := range on {
			spread[n]++
		}
	}
	if len(spread) != 3 {
		t.Errorf("instances spread over %d nodes, want 3: %v", len(spread), spread)
	}
	victim := nodes[2]
	var lost string
	for id, on := range where {
		if on[victim.addr] {
			lost = id
		}
	}
	var sessions []*types.GameSession
	for range 6 {
		out, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(2)})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, out.GameSession)
	}

	victim.kill()
	live := nodes[:2]
	eventually(t, 90*time.Second, "the lost instance set up again on a live node, every instance once", exactlyOnce(live, 3))
	interrupted := 0
	for _, gs := range sessions {
		out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs.GameSessionId})
		if err != nil {
			t.Fatal(err)
		}
		if d := out.GameSessions[0]; d.Status == types.GameSessionStatusTerminated && d.StatusReason == types.GameSessionStatusReasonInterrupted {
			interrupted++
			if aws.ToString(d.ComputeName) != lost {
				t.Errorf("game session on %s was interrupted; the lost instance is %s", aws.ToString(d.ComputeName), lost)
			}
		}
	}
	if interrupted != 2 {
		t.Errorf("%d game sessions interrupted, want the lost instance's 2", interrupted)
	}
	if _, err := gl.DeleteFleet(ctx, &gamelift.DeleteFleetInput{FleetId: aws.String(fleet)}); err != nil {
		t.Fatalf("DeleteFleet: %v", err)
	}
	eventually(t, 60*time.Second, "every game process ended after DeleteFleet", func() bool {
		_, procs := instanceRuns(live)
		return procs == 0
	})
}
