package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

// sdkProc is a game server process on Hoist's server SDK that activates every game session
// it is asked to host and records the termination it is told of.
type sdkProc struct {
	sdk        *serversdk.SDK
	id         string
	sessions   atomic.Int32
	terminated atomic.Bool
}

// connectProc connects process id of compute in fleet to the SDK endpoint url and calls
// ProcessReady.
func connectProc(t *testing.T, url, fleet, compute, token, id string, port int) *sdkProc {
	t.Helper()
	p := &sdkProc{id: id, sdk: serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})}
	ctx := context.Background()
	err := p.sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: url, ProcessID: id, HostID: compute, FleetID: fleet, AuthToken: token})
	if err != nil {
		t.Fatalf("InitSDK %s: %v", id, err)
	}
	t.Cleanup(func() { p.sdk.Destroy() })
	err = p.sdk.ProcessReady(ctx, serversdk.ProcessParameters{Port: port,
		OnStartGameSession: func(serversdk.GameSession) {
			p.sessions.Add(1)
			if err := p.sdk.ActivateGameSession(context.Background()); err != nil {
				t.Errorf("ActivateGameSession on %s: %v", id, err)
			}
		},
		OnProcessTerminate: func() { p.terminated.Store(true) }})
	if err != nil {
		t.Fatalf("ProcessReady %s: %v", id, err)
	}
	return p
}

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
	proc := connectProc(t, a.SDKEndpoint(), fleet, "host-a", token, "proc-on-a", 7100)
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
	eventually(t, 10*time.Second, "TerminateProcess delivered to the process on node a", proc.terminated.Load)
}

// placementRig is a queue over two Anywhere fleets in three custom locations, with processes
// on Hoist's server SDK spread over the given server nodes.
type placementRig struct {
	t      *testing.T
	nodes  []*server.Server
	gls    []*gamelift.Client
	fleets [2]string
	procs  []*sdkProc
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

// addProcesses connects n processes of fleet in loc, each to the next node in turn.
func (r *placementRig) addProcesses(fleet, loc string, n int) {
	_, token := computeToken(r.t, r.gls[0], fleet, loc, loc)
	for i := range n {
		node := r.nodes[len(r.procs)%len(r.nodes)]
		id := fmt.Sprintf("%s-%s-%d", fleet[len(fleet)-6:], loc, i)
		r.procs = append(r.procs, connectProc(r.t, node.SDKEndpoint(), fleet, loc, token, id, 7000+len(r.procs)))
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
	r := newPlacementRig(t, nodes, 9) // 9 processes in each of 4 (fleet, location) pairs
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
			hosting += int(p.sessions.Load())
		}
		return hosting == len(r.procs) && placed+int(created.Load()) == len(r.procs)
	})
	for _, p := range r.procs {
		if n := p.sessions.Load(); n != 1 {
			t.Errorf("process %s was asked to host %d game sessions", p.id, n)
		}
	}
}
