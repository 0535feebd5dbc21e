package server_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

const sessionLocation = "custom-hosting-lab"

func (r *hostingRig) createSession(name string) (*types.GameSession, error) {
	out, err := r.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(r.fleet),
		Location: aws.String(sessionLocation), MaximumPlayerSessionCount: aws.Int32(4), Name: aws.String(name),
		GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("guess")}}})
	if err != nil {
		return nil, err
	}
	return out.GameSession, nil
}

func (r *hostingRig) gameSession(id string) types.GameSession {
	out, err := r.gl.DescribeGameSessions(context.Background(), &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String(id)})
	if err != nil || len(out.GameSessions) != 1 {
		r.t.Fatalf("DescribeGameSessions(%s): %v", id, err)
	}
	return out.GameSessions[0]
}

func (r *hostingRig) playerStatus(id string) types.PlayerSessionStatus {
	out, err := r.gl.DescribePlayerSessions(context.Background(), &gamelift.DescribePlayerSessionsInput{PlayerSessionId: aws.String(id)})
	if err != nil || len(out.PlayerSessions) != 1 {
		r.t.Fatalf("DescribePlayerSessions(%s): %v", id, err)
	}
	return out.PlayerSessions[0].Status
}

func (r *hostingRig) reserve(gs *types.GameSession, player string) (*types.PlayerSession, error) {
	out, err := r.gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId,
		PlayerId: aws.String(player)})
	if err != nil {
		return nil, err
	}
	return out.PlayerSession, nil
}

func (r *hostingRig) step() {
	if err := r.srv.StepLoops(context.Background()); err != nil {
		r.t.Fatalf("stepping the loops: %v", err)
	}
}

// player is a TCP client of the example game.
type player struct {
	c  net.Conn
	in *bufio.Scanner
}

func join(t *testing.T, ps *types.PlayerSession) (*player, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", fmt.Sprintf("%s:%d", aws.ToString(ps.IpAddress), aws.ToInt32(ps.Port)), 10*time.Second)
	if err != nil {
		t.Fatalf("connecting to the game: %v", err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second))
	p := &player{c: c, in: bufio.NewScanner(c)}
	fmt.Fprintln(c, aws.ToString(ps.PlayerSessionId))
	p.in.Scan()
	return p, p.in.Text()
}

// TestGameSessionsOnRealProcesses drives game and player sessions with the real Go SDK client
// against `hoist agent` running the example game server: a session is placed on a free
// process and activated by it, players reserve slots and connect over TCP with their player
// session IDs, a reservation times out on the fake clock, and the session ends each way a
// session can end on a real process.
func TestGameSessionsOnRealProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := newHostingRig(t, 2)
	r.startAgent("host-1")
	eventually(t, 60*time.Second, "2 ACTIVE processes", func() bool { return r.activeProcesses() == 2 })
	ctx := context.Background()

	gs, err := r.createSession("first")
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	if gs.Status != types.GameSessionStatusActivating || aws.ToString(gs.IpAddress) != "127.0.0.1" || aws.ToInt32(gs.Port) == 0 ||
		!strings.HasPrefix(aws.ToString(gs.GameSessionId), "arn:aws:gamelift:us-west-2::gamesession/"+r.fleet+"/"+sessionLocation+"/gsess-") {
		t.Fatalf("CreateGameSession returned %s %s %s:%d", aws.ToString(gs.GameSessionId), gs.Status, aws.ToString(gs.IpAddress), aws.ToInt32(gs.Port))
	}
	id := aws.ToString(gs.GameSessionId)
	eventually(t, 30*time.Second, "the game server activates the session", func() bool {
		return r.gameSession(id).Status == types.GameSessionStatusActive
	})
	r.playSession(gs)

	// Search and utilization see the live session.
	found, err := r.gl.SearchGameSessions(ctx, &gamelift.SearchGameSessionsInput{FleetId: aws.String(r.fleet),
		FilterExpression: aws.String("gameSessionProperties.mode = 'guess' AND hasAvailablePlayerSessions = false")}) // DENY_ALL since playSession
	if err != nil || len(found.GameSessions) != 1 || aws.ToString(found.GameSessions[0].GameSessionId) != id {
		t.Errorf("SearchGameSessions: %v %+v", err, found)
	}
	if u := r.utilization(); aws.ToInt32(u.ActiveGameSessionCount) != 1 || aws.ToInt32(u.MaximumPlayerSessionCount) != 4 {
		t.Errorf("utilization %d sessions / %d max players", aws.ToInt32(u.ActiveGameSessionCount), aws.ToInt32(u.MaximumPlayerSessionCount))
	}
	if _, err := r.gl.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: gs.GameSessionId}); apiCode(err) != "NotFoundException" {
		t.Errorf("GetGameSessionLogUrl: %v", err)
	}

	// A second session takes the other process; then the fleet is full.
	gs2, err := r.createSession("second")
	if err != nil {
		t.Fatalf("second CreateGameSession: %v", err)
	}
	if _, err := r.createSession("third"); apiCode(err) != "FleetCapacityExceededException" {
		t.Errorf("third CreateGameSession on two busy processes: %v", err)
	}
	eventually(t, 30*time.Second, "the second session active", func() bool {
		return r.gameSession(aws.ToString(gs2.GameSessionId)).Status == types.GameSessionStatusActive
	})

	// TRIGGER_ON_PROCESS_TERMINATE: the game ends its process on OnProcessTerminate.
	trig, err := r.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: gs.GameSessionId,
		TerminationMode: types.TerminationModeTriggerOnProcessTerminate})
	if err != nil || trig.GameSession.Status != types.GameSessionStatusTerminating {
		t.Fatalf("TerminateGameSession: %v %+v", err, trig)
	}
	eventually(t, 30*time.Second, "the session TERMINATED by ProcessEnding", func() bool {
		s := r.gameSession(id)
		return s.Status == types.GameSessionStatusTerminated && s.StatusReason == types.GameSessionStatusReasonTriggeredOnProcessTerminate
	})

	// A crashed process ends its session too.
	pid := r.pidOnPort(aws.ToInt32(gs2.Port))
	syscall.Kill(pid, syscall.SIGKILL)
	eventually(t, 30*time.Second, "the crashed process's session TERMINATED", func() bool {
		return r.gameSession(aws.ToString(gs2.GameSessionId)).Status == types.GameSessionStatusTerminated
	})

	// FORCE_TERMINATE: the agent stops the process at once.
	eventually(t, 60*time.Second, "replacement processes ACTIVE", func() bool { return r.activeProcesses() == 2 })
	gs3, err := r.createSession("forced")
	if err != nil {
		t.Fatalf("CreateGameSession after the replacements: %v", err)
	}
	victim := r.pidOnPort(aws.ToInt32(gs3.Port))
	forced, err := r.gl.TerminateGameSession(ctx, &gamelift.TerminateGameSessionInput{GameSessionId: gs3.GameSessionId,
		TerminationMode: types.TerminationModeForceTerminate})
	if err != nil || forced.GameSession.Status != types.GameSessionStatusTerminated || forced.GameSession.StatusReason != types.GameSessionStatusReasonForceTerminated {
		t.Fatalf("FORCE_TERMINATE: %v %+v", err, forced)
	}
	eventually(t, 30*time.Second, "the forced process gone", func() bool { return !slices.Contains(pidsOf(r.game), victim) })
}

// playSession reserves player slots in an ACTIVE session and walks them through the game:
// accepted on connect, completed on leaving, refused with a bad ID, timed out when never
// connecting, and refused when the session is full or closed.
func (r *hostingRig) playSession(gs *types.GameSession) {
	t := r.t
	ps, err := r.reserve(gs, "alice")
	if err != nil || ps.Status != types.PlayerSessionStatusReserved || aws.ToInt32(ps.Port) != aws.ToInt32(gs.Port) {
		t.Fatalf("CreatePlayerSession: %v %+v", err, ps)
	}
	alice, hello := join(t, ps)
	if !strings.HasPrefix(hello, "WELCOME") {
		t.Fatalf("the game answered %q", hello)
	}
	if st := r.playerStatus(aws.ToString(ps.PlayerSessionId)); st != types.PlayerSessionStatusActive {
		t.Errorf("after connecting: %s", st)
	}
	fmt.Fprintln(alice.c, "50")
	if alice.in.Scan(); !slices.Contains([]string{"higher", "lower", "correct"}, alice.in.Text()) {
		t.Errorf("guess answered %q", alice.in.Text())
	}
	alice.c.Close()
	eventually(t, 20*time.Second, "alice COMPLETED after leaving", func() bool {
		return r.playerStatus(aws.ToString(ps.PlayerSessionId)) == types.PlayerSessionStatusCompleted
	})
	// Joining again with a used player session ID is refused by the game.
	if _, line := join(t, ps); !strings.HasPrefix(line, "ERR") {
		t.Errorf("rejoining with a COMPLETED player session: %q", line)
	}

	// bob reserves and never comes: TIMEDOUT after 60 s on the fake clock.
	batch, err := r.gl.CreatePlayerSessions(context.Background(), &gamelift.CreatePlayerSessionsInput{GameSessionId: gs.GameSessionId,
		PlayerIds: []string{"bob", "carol", "dave", "erin"}})
	if err != nil || len(batch.PlayerSessions) != 4 {
		t.Fatalf("CreatePlayerSessions: %v", err)
	}
	if _, err := r.reserve(gs, "frank"); apiCode(err) != "GameSessionFullException" {
		t.Errorf("a fifth player in a session of 4: %v", err)
	}
	r.clk.Advance(61 * time.Second)
	r.step()
	if st := r.playerStatus(aws.ToString(batch.PlayerSessions[0].PlayerSessionId)); st != types.PlayerSessionStatusTimedout {
		t.Errorf("bob after 61 s: %s", st)
	}
	if _, line := join(t, &batch.PlayerSessions[1]); !strings.HasPrefix(line, "ERR") {
		t.Errorf("carol joining after her reservation timed out: %q", line)
	}

	// Closed to new players.
	up, err := r.gl.UpdateGameSession(context.Background(), &gamelift.UpdateGameSessionInput{GameSessionId: gs.GameSessionId,
		PlayerSessionCreationPolicy: types.PlayerSessionCreationPolicyDenyAll, ProtectionPolicy: types.ProtectionPolicyFullProtection})
	if err != nil || up.GameSession.PlayerSessionCreationPolicy != types.PlayerSessionCreationPolicyDenyAll {
		t.Fatalf("UpdateGameSession: %v", err)
	}
	if _, err := r.reserve(gs, "gina"); apiCode(err) != "GameSessionFullException" {
		t.Errorf("CreatePlayerSession under DENY_ALL: %v", err)
	}
	det, err := r.gl.DescribeGameSessionDetails(context.Background(), &gamelift.DescribeGameSessionDetailsInput{GameSessionId: gs.GameSessionId})
	if err != nil || det.GameSessionDetails[0].ProtectionPolicy != types.ProtectionPolicyFullProtection {
		t.Errorf("DescribeGameSessionDetails: %v", err)
	}
}

// pidOnPort finds the example game process listening on port (from /proc/net/tcp{,6}).
func (r *hostingRig) pidOnPort(port int32) int {
	for _, pid := range pidsOf(r.game) {
		if processListens(pid, int(port)) {
			return pid
		}
	}
	r.t.Fatalf("no game server process listens on port %d", port)
	return 0
}

// processListens reports whether pid has a listening socket on port.
func processListens(pid, port int) bool {
	inodes := map[string]bool{}
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	for _, fd := range fds {
		link, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name()))
		if strings.HasPrefix(link, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = true
		}
	}
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, _ := os.ReadFile(f)
		for _, line := range strings.Split(string(data), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 9 && strings.HasSuffix(fields[1], want) && fields[3] == "0A" && inodes[fields[9]] {
				return true
			}
		}
	}
	return false
}

// sdkProcess is a game server process simulated in the test with Hoist's server SDK.
type sdkProcess struct {
	sdk     *serversdk.SDK
	started chan startedSession
	ended   chan struct{}
}

// startedSession is a game session a process received, and when it had activated it (or
// received it, for processes that do not activate).
type startedSession struct {
	gs serversdk.GameSession
	at time.Time
}

// startSDKProcesses connects n server SDK clients to srv as processes of fleet on compute and
// calls ProcessReady; activate makes each activate the game sessions it receives at once.
func startSDKProcesses(t testing.TB, srv *server.Server, fleet, compute, token string, n int, activate bool) []*sdkProcess {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	procs := make([]*sdkProcess, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range procs {
		p := &sdkProcess{started: make(chan startedSession, 4), ended: make(chan struct{}, 1)}
		p.sdk = serversdk.New(serversdk.Options{Logger: quiet, Getenv: func(string) string { return "" }})
		procs[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			if err := p.sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), ProcessID: fmt.Sprintf("%s-p%d", compute, i),
				HostID: compute, FleetID: fleet, AuthToken: token}); err != nil {
				errs <- err
				return
			}
			errs <- p.sdk.ProcessReady(ctx, serversdk.ProcessParameters{Port: 20000 + i, OnStartGameSession: func(gs serversdk.GameSession) {
				if activate {
					p.sdk.ActivateGameSession(context.Background())
				}
				p.started <- startedSession{gs, time.Now()}
			}, OnProcessTerminate: func() { p.ended <- struct{}{} }})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("starting SDK processes: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, p := range procs {
			p.sdk.Destroy()
		}
	})
	return procs
}

// TestGameSessionActivationTimeoutWithSDKProcesses uses server SDK clients that receive game
// sessions but never activate them: on the fake clock, a session still ACTIVATING when the
// fleet's GameSessionActivationTimeoutSeconds passes is TERMINATED and its process is told to
// terminate; idempotency tokens and the CreatorId limit behave as documented.
func TestGameSessionActivationTimeoutWithSDKProcesses(t *testing.T) {
	clk := clock.NewFake(time.Now())
	srv := startServer(t, server.Config{Clock: clk})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	fleet := createAnywhereFleet(t, gl, "custom-timeout-lab")
	if _, err := gl.UpdateRuntimeConfiguration(ctx, &gamelift.UpdateRuntimeConfigurationInput{FleetId: aws.String(fleet),
		RuntimeConfiguration: &types.RuntimeConfiguration{GameSessionActivationTimeoutSeconds: aws.Int32(45),
			ServerProcesses: []types.ServerProcess{{LaunchPath: aws.String("/game"), ConcurrentExecutions: aws.Int32(2)}}}}); err != nil {
		t.Fatal(err)
	}
	_, token := computeToken(t, gl, fleet, "custom-timeout-lab", "host-t")
	procs := startSDKProcesses(t, srv, fleet, "host-t", token, 2, false)

	in := &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), Location: aws.String("custom-timeout-lab"),
		MaximumPlayerSessionCount: aws.Int32(2), IdempotencyToken: aws.String("lobby-7"), CreatorId: aws.String("alice")}
	first, err := gl.CreateGameSession(ctx, in)
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	again, err := gl.CreateGameSession(ctx, in)
	if err != nil || aws.ToString(again.GameSession.GameSessionId) != aws.ToString(first.GameSession.GameSessionId) {
		t.Errorf("idempotent repeat: %v", err)
	}
	in.MaximumPlayerSessionCount = aws.Int32(3)
	if _, err := gl.CreateGameSession(ctx, in); apiCode(err) != "IdempotentParameterMismatchException" {
		t.Errorf("same token, other parameters: %v", err)
	}
	in.IdempotencyToken = aws.String("lobby-8")
	if _, err := gl.CreateGameSession(ctx, in); apiCode(err) != "LimitExceededException" {
		t.Errorf("a second session by alice within a second: %v", err)
	}
	var host *sdkProcess
	select {
	case <-procs[0].started:
		host = procs[0]
	case <-procs[1].started:
		host = procs[1]
	case <-time.After(10 * time.Second):
		t.Fatal("no process received CreateGameSession")
	}
	clk.Advance(46 * time.Second)
	if err := srv.StepLoops(ctx); err != nil {
		t.Fatal(err)
	}
	out, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{FleetId: aws.String(fleet), StatusFilter: aws.String("TERMINATED")})
	if err != nil || len(out.GameSessions) != 1 {
		t.Fatalf("TERMINATED sessions after the activation timeout: %v %+v", err, out)
	}
	select {
	case <-host.ended:
	case <-time.After(10 * time.Second):
		t.Error("the process of the timed-out session was not told to terminate")
	}
	if _, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: first.GameSession.GameSessionId,
		PlayerId: aws.String("late")}); apiCode(err) != "InvalidGameSessionStatusException" {
		t.Errorf("CreatePlayerSession in a TERMINATED session: %v", err)
	}
	var nf *types.NotFoundException
	if _, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: aws.String("arn:aws:gamelift:us-west-2::gamesession/" + fleet + "/nope")}); !errors.As(err, &nf) {
		t.Errorf("an unknown game session: %v", err)
	}
}

// TestMeasureGameSessions measures, with HOIST_MEASURE_SESSIONS=1, CreateGameSession -> ACTIVE
// latency and throughput with 1,000 connected server SDK processes that activate at once, and
// CreatePlayerSession throughput, beside DescribeAlias in the same run as the baseline. It
// reports figures; it asserts nothing about them.
func TestMeasureGameSessions(t *testing.T) {
	if os.Getenv("HOIST_MEASURE_SESSIONS") == "" {
		t.Skip("set HOIST_MEASURE_SESSIONS=1 to measure")
	}
	const processes = 1000
	workers := 32 // concurrent clients; HOIST_MEASURE_WORKERS changes it
	if n, err := strconv.Atoi(os.Getenv("HOIST_MEASURE_WORKERS")); err == nil && n > 0 {
		workers = n
	}
	srv := startServer(t, server.Config{})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	fleet := createAnywhereFleet(t, gl, "custom-measure")
	_, token := computeToken(t, gl, fleet, "custom-measure", "host-m")
	procs := startSDKProcesses(t, srv, fleet, "host-m", token, processes, true)
	alias, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("baseline"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fleet)}})
	if err != nil {
		t.Fatal(err)
	}
	base := measure(processes, workers, func(int) error {
		_, err := gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: alias.Alias.AliasId})
		return err
	})
	t.Logf("baseline DescribeAlias: %s", base)
	writes := measure(processes, workers, func(i int) error {
		_, err := gl.UpdateAlias(ctx, &gamelift.UpdateAliasInput{AliasId: alias.Alias.AliasId, Description: aws.String(fmt.Sprint(i))})
		return err
	})
	t.Logf("baseline UpdateAlias (one committed write): %s", writes)

	ids := make([]string, processes)
	starts := make([]time.Time, processes)
	created := measure(processes, workers, func(i int) error {
		starts[i] = time.Now()
		out, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
			Location: aws.String("custom-measure"), MaximumPlayerSessionCount: aws.Int32(200)})
		if err == nil {
			ids[i] = aws.ToString(out.GameSession.GameSessionId)
		}
		return err
	})
	t.Logf("CreateGameSession (returned, ACTIVATING): %s", created)
	eventually(t, 60*time.Second, "every session ACTIVE", func() bool {
		for _, p := range procs {
			if len(p.started) == 0 {
				return false
			}
		}
		return true
	})
	// Create -> ACTIVE: from sending CreateGameSession to the process's ActivateGameSession
	// having been acknowledged (the session is ACTIVE in the store by then).
	byID := map[string]time.Time{}
	for _, p := range procs {
		s := <-p.started
		byID[s.gs.GameSessionID] = s.at
	}
	toActive := make([]time.Duration, 0, processes)
	last := time.Time{}
	for i, id := range ids {
		toActive = append(toActive, byID[id].Sub(starts[i]))
		if byID[id].After(last) {
			last = byID[id]
		}
	}
	slices.Sort(toActive)
	t.Logf("CreateGameSession -> ACTIVE: %d sessions, p50 %v, p99 %v, %.0f/s from the first create to the last activation",
		processes, toActive[processes/2], toActive[processes*99/100], float64(processes)/last.Sub(starts[0]).Seconds())
	players := measure(5000, workers, func(i int) error {
		_, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(ids[i%processes]),
			PlayerId: aws.String(fmt.Sprintf("player-%d", i))})
		return err
	})
	t.Logf("CreatePlayerSession: %s", players)
}

// measured is the result of measure: latency percentiles and throughput.
type measured struct {
	n         int
	p50, p99  time.Duration
	perSecond float64
	errs      int
	firstErr  error
}

func (m measured) String() string {
	return fmt.Sprintf("%d calls, p50 %v, p99 %v, %.0f/s, %d errors %v", m.n, m.p50, m.p99, m.perSecond, m.errs, m.firstErr)
}

// measure runs call(0..n-1) on workers goroutines and times each call.
func measure(n, workers int, call func(int) error) measured {
	lat := make([]time.Duration, n)
	var mu sync.Mutex
	m := measured{n: n}
	next := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				t0 := time.Now()
				err := call(i)
				lat[i] = time.Since(t0)
				if err != nil {
					mu.Lock()
					m.errs++
					if m.firstErr == nil {
						m.firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	m.perSecond = float64(n) / time.Since(start).Seconds()
	slices.Sort(lat)
	m.p50, m.p99 = lat[n/2], lat[n*99/100]
	return m
}
