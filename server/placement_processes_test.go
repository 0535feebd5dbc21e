package server_test

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
)

// placeLab is a server on a fake clock with two Anywhere fleets over three custom locations:
//
//	fleet A: custom-lab-1 (the example game under `hoist agent`, 1 process),
//	         custom-lab-2 (3 server SDK processes that activate what they get)
//	fleet B: custom-lab-2 (1 server SDK process that never activates; activation timeout 30 s),
//	         custom-lab-3 (3 server SDK processes that activate what they get)
type placeLab struct {
	t      *testing.T
	clk    *clock.Fake
	srv    *server.Server
	gl     *gamelift.Client
	a, b   string
	silent []*sdkProcess
}

const (
	lab1 = "custom-lab-1"
	lab2 = "custom-lab-2"
	lab3 = "custom-lab-3"
)

func newPlaceLab(t *testing.T) *placeLab {
	l := &placeLab{t: t, clk: clock.NewFake(time.Now())}
	hoistBin := buildHoist(t)
	game := goBuild(t, "../examples/gameserver", "gameserver")
	t.Cleanup(func() {
		for _, pid := range pidsOf(game) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	l.srv = startServer(t, server.Config{Clock: l.clk})
	l.gl = client(l.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	for _, loc := range []string{lab1, lab2, lab3} {
		if _, err := l.gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(loc)}); err != nil {
			t.Fatal(err)
		}
	}
	l.a = l.fleet("lab-a", &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
		LaunchPath: aws.String(game), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}, lab1, lab2)
	l.b = l.fleet("lab-b", &types.RuntimeConfiguration{GameSessionActivationTimeoutSeconds: aws.Int32(30),
		ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/sdk-process"), ConcurrentExecutions: aws.Int32(1)}}}, lab2, lab3)
	l.sdkProcesses(l.a, lab2, 3, true)
	l.silent = l.sdkProcesses(l.b, lab2, 1, false)
	l.sdkProcesses(l.b, lab3, 3, true)
	runAgent(t, hoistBin, l.srv.URL(), l.a, lab1, "lab-a-game-host")
	eventually(t, 60*time.Second, "fleet A's 4 processes ACTIVE", func() bool {
		out, err := l.gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{l.a}})
		return err == nil && aws.ToInt32(out.FleetUtilization[0].ActiveServerProcessCount) == 4
	})
	return l
}

func (l *placeLab) fleet(name string, rc *types.RuntimeConfiguration, locs ...string) string {
	var lc []types.LocationConfiguration
	for _, loc := range locs {
		lc = append(lc, types.LocationConfiguration{Location: aws.String(loc)})
	}
	f, err := l.gl.CreateFleet(context.Background(), &gamelift.CreateFleetInput{Name: aws.String(name),
		ComputeType: types.ComputeTypeAnywhere, Locations: lc, RuntimeConfiguration: rc})
	if err != nil {
		l.t.Fatalf("CreateFleet: %v", err)
	}
	return aws.ToString(f.FleetAttributes.FleetId)
}

func (l *placeLab) sdkProcesses(fleet, loc string, n int, activate bool) []*sdkProcess {
	compute := loc + "-" + fleet[len(fleet)-6:]
	_, token := computeToken(l.t, l.gl, fleet, loc, compute)
	return startSDKProcesses(l.t, l.srv, fleet, compute, token, n, activate)
}

// queue creates a queue named name over the given fleets (in that order).
func (l *placeLab) queue(name string, in *gamelift.CreateGameSessionQueueInput, fleets ...string) {
	l.t.Helper()
	in.Name = aws.String(name)
	for _, f := range fleets {
		in.Destinations = append(in.Destinations, types.GameSessionQueueDestination{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + f)})
	}
	if _, err := l.gl.CreateGameSessionQueue(context.Background(), in); err != nil {
		l.t.Fatalf("CreateGameSessionQueue %s: %v", name, err)
	}
}

func (l *placeLab) start(in *gamelift.StartGameSessionPlacementInput) *types.GameSessionPlacement {
	l.t.Helper()
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = aws.Int32(4)
	}
	out, err := l.gl.StartGameSessionPlacement(context.Background(), in)
	if err != nil {
		l.t.Fatalf("StartGameSessionPlacement %s: %v", aws.ToString(in.PlacementId), err)
	}
	if out.GameSessionPlacement.Status != types.GameSessionPlacementStatePending {
		l.t.Fatalf("a new placement is %s", out.GameSessionPlacement.Status)
	}
	return out.GameSessionPlacement
}

func (l *placeLab) describe(id string) *types.GameSessionPlacement {
	l.t.Helper()
	out, err := l.gl.DescribeGameSessionPlacement(context.Background(), &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
	if err != nil {
		l.t.Fatalf("DescribeGameSessionPlacement %s: %v", id, err)
	}
	return out.GameSessionPlacement
}

// fulfilled waits until placement id is FULFILLED and checks where its game session is.
func (l *placeLab) fulfilled(id, fleet, loc string) *types.GameSessionPlacement {
	l.t.Helper()
	var p *types.GameSessionPlacement
	eventually(l.t, 30*time.Second, id+" FULFILLED", func() bool {
		p = l.describe(id)
		return p.Status == types.GameSessionPlacementStateFulfilled
	})
	arn := aws.ToString(p.GameSessionArn)
	if !strings.Contains(arn, "/"+fleet+"/"+loc+"/") || aws.ToString(p.GameSessionRegion) != loc || p.EndTime == nil || aws.ToInt32(p.Port) == 0 {
		l.t.Errorf("%s: game session %s in %s (port %d), want fleet %s in %s", id, arn, aws.ToString(p.GameSessionRegion), aws.ToInt32(p.Port), fleet, loc)
	}
	return p
}

func (l *placeLab) step() {
	l.t.Helper()
	if err := l.srv.StepLoops(context.Background()); err != nil {
		l.t.Fatalf("stepping the loops: %v", err)
	}
}

func latencyOf(player string, ms map[string]float32) []types.PlayerLatency {
	var out []types.PlayerLatency
	for loc, v := range ms {
		out = append(out, types.PlayerLatency{PlayerId: aws.String(player), RegionIdentifier: aws.String(loc), LatencyInMilliseconds: aws.Float32(v)})
	}
	return out
}

// TestPlacementsWithRealProcesses places game sessions through queues with the real Go SDK
// client onto real processes — the example game under `hoist agent` and server SDK clients —
// across two fleets and three locations, on a fake clock: latency-driven choice with desired
// players who then join the game, each priority order, the filter, fallback when the first
// choice is full, a latency policy that relaxes over time, a placement whose session never
// activates (FAILED), TIMED_OUT and CANCELLED.
func TestPlacementsWithRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	l := newPlaceLab(t)
	ctx := context.Background()
	l.queue("default", &gamelift.CreateGameSessionQueueInput{}, l.a, l.b)

	// Latency: both players are closest to custom-lab-1, where the example game runs.
	lat := append(latencyOf("alice", map[string]float32{lab1: 20, lab2: 60, lab3: 90}), latencyOf("bob", map[string]float32{lab1: 30, lab2: 40, lab3: 70})...)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("by-latency"), GameSessionQueueName: aws.String("default"),
		PlayerLatencies: lat, GameSessionName: aws.String("duel"),
		DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String("alice"), PlayerData: aws.String("red")}, {PlayerId: aws.String("bob")}}})
	p := l.fulfilled("by-latency", l.a, lab1)
	if len(p.PlacedPlayerSessions) != 2 {
		t.Fatalf("placed player sessions %+v", p.PlacedPlayerSessions)
	}
	ps, err := l.gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: p.PlacedPlayerSessions[0].PlayerSessionId})
	if err != nil || ps.PlayerSessions[0].Status != types.PlayerSessionStatusReserved || aws.ToString(ps.PlayerSessions[0].PlayerData) != "red" {
		t.Fatalf("alice's player session: %v %+v", err, ps)
	}
	alice, hello := join(t, &ps.PlayerSessions[0])
	defer alice.c.Close()
	if !strings.HasPrefix(hello, "WELCOME") {
		t.Fatalf("the example game answered alice %q", hello)
	}

	// Priority orders and the filter (without latency data).
	l.queue("by-location", &gamelift.CreateGameSessionQueueInput{PriorityConfiguration: &types.PriorityConfiguration{
		PriorityOrder: []types.PriorityType{types.PriorityTypeLocation}, LocationOrder: []string{lab3, lab2}}}, l.a, l.b)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("location-first"), GameSessionQueueName: aws.String("by-location")})
	l.fulfilled("location-first", l.b, lab3)
	l.queue("filtered", &gamelift.CreateGameSessionQueueInput{FilterConfiguration: &types.FilterConfiguration{AllowedLocations: []string{lab2}}}, l.a, l.b)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("filtered"), GameSessionQueueName: aws.String("filtered")})
	l.fulfilled("filtered", l.a, lab2)
	// Fallback: custom-lab-1 comes first, but its one process hosts the duel.
	l.queue("lab-1-first", &gamelift.CreateGameSessionQueueInput{PriorityConfiguration: &types.PriorityConfiguration{
		PriorityOrder: []types.PriorityType{types.PriorityTypeLocation, types.PriorityTypeDestination}, LocationOrder: []string{lab1}}}, l.a, l.b)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("fallback"), GameSessionQueueName: aws.String("lab-1-first")})
	l.fulfilled("fallback", l.a, lab2)

	// DESTINATION first with B listed first: B's first location alphabetically is custom-lab-2,
	// whose process never activates; after the fleet's 30 s activation timeout the placement
	// is FAILED and the process is told to terminate.
	l.queue("b-first", &gamelift.CreateGameSessionQueueInput{PriorityConfiguration: &types.PriorityConfiguration{
		PriorityOrder: []types.PriorityType{types.PriorityTypeDestination, types.PriorityTypeLocation}}}, l.b, l.a)
	silent := l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("never-active"), GameSessionQueueName: aws.String("b-first")})
	if arn := aws.ToString(silent.GameSessionArn); !strings.Contains(arn, "/"+l.b+"/"+lab2+"/") {
		t.Fatalf("never-active placed on %q, want fleet B in %s", arn, lab2)
	}
	if _, err := l.gl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("never-active")}); apiCode(err) != "InvalidRequestException" {
		t.Errorf("stopping a placement that has a game session: %v", err)
	}
	select {
	case <-l.silent[0].started:
	case <-time.After(10 * time.Second):
		t.Fatal("the silent process never received its game session")
	}
	l.clk.Advance(31 * time.Second)
	l.step()
	if p := l.describe("never-active"); p.Status != types.GameSessionPlacementStateFailed || p.GameSessionArn != nil {
		t.Errorf("after the activation timeout: %s %v", p.Status, aws.ToString(p.GameSessionArn))
	}
	select {
	case <-l.silent[0].ended:
	case <-time.After(10 * time.Second):
		t.Error("the silent process was not told to terminate")
	}

	// A latency policy: 100 ms for 20 s, then 200 ms. Only custom-lab-3 is within 200 ms.
	l.queue("capped", &gamelift.CreateGameSessionQueueInput{PlayerLatencyPolicies: []types.PlayerLatencyPolicy{
		{MaximumIndividualPlayerLatencyMilliseconds: aws.Int32(100), PolicyDurationSeconds: aws.Int32(20)},
		{MaximumIndividualPlayerLatencyMilliseconds: aws.Int32(200)}}}, l.a, l.b)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("relaxed"), GameSessionQueueName: aws.String("capped"),
		PlayerLatencies: latencyOf("carol", map[string]float32{lab1: 400, lab2: 400, lab3: 150})})
	l.clk.Advance(19 * time.Second)
	l.step()
	if p := l.describe("relaxed"); p.GameSessionArn != nil {
		t.Fatalf("placed in %s while the 100 ms policy held", aws.ToString(p.GameSessionRegion))
	}
	l.clk.Advance(2 * time.Second)
	l.step()
	l.fulfilled("relaxed", l.b, lab3)

	// TIMED_OUT and CANCELLED: only custom-lab-1 is allowed, and its process is busy.
	l.queue("lab-1-only", &gamelift.CreateGameSessionQueueInput{TimeoutInSeconds: aws.Int32(10),
		FilterConfiguration: &types.FilterConfiguration{AllowedLocations: []string{lab1}}}, l.a)
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("times-out"), GameSessionQueueName: aws.String("lab-1-only")})
	l.start(&gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("stopped"), GameSessionQueueName: aws.String("lab-1-only")})
	stopped, err := l.gl.StopGameSessionPlacement(ctx, &gamelift.StopGameSessionPlacementInput{PlacementId: aws.String("stopped")})
	if err != nil || stopped.GameSessionPlacement.Status != types.GameSessionPlacementStateCancelled || stopped.GameSessionPlacement.EndTime == nil {
		t.Errorf("StopGameSessionPlacement: %v %+v", err, stopped)
	}
	l.clk.Advance(10 * time.Second)
	l.step()
	if p := l.describe("times-out"); p.Status != types.GameSessionPlacementStateTimedOut || p.EndTime == nil {
		t.Errorf("after the queue's timeout: %s", p.Status)
	}
	if p := l.describe("stopped"); p.Status != types.GameSessionPlacementStateCancelled {
		t.Errorf("the stopped placement became %s", p.Status)
	}
}
