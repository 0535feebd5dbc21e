package server_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	domain "github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// createActiveGroup creates a game server group and waits (polling, with a deadline) until
// the server's FleetIQ loop has made it ACTIVE.
func createActiveGroup(t *testing.T, gl *gamelift.Client, name string) {
	t.Helper()
	ctx := context.Background()
	_, err := gl.CreateGameServerGroup(ctx, &gamelift.CreateGameServerGroupInput{
		GameServerGroupName: aws.String(name), RoleArn: aws.String("arn:aws:iam::111122223333:role/fleetiq"),
		MinSize: aws.Int32(0), MaxSize: aws.Int32(10),
		LaunchTemplate: &types.LaunchTemplateSpecification{LaunchTemplateId: aws.String("lt-0123456789abcdef0")},
		InstanceDefinitions: []types.InstanceDefinition{
			{InstanceType: types.GameServerGroupInstanceTypeC5Large}, {InstanceType: types.GameServerGroupInstanceTypeC5Xlarge}},
	})
	if err != nil {
		t.Fatal(err)
	}
	testwait.Until(t, 15*time.Second, 50*time.Millisecond, "group "+name+" ACTIVE", func() bool {
		out, err := gl.DescribeGameServerGroup(ctx, &gamelift.DescribeGameServerGroupInput{GameServerGroupName: aws.String(name)})
		if err != nil {
			t.Fatal(err)
		}
		return out.GameServerGroup.Status == types.GameServerGroupStatusActive
	})
}

func instanceID(n int) string { return fmt.Sprintf("i-%017d", n) }

// TestGoSDKFleetIQLifecycle drives groups and game servers with the Go SDK (RPC v2 CBOR) and
// the admin operation with a signed awsJson request.
func TestGoSDKFleetIQLifecycle(t *testing.T) {
	srv := startServer(t, server.Config{})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	createActiveGroup(t, gl, "life")
	_, err := gl.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: aws.String("life"),
		GameServerId: aws.String("gs-1"), InstanceId: aws.String(instanceID(1)), ConnectionInfo: aws.String("10.0.0.1:7777")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = gl.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: aws.String("life"),
		GameServerId: aws.String("gs-1"), InstanceId: aws.String(instanceID(1))})
	if apiCode(err) != "ConflictException" {
		t.Fatalf("duplicate register: %v", err)
	}
	claimed, err := gl.ClaimGameServer(ctx, &gamelift.ClaimGameServerInput{GameServerGroupName: aws.String("life"), GameServerData: aws.String("mode=ctf")})
	if err != nil {
		t.Fatal(err)
	}
	gs := claimed.GameServer
	if aws.ToString(gs.GameServerId) != "gs-1" || gs.ClaimStatus != types.GameServerClaimStatusClaimed || aws.ToString(gs.GameServerData) != "mode=ctf" ||
		gs.LastClaimTime == nil || gs.RegistrationTime == nil || aws.ToString(gs.ConnectionInfo) != "10.0.0.1:7777" {
		t.Fatalf("claimed = %+v", gs)
	}
	_, err = gl.ClaimGameServer(ctx, &gamelift.ClaimGameServerInput{GameServerGroupName: aws.String("life")})
	if apiCode(err) != "OutOfCapacityException" {
		t.Fatalf("second claim: %v", err)
	}
	_, err = gl.UpdateGameServer(ctx, &gamelift.UpdateGameServerInput{GameServerGroupName: aws.String("life"), GameServerId: aws.String("gs-1"),
		UtilizationStatus: types.GameServerUtilizationStatusUtilized, HealthCheck: types.GameServerHealthCheckHealthy})
	if err != nil {
		t.Fatal(err)
	}
	list, err := gl.ListGameServers(ctx, &gamelift.ListGameServersInput{GameServerGroupName: aws.String("life"), SortOrder: types.SortOrderDescending})
	if err != nil || len(list.GameServers) != 1 || list.GameServers[0].UtilizationStatus != types.GameServerUtilizationStatusUtilized ||
		list.GameServers[0].LastHealthCheckTime == nil {
		t.Fatalf("list = %+v, %v", list, err)
	}
	status, body := setInstanceStatus(t, srv.URL(), "life", instanceID(1), "DRAINING")
	if status != 200 {
		t.Fatalf("SetGameServerInstanceStatus: %d %s", status, body)
	}
	inst, err := gl.DescribeGameServerInstances(ctx, &gamelift.DescribeGameServerInstancesInput{GameServerGroupName: aws.String("life")})
	if err != nil || len(inst.GameServerInstances) != 1 || inst.GameServerInstances[0].InstanceStatus != types.GameServerInstanceStatusDraining {
		t.Fatalf("instances = %+v, %v", inst, err)
	}
	if _, err := gl.DeregisterGameServer(ctx, &gamelift.DeregisterGameServerInput{GameServerGroupName: aws.String("life"), GameServerId: aws.String("gs-1")}); err != nil {
		t.Fatal(err)
	}
	del, err := gl.DeleteGameServerGroup(ctx, &gamelift.DeleteGameServerGroupInput{GameServerGroupName: aws.String("life")})
	if err != nil || del.GameServerGroup.Status != types.GameServerGroupStatusDeleteScheduled {
		t.Fatalf("delete = %+v, %v", del, err)
	}
}

// setInstanceStatus calls Hoist.SetGameServerInstanceStatus with a SigV4-signed awsJson request.
func setInstanceStatus(t *testing.T, base, group, instance, status string) (int, string) {
	t.Helper()
	body := fmt.Appendf(nil, `{"GameServerGroupName":%q,"InstanceId":%q,"InstanceStatus":%q}`, group, instance, status)
	req, err := http.NewRequest(http.MethodPost, base+"/", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", domain.SetGameServerInstanceStatusTarget)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	code, raw := signedDo(t, req, body)
	return code, string(raw)
}

// TestConcurrentClaimsEmbedded: many claimers on one embedded-store server never share a
// game server.
func TestConcurrentClaimsEmbedded(t *testing.T) {
	srv := startServer(t, server.Config{})
	runConcurrentClaims(t, []*server.Server{srv})
}

// TestConcurrentClaimsPostgresThreeNodes: the same with three server nodes on one database.
func TestConcurrentClaimsPostgresThreeNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	nodes := []*server.Server{startServer(t, server.Config{Store: dsn}), startServer(t, server.Config{Store: dsn}), startServer(t, server.Config{Store: dsn})}
	runConcurrentClaims(t, nodes)
}

// runConcurrentClaims registers servers on four instances, then lets 32 goroutines, each with
// its own SDK client on a node in turn, claim until OutOfCapacityException. Every game server
// must be claimed exactly once.
func runConcurrentClaims(t *testing.T, nodes []*server.Server) {
	const servers, claimers = 120, 32
	ctx := context.Background()
	admin := client(nodes[0].URL(), testKeyID, testSecret)
	createActiveGroup(t, admin, "race")
	for i := range servers {
		_, err := admin.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: aws.String("race"),
			GameServerId: aws.String(fmt.Sprintf("gs-%03d", i)), InstanceId: aws.String(instanceID(i % 4))})
		if err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	owner := map[string]int{}
	var wg sync.WaitGroup
	errs := make(chan error, claimers)
	for c := range claimers {
		wg.Go(func() {
			gl := client(nodes[c%len(nodes)].URL(), testKeyID, testSecret)
			for {
				out, err := gl.ClaimGameServer(ctx, &gamelift.ClaimGameServerInput{GameServerGroupName: aws.String("race")})
				if apiCode(err) == "OutOfCapacityException" {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				id := aws.ToString(out.GameServer.GameServerId)
				mu.Lock()
				if prev, dup := owner[id]; dup {
					errs <- fmt.Errorf("%s claimed by claimer %d and claimer %d", id, prev, c)
				}
				owner[id] = c
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if len(owner) != servers {
		t.Fatalf("%d game servers claimed, want %d", len(owner), servers)
	}
}

// TestFleetIQBenchSetup is not a test but the benchmark's setup helper (docs/fleetiq.md): with
// HOIST_FLEETIQ_BENCH_ENDPOINT set it creates game server group "bench" on that running server,
// waits for ACTIVE and registers HOIST_FLEETIQ_BENCH_SERVERS (default 100000) game servers, 100
// per instance, signing with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY. Skipped otherwise.
func TestFleetIQBenchSetup(t *testing.T) {
	endpoint := os.Getenv("HOIST_FLEETIQ_BENCH_ENDPOINT")
	if endpoint == "" {
		t.Skip("HOIST_FLEETIQ_BENCH_ENDPOINT not set")
	}
	n := 100000
	if v, err := strconv.Atoi(os.Getenv("HOIST_FLEETIQ_BENCH_SERVERS")); err == nil {
		n = v
	}
	gl := client(endpoint, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
	createActiveGroup(t, gl, "bench")
	var wg sync.WaitGroup
	var failed atomic.Int64
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				_, err := gl.RegisterGameServer(context.Background(), &gamelift.RegisterGameServerInput{GameServerGroupName: aws.String("bench"),
					GameServerId: aws.String(fmt.Sprintf("bench-%06d", i)), InstanceId: aws.String(instanceID(i / 100))})
				if err != nil && failed.Add(1) == 1 {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
}
