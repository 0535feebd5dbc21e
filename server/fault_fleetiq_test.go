package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// TestFaultSpotInterruptionFleetIQ: in dev mode, Hoist.InjectFault SpotInterruption with a
// GameServerGroupName puts the group's instance in SPOT_TERMINATING: DescribeGameServerInstances
// shows it, a claim skips its game server (though the placement rule would pick it), a claim
// of it by ID is refused and no game server registers on it. When the 2-minute notice has run
// out on the server's clock the instance is reclaimed: its game server is deregistered and the
// instance is no longer listed, while the other instance is untouched.
func TestFaultSpotInterruptionFleetIQ(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	group := aws.String("spot")
	createActiveGroup(t, gl, "spot")
	for i, id := range []string{"gs-doomed", "gs-safe"} {
		if _, err := gl.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: group,
			GameServerId: aws.String(id), InstanceId: aws.String(instanceID(i + 1))}); err != nil {
			t.Fatal(err)
		}
	}
	code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget,
		fmt.Sprintf(`{"Kind":"SpotInterruption","GameServerGroupName":"spot","InstanceId":%q}`, instanceID(1)))
	if code != http.StatusOK {
		t.Fatalf("InjectFault SpotInterruption: %d %s", code, raw)
	}
	if st := groupInstances(t, gl, "spot"); st[instanceID(1)] != types.GameServerInstanceStatusSpotTerminating || st[instanceID(2)] != types.GameServerInstanceStatusActive {
		t.Errorf("instances after the notice: %v", st)
	}
	claimed, err := gl.ClaimGameServer(ctx, &gamelift.ClaimGameServerInput{GameServerGroupName: group})
	if err != nil {
		t.Fatalf("claim after the notice: %v", err)
	}
	if id := aws.ToString(claimed.GameServer.GameServerId); id != "gs-safe" {
		t.Errorf("a claim after the notice took %s, want gs-safe", id)
	}
	_, err = gl.ClaimGameServer(ctx, &gamelift.ClaimGameServerInput{GameServerGroupName: group, GameServerId: aws.String("gs-doomed"),
		FilterOption: &types.ClaimFilterOption{InstanceStatuses: []types.FilterInstanceStatus{types.FilterInstanceStatusActive, types.FilterInstanceStatusDraining}}})
	if apiCode(err) != "ConflictException" {
		t.Errorf("claiming gs-doomed on the SPOT_TERMINATING instance: %v, want ConflictException", err)
	}
	_, err = gl.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: group,
		GameServerId: aws.String("gs-late"), InstanceId: aws.String(instanceID(1))})
	if apiCode(err) != "ConflictException" {
		t.Errorf("registering on the SPOT_TERMINATING instance: %v, want ConflictException", err)
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":121}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	eventually(t, 5*time.Second, "the instance reclaimed", func() bool { _, ok := groupInstances(t, gl, "spot")[instanceID(1)]; return !ok })
	_, err = gl.DescribeGameServer(ctx, &gamelift.DescribeGameServerInput{GameServerGroupName: group, GameServerId: aws.String("gs-doomed")})
	if apiCode(err) != "NotFoundException" {
		t.Errorf("gs-doomed after the reclaim: %v, want NotFoundException", err)
	}
	if _, err := gl.DescribeGameServer(ctx, &gamelift.DescribeGameServerInput{GameServerGroupName: group, GameServerId: aws.String("gs-safe")}); err != nil {
		t.Errorf("gs-safe after the reclaim: %v", err)
	}
}

// groupInstances returns the group's instances and their statuses.
func groupInstances(t *testing.T, gl *gamelift.Client, group string) map[string]types.GameServerInstanceStatus {
	t.Helper()
	out, err := gl.DescribeGameServerInstances(context.Background(), &gamelift.DescribeGameServerInstancesInput{GameServerGroupName: aws.String(group)})
	if err != nil {
		t.Fatal(err)
	}
	st := map[string]types.GameServerInstanceStatus{}
	for _, in := range out.GameServerInstances {
		st[aws.ToString(in.InstanceId)] = in.InstanceStatus
	}
	return st
}
