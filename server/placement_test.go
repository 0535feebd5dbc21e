package server_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// TestPushesReachProcessesOnAnotherNode connects a process to one node and drives its game
// session through another: the CreateGameSession and TerminateProcess pushes go through the
// outbox and are delivered by the node that holds the socket.
func TestPushesReachProcessesOnAnotherNode(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := startServer(t, server.Config{Store: dsn})
	b := startServer(t, server.Config{Store: dsn})
	ga, gb := client(a.URL(), testKeyID, testSecret), client(b.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, ga, "custom-cross-node")
	_, token := computeToken(t, ga, fleet, "custom-cross-node", "host-a")
	proc := startSDKProcesses(t, a, fleet, "host-a", token, 1, true)[0]
	ctx := context.Background()
	out, err := gb.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String("custom-cross-node"), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatalf("CreateGameSession through node b: %v", err)
	}
	id := out.GameSession.GameSessionId
	eventually(t, 10*time.Second, "the session ACTIVE through a push from the other node", func() bool {
		d, err := gb.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		return err == nil && d.GameSessions[0].Status == types.GameSessionStatusActive
	})
	if _, err := gb.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: id,
		TerminationMode: types.TerminationModeTriggerOnProcessTerminate}); err != nil {
		t.Fatalf("TerminateGameSession: %v", err)
	}
	select {
	case <-proc.ended:
	case <-time.After(10 * time.Second):
		t.Fatal("TerminateProcess never reached the process on node a")
	}
}

// placementRig is a queue over two Anywhere fleets in three custom locations, with processes
// on Hoist's server SDK spread over the given server nodes.
type placementRig struct {
	t      *testing.T
	nodes  []*server.Server
	gls    []*gamelift.Client
	fleets [2]string
	procs  []*sdkProcess
}

var placementLocations = []string{"custom-place-1", "custom-place-2", "custom-place-3"}

func newPlacementRig(t *testing.T, nodes []*server.Server, perLocation int) *placementRig {
	r := &placementRig{t: t, nodes: nodes}
	for _, n := range nodes {
		r.gls = append(r.gls, client(n.URL(), testKeyID, testSecret))
	}
	ctx, gl := context.Background(), r.gls[0]
	for _, l := range placementLocations {
		if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(l)}); err != nil {
			t.Fatalf("CreateLocation: %v", err)
		}
	}
	for i, locs := range [][]string{placementLocations[:2], placementLocations[1:]} {
		f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String(fmt.Sprintf("place-%d", i)), ComputeType: types.ComputeTypeAnywhere,
			Locations: []types.LocationConfiguration{{Location: aws.String(locs[0])}, {Location: aws.String(locs[1])}}})
		if err != nil {
			t.Fatalf("CreateFleet: %v", err)
		}
		r.fleets[i] = aws.ToString(f.FleetAttributes.FleetId)
		for _, l := range locs {
			r.addProcesses(r.fleets[i], l, perLocation)
		}
	}
	return r
}

// addProcesses connects n processes of fleet in loc to each node, on a compute per node.
func (r *placementRig) addProcesses(fleet, loc string, n int) {
	for i, node := range r.nodes {
		compute := fmt.Sprintf("%s-%s-n%d", loc, fleet[len(fleet)-4:], i)
		_, token := computeToken(r.t, r.gls[0], fleet, loc, compute)
		r.procs = append(r.procs, startSDKProcesses(r.t, node, fleet, compute, token, n, true)...)
	}
}

// queue creates a queue over both fleets with the given settings.
func (r *placementRig) queue(name string, in *gamelift.CreateGameSessionQueueInput) {
	r.t.Helper()
	in.Name = aws.String(name)
	for _, f := range r.fleets {
		in.Destinations = append(in.Destinations, types.GameSessionQueueDestination{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + f)})
	}
	if _, err := r.gls[0].CreateGameSessionQueue(context.Background(), in); err != nil {
		r.t.Fatalf("CreateGameSessionQueue: %v", err)
	}
}

func (r *placementRig) placement(gl *gamelift.Client, id string) *types.GameSessionPlacement {
	out, err := gl.DescribeGameSessionPlacement(context.Background(), &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String(id)})
	if err != nil {
		r.t.Fatalf("DescribeGameSessionPlacement: %v", err)
	}
	return out.GameSessionPlacement
}

// TestPlacementRaceOnThreeNodes has 32 placements, spread over three server nodes sharing
// PostgreSQL, race 32 CreateGameSession calls for 36 processes connected across the nodes:
// no process gets two game sessions, no placement gets two, every process ends up hosting
// one, and every placement that got a process is FULFILLED through pushes delivered by
// whichever node holds the process's socket.
func TestPlacementRaceOnThreeNodes(t *testing.T) {
	dsn := pgtest.DSN(t)
	var nodes []*server.Server
	for range 3 {
		nodes = append(nodes, startServer(t, server.Config{Store: dsn}))
	}
	racePlacements(t, nodes)
}

// TestPlacementRaceEmbedded is the same race on one node with the embedded store.
func TestPlacementRaceEmbedded(t *testing.T) {
	racePlacements(t, []*server.Server{startServer(t, server.Config{})})
}

func racePlacements(t *testing.T, nodes []*server.Server) {
	r := newPlacementRig(t, nodes, 36/4/len(nodes)) // 36 processes over the 4 (fleet, location) pairs
	r.queue("race", &gamelift.CreateGameSessionQueueInput{TimeoutInSeconds: aws.Int32(600)})
	ctx := context.Background()
	var wg sync.WaitGroup
	var created atomic.Int32
	for i := range 32 {
		gl := r.gls[i%len(r.gls)]
		wg.Go(func() {
			_, err := gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("race-%d", i)),
				GameSessionQueueName: aws.String("race"), MaximumPlayerSessionCount: aws.Int32(4)})
			if err != nil {
				t.Errorf("StartGameSessionPlacement: %v", err)
			}
		})
		wg.Go(func() {
			_, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(r.fleets[i%2]),
				Location: aws.String(placementLocations[1]), MaximumPlayerSessionCount: aws.Int32(4)})
			if err == nil {
				created.Add(1)
			} else if apiCode(err) != "FleetCapacityExceededException" {
				t.Errorf("CreateGameSession: %v", err)
			}
		})
	}
	wg.Wait()
	placed := 0
	eventually(t, 20*time.Second, "every process hosting one session and placements settled", func() bool {
		placed = 0
		for i := range 32 {
			p := r.placement(r.gls[0], fmt.Sprintf("race-%d", i))
			if p.Status == types.GameSessionPlacementStateFulfilled {
				placed++
			}
		}
		hosting := 0
		for _, p := range r.procs {
			hosting += len(p.started)
		}
		return hosting == len(r.procs) && placed+int(created.Load()) == len(r.procs)
	})
	for i, p := range r.procs {
		if n := len(p.started); n != 1 {
			t.Errorf("process %d was asked to host %d game sessions", i, n)
		}
	}
}

// TestMeasurePlacements measures, with HOIST_MEASURE_PLACEMENTS=1, StartGameSessionPlacement
// -> FULFILLED latency and throughput with 1,000 connected server SDK processes that activate
// at once, beside CreateGameSession -> ACTIVE on an identical fleet in the same run (the
// baseline: the same game session start without a queue). FULFILLED is committed in the
// transaction of the process's ActivateGameSession, so its moment is when the process's
// activation is acknowledged. It reports figures; it asserts nothing about them.
func TestMeasurePlacements(t *testing.T) {
	if os.Getenv("HOIST_MEASURE_PLACEMENTS") == "" {
		t.Skip("set HOIST_MEASURE_PLACEMENTS=1 to measure")
	}
	const processes = 1000
	workers := 32
	if n, err := strconv.Atoi(os.Getenv("HOIST_MEASURE_WORKERS")); err == nil && n > 0 {
		workers = n
	}
	srv := startServer(t, server.Config{})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	start := func(name string) ([]*sdkProcess, string) {
		fleet := createAnywhereFleet(t, gl, "custom-"+name)
		_, token := computeToken(t, gl, fleet, "custom-"+name, "host-"+name)
		return startSDKProcesses(t, srv, fleet, "host-"+name, token, processes, true), fleet
	}
	baseProcs, baseFleet := start("base")
	placeProcs, placeFleet := start("place")
	if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("measure"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + placeFleet)}}}); err != nil {
		t.Fatal(err)
	}
	starts, ids := make([]time.Time, processes), make([]string, processes)
	created := measure(processes, workers, func(i int) error {
		starts[i] = time.Now()
		out, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(baseFleet),
			Location: aws.String("custom-base"), MaximumPlayerSessionCount: aws.Int32(8)})
		if err == nil {
			ids[i] = aws.ToString(out.GameSession.GameSessionId)
		}
		return err
	})
	t.Logf("baseline CreateGameSession (returned, ACTIVATING): %s; -> ACTIVE: %s", created, settled(t, baseProcs, starts, ids))
	placed := measure(processes, workers, func(i int) error {
		starts[i] = time.Now()
		out, err := gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(fmt.Sprintf("m-%d", i)),
			GameSessionQueueName: aws.String("measure"), MaximumPlayerSessionCount: aws.Int32(8),
			DesiredPlayerSessions: []types.DesiredPlayerSession{{PlayerId: aws.String(fmt.Sprintf("player-%d", i))}}})
		if err == nil {
			ids[i] = aws.ToString(out.GameSessionPlacement.GameSessionArn) // placed at once: there is free capacity
		}
		return err
	})
	t.Logf("StartGameSessionPlacement (returned, PENDING): %s; -> FULFILLED: %s", placed, settled(t, placeProcs, starts, ids))
}

// settled waits until every process has activated its game session and reports the latency
// from starts[i] to the activation of game session ids[i], and the rate from the first
// request to the last activation.
func settled(t *testing.T, procs []*sdkProcess, starts []time.Time, ids []string) string {
	eventually(t, 120*time.Second, "every process activating its session", func() bool {
		for _, p := range procs {
			if len(p.started) == 0 {
				return false
			}
		}
		return true
	})
	byID, last := map[string]time.Time{}, time.Time{}
	for _, p := range procs {
		s := <-p.started
		byID[s.gs.GameSessionID] = s.at
		if s.at.After(last) {
			last = s.at
		}
	}
	lat := make([]time.Duration, 0, len(ids))
	for i, id := range ids {
		at, ok := byID[id]
		if !ok {
			t.Fatalf("request %d's game session %q was never activated", i, id)
		}
		lat = append(lat, at.Sub(starts[i]))
	}
	slices.Sort(lat)
	n := len(lat)
	return fmt.Sprintf("p50 %v, p99 %v, %.0f/s", lat[n/2], lat[n*99/100], float64(n)/last.Sub(slices.MinFunc(starts, time.Time.Compare)).Seconds())
}
