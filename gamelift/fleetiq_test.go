package gamelift

import (
	"fmt"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// activeGroup creates a group and steps the loop until it is ACTIVE.
func activeGroup(t *testing.T, f *fixture, name string) *FleetIQLoop {
	t.Helper()
	out := ok(f.svc.CreateGameServerGroup(f.ctx, groupInput(name)))(t)
	if got := *out.GameServerGroup.Status; got != api.GameServerGroupStatusNew {
		t.Fatalf("created status = %s, want NEW", got)
	}
	loop := NewFleetIQLoop(f.svc)
	for _, want := range []api.GameServerGroupStatus{api.GameServerGroupStatusActivating, api.GameServerGroupStatusActive} {
		if err := loop.Step(f.ctx); err != nil {
			t.Fatal(err)
		}
		g := ok(f.svc.DescribeGameServerGroup(f.ctx, &api.DescribeGameServerGroupInput{GameServerGroupName: api.String(name)}))(t)
		if *g.GameServerGroup.Status != want {
			t.Fatalf("status = %s, want %s", *g.GameServerGroup.Status, want)
		}
	}
	return loop
}

func groupInput(name string) *api.CreateGameServerGroupInput {
	return &api.CreateGameServerGroupInput{
		GameServerGroupName: api.String(name), RoleArn: api.String("arn:aws:iam::111122223333:role/fleetiq"),
		MinSize: api.Int32(0), MaxSize: api.Int32(10),
		LaunchTemplate: &api.LaunchTemplateSpecification{LaunchTemplateName: api.String("tmpl")},
		InstanceDefinitions: []api.InstanceDefinition{
			{InstanceType: ptr(api.GameServerGroupInstanceTypeC5Large)},
			{InstanceType: ptr(api.GameServerGroupInstanceTypeC4Large), WeightedCapacity: api.String("2")},
		},
	}
}

func ptr[T any](v T) *T { return &v }

func instanceID(n int) string { return fmt.Sprintf("i-%017d", n) }

func register(t *testing.T, f *fixture, group, id string, instance int) {
	t.Helper()
	ok(f.svc.RegisterGameServer(f.ctx, &api.RegisterGameServerInput{GameServerGroupName: api.String(group),
		GameServerId: api.String(id), InstanceId: api.String(instanceID(instance)), ConnectionInfo: api.String("1.2.3.4:7777")}))(t)
}

func claim(f *fixture, group string) (*api.GameServer, error) {
	out, err := f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String(group)})
	if err != nil {
		return nil, err
	}
	return out.GameServer, nil
}

func TestGroupLifecycleAndDeleteOptions(t *testing.T) {
	f := newFixture(t, "")
	loop := activeGroup(t, f, "g1")
	_, err := f.svc.CreateGameServerGroup(f.ctx, groupInput("g1"))
	wantCode(t, err, api.ConflictException)
	g := ok(f.svc.DescribeGameServerGroup(f.ctx, &api.DescribeGameServerGroupInput{GameServerGroupName: api.String("g1")}))(t).GameServerGroup
	if g.AutoScalingGroupArn == nil || *g.BalancingStrategy != api.BalancingStrategySpotPreferred || *g.InstanceDefinitions[0].WeightedCapacity != "1" {
		t.Fatalf("group = %+v", g)
	}
	register(t, f, "g1", "gs-1", 1)
	ok(f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g1"), GameServerId: api.String("gs-1"),
		UtilizationStatus: ptr(api.GameServerUtilizationStatusUtilized)}))(t)
	ok(f.svc.DeleteGameServerGroup(f.ctx, &api.DeleteGameServerGroupInput{GameServerGroupName: api.String("g1")}))(t)
	step := func(want api.GameServerGroupStatus) {
		t.Helper()
		if err := loop.Step(f.ctx); err != nil {
			t.Fatal(err)
		}
		g := ok(f.svc.DescribeGameServerGroup(f.ctx, &api.DescribeGameServerGroupInput{GameServerGroupName: api.String("g1")}))(t)
		if *g.GameServerGroup.Status != want {
			t.Fatalf("status = %s, want %s", *g.GameServerGroup.Status, want)
		}
	}
	step(api.GameServerGroupStatusDeleteScheduled) // SAFE_DELETE waits for the UTILIZED server
	_, err = f.svc.RegisterGameServer(f.ctx, &api.RegisterGameServerInput{GameServerGroupName: api.String("g1"),
		GameServerId: api.String("gs-2"), InstanceId: api.String(instanceID(1))})
	wantCode(t, err, api.InvalidRequestException)
	ok(f.svc.DeregisterGameServer(f.ctx, &api.DeregisterGameServerInput{GameServerGroupName: api.String("g1"), GameServerId: api.String("gs-1")}))(t)
	step(api.GameServerGroupStatusDeleting)
	step(api.GameServerGroupStatusDeleted)
	if err := loop.Step(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.DescribeGameServerGroup(f.ctx, &api.DescribeGameServerGroupInput{GameServerGroupName: api.String("g1")})
	wantCode(t, err, api.NotFoundException)

	// FORCE_DELETE does not wait.
	loop = activeGroup(t, f, "g2")
	register(t, f, "g2", "gs-3", 2)
	ok(f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g2"), GameServerId: api.String("gs-3"),
		UtilizationStatus: ptr(api.GameServerUtilizationStatusUtilized)}))(t)
	ok(f.svc.DeleteGameServerGroup(f.ctx, &api.DeleteGameServerGroupInput{GameServerGroupName: api.String("g2"),
		DeleteOption: ptr(api.GameServerGroupDeleteOptionForceDelete)}))(t)
	if err := loop.Step(f.ctx); err != nil {
		t.Fatal(err)
	}
	_, err = f.svc.DescribeGameServer(f.ctx, &api.DescribeGameServerInput{GameServerGroupName: api.String("g2"), GameServerId: api.String("gs-3")})
	wantCode(t, err, api.NotFoundException)
}

func TestClaimLapsesAfter60SecondsOnTheClock(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	register(t, f, "g", "gs-1", 1)
	gs, err := claim(f, "g")
	if err != nil {
		t.Fatal(err)
	}
	if gs.ClaimStatus == nil || *gs.ClaimStatus != api.GameServerClaimStatusClaimed || gs.LastClaimTime == nil {
		t.Fatalf("claimed = %+v", gs)
	}
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
	_, err = f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1")})
	wantCode(t, err, api.ConflictException)

	f.clock.Advance(59 * time.Second)
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
	f.clock.Advance(time.Second) // 60 s: no loop has run, the claim has lapsed on read
	d := ok(f.svc.DescribeGameServer(f.ctx, &api.DescribeGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1")}))(t)
	if d.GameServer.ClaimStatus != nil {
		t.Fatalf("ClaimStatus after 60 s = %s, want none", *d.GameServer.ClaimStatus)
	}
	gs, err = claim(f, "g")
	if err != nil || *gs.GameServerId != "gs-1" {
		t.Fatalf("reclaim = %v, %v", gs, err)
	}
	ok(f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1"),
		UtilizationStatus: ptr(api.GameServerUtilizationStatusUtilized)}))(t)
	f.clock.Advance(2 * time.Minute)
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException) // UTILIZED servers are never claimable
	_, err = f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1")})
	wantCode(t, err, api.ConflictException)
	_, err = f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1"),
		UtilizationStatus: ptr(api.GameServerUtilizationStatusAvailable)})
	wantCode(t, err, api.InvalidRequestException)
}

func TestClaimPacksOntoTheBusiestInstance(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	// Instance 1 first (ties go to the oldest instance), then instance 2 gets a UTILIZED server.
	for i := range 3 {
		register(t, f, "g", fmt.Sprintf("a-%d", i), 1)
		register(t, f, "g", fmt.Sprintf("b-%d", i), 2)
	}
	ok(f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("b-0"),
		UtilizationStatus: ptr(api.GameServerUtilizationStatusUtilized)}))(t)
	var got []string
	for range 5 {
		gs, err := claim(f, "g")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, *gs.InstanceId)
	}
	want := []string{instanceID(2), instanceID(2), instanceID(1), instanceID(1), instanceID(1)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("claimed on %v, want %v", got, want)
	}
	_, err := claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
}

func TestDrainingInstance(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	register(t, f, "g", "gs-1", 1)
	ok(f.svc.SetGameServerInstanceStatus(f.ctx, &SetGameServerInstanceStatusInput{GameServerGroupName: api.String("g"),
		InstanceId: api.String(instanceID(1)), InstanceStatus: ptr(api.GameServerInstanceStatusDraining)}))(t)
	_, err := f.svc.RegisterGameServer(f.ctx, &api.RegisterGameServerInput{GameServerGroupName: api.String("g"),
		GameServerId: api.String("gs-2"), InstanceId: api.String(instanceID(1))})
	wantCode(t, err, api.ConflictException)
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
	_, err = f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1")})
	wantCode(t, err, api.ConflictException)
	_, err = f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"),
		FilterOption: &api.ClaimFilterOption{InstanceStatuses: []api.FilterInstanceStatus{"DRAINING"}}})
	wantCode(t, err, api.InvalidRequestException)
	out := ok(f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"),
		FilterOption: &api.ClaimFilterOption{InstanceStatuses: []api.FilterInstanceStatus{"ACTIVE", "DRAINING"}}, GameServerData: api.String("map=1")}))(t)
	if *out.GameServer.GameServerData != "map=1" {
		t.Fatalf("GameServerData = %v", out.GameServer.GameServerData)
	}
	inst := ok(f.svc.DescribeGameServerInstances(f.ctx, &api.DescribeGameServerInstancesInput{GameServerGroupName: api.String("g")}))(t)
	if len(inst.GameServerInstances) != 1 || *inst.GameServerInstances[0].InstanceStatus != api.GameServerInstanceStatusDraining {
		t.Fatalf("instances = %+v", inst.GameServerInstances)
	}
}

func TestHealthTimeoutDeregisters(t *testing.T) {
	f := newFixture(t, "")
	loop := activeGroup(t, f, "g")
	register(t, f, "g", "quiet", 1)
	register(t, f, "g", "chatty", 1)
	for range 4 {
		f.clock.Advance(time.Minute)
		ok(f.svc.UpdateGameServer(f.ctx, &api.UpdateGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("chatty"),
			HealthCheck: ptr(api.GameServerHealthCheckHealthy)}))(t)
		if err := loop.Step(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	_, err := f.svc.DescribeGameServer(f.ctx, &api.DescribeGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("quiet")})
	wantCode(t, err, api.NotFoundException)
	d := ok(f.svc.DescribeGameServer(f.ctx, &api.DescribeGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("chatty")}))(t)
	if d.GameServer.LastHealthCheckTime == nil || !d.GameServer.LastHealthCheckTime.Time.Equal(f.clock.Now()) {
		t.Fatalf("LastHealthCheckTime = %v", d.GameServer.LastHealthCheckTime)
	}
}

func TestListGameServersOrderAndPages(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	for i := range 5 {
		register(t, f, "g", fmt.Sprintf("gs-%d", i), i%2)
	}
	_, err := f.svc.RegisterGameServer(f.ctx, &api.RegisterGameServerInput{GameServerGroupName: api.String("g"),
		GameServerId: api.String("gs-0"), InstanceId: api.String(instanceID(3))})
	wantCode(t, err, api.ConflictException)
	for _, order := range []api.SortOrder{api.SortOrderAscending, api.SortOrderDescending} {
		var ids []string
		in := &api.ListGameServersInput{GameServerGroupName: api.String("g"), SortOrder: &order, Limit: api.Int32(2)}
		for {
			out := ok(f.svc.ListGameServers(f.ctx, in))(t)
			for _, gs := range out.GameServers {
				ids = append(ids, *gs.GameServerId)
			}
			if out.NextToken == nil {
				break
			}
			in.NextToken = out.NextToken
		}
		want := "[gs-0 gs-1 gs-2 gs-3 gs-4]"
		if order == api.SortOrderDescending {
			want = "[gs-4 gs-3 gs-2 gs-1 gs-0]"
		}
		if fmt.Sprint(ids) != want {
			t.Fatalf("%s: %v, want %s", order, ids, want)
		}
	}
}

func TestGroupTagsAndSuspend(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	arn := "arn:aws:gamelift:" + testRegion + "::gameservergroup/g"
	ok(f.svc.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: &arn, Tags: []api.Tag{{Key: api.String("k"), Value: api.String("v")}}}))(t)
	tags := ok(f.svc.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: &arn}))(t)
	if len(tags.Tags) != 1 {
		t.Fatalf("tags = %v", tags.Tags)
	}
	out := ok(f.svc.SuspendGameServerGroup(f.ctx, &api.SuspendGameServerGroupInput{GameServerGroupName: &arn,
		SuspendActions: []api.GameServerGroupAction{api.GameServerGroupActionReplaceInstanceTypes}}))(t)
	if len(out.GameServerGroup.SuspendedActions) != 1 {
		t.Fatalf("suspended = %v", out.GameServerGroup.SuspendedActions)
	}
	res := ok(f.svc.ResumeGameServerGroup(f.ctx, &api.ResumeGameServerGroupInput{GameServerGroupName: &arn,
		ResumeActions: []api.GameServerGroupAction{api.GameServerGroupActionReplaceInstanceTypes}}))(t)
	if len(res.GameServerGroup.SuspendedActions) != 0 {
		t.Fatalf("after resume = %v", res.GameServerGroup.SuspendedActions)
	}
}

func TestReserveSkipsGameServersInFlight(t *testing.T) {
	c := &placementCache{groups: map[string]*groupPlacement{}, inflight: map[string]struct{}{}}
	recs := []string{"a", "b"}
	first, _ := c.reserve(recs)
	second, busy := c.reserve(recs)
	if first == "" || second == "" || first == second || !busy {
		t.Fatalf("reserved %q then %q (busy %v), want both, distinct, the second seeing the first busy", first, second, busy)
	}
	if id, busy := c.reserve(recs); id != "" || !busy {
		t.Fatalf("third reserve = %q, busy %v; want none, busy", id, busy)
	}
	c.release(first)
	if id, _ := c.reserve(recs); id != first {
		t.Fatalf("after release reserved %q, want %q", id, first)
	}
}

// A game server that this node is claiming already is passed over, but a claim never answers
// OutOfCapacityException because of it: the fresh decision takes it (and the commit decides).
func TestClaimTakesAnInFlightServerRatherThanNone(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	register(t, f, "g", "a-0", 1)
	if id, _ := f.svc.placements().reserve([]string{"a-0"}); id != "a-0" {
		t.Fatalf("reserved %q", id)
	}
	gs, err := claim(f, "g")
	if err != nil {
		t.Fatal(err)
	}
	if *gs.GameServerId != "a-0" {
		t.Fatalf("claimed %s, want a-0", *gs.GameServerId)
	}
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
}

// The status a claim checks is cached per record version: a group leaving ACTIVE refuses
// claims at once.
func TestClaimSeesGroupStatusChange(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	register(t, f, "g", "a-0", 1)
	register(t, f, "g", "a-1", 1)
	if _, err := claim(f, "g"); err != nil {
		t.Fatal(err)
	}
	ok(f.svc.DeleteGameServerGroup(f.ctx, &api.DeleteGameServerGroupInput{GameServerGroupName: api.String("g")}))(t)
	_, err := claim(f, "g")
	wantCode(t, err, api.InvalidRequestException)
}

// An earlier version moved a claimed game server's slot to its instance's claimed list; the
// FleetIQ loop moves it back, after which the game server is claimed by group again.
func TestLegacyClaimedSlotsMoveBack(t *testing.T) {
	f := newFixture(t, "")
	loop := activeGroup(t, f, "g")
	register(t, f, "g", "gs-1", 1)
	register(t, f, "g", "gs-2", 1)
	ok(f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String("gs-1")}))(t)
	err := f.store.Update(f.ctx, func(tx store.Tx) error {
		r, err := tx.Get(kindGameServerSlot, "gs-1")
		if err != nil {
			return err
		}
		r.Parent, r.Data = legacyClaimedParent("g", instanceID(1)), []byte(fmt.Sprint(f.svc.nowMillis()))
		return tx.Put(r)
	})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(ClaimDuration)
	if gs, err := claim(f, "g"); err != nil || *gs.GameServerId != "gs-2" {
		t.Fatalf("claim = %v, %v; want gs-2, the one game server listed", gs, err)
	}
	_, err = claim(f, "g")
	wantCode(t, err, api.OutOfCapacityException)
	if err := loop.Step(f.ctx); err != nil {
		t.Fatal(err)
	}
	if gs, err := claim(f, "g"); err != nil || *gs.GameServerId != "gs-1" {
		t.Fatalf("claim after the loop's step = %v, %v; want gs-1, its claim lapsed", gs, err)
	}
}
