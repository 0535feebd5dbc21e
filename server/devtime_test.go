package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// hoistOp calls a Hoist operation outside GameLift's model with a SigV4-signed awsJson request.
func hoistOp(t *testing.T, base, target, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	code, raw := signedDo(t, req, []byte(body))
	return code, string(raw)
}

// serverTime calls Hoist.GetTime.
func serverTime(t *testing.T, base string) server.TimeOutput {
	t.Helper()
	code, raw := hoistOp(t, base, server.GetTimeTarget, "{}")
	var out server.TimeOutput
	if err := json.Unmarshal([]byte(raw), &out); code != http.StatusOK || err != nil {
		t.Fatalf("GetTime: %d %s %v", code, raw, err)
	}
	return out
}

// TestDevTimeRefusedWithoutDevMode: a server not in dev mode tells its time but refuses to
// move it, with an error that says how to start dev mode.
func TestDevTimeRefusedWithoutDevMode(t *testing.T) {
	srv := startServer(t, server.Config{})
	for target, body := range map[string]string{server.AdvanceTimeTarget: `{"Seconds":90}`, server.SetTimeTarget: `{"Time":"2099-01-01T00:00:00Z"}`,
		server.InjectFaultTarget: `{"Kind":"ProcessCrash","FleetId":"fleet-1","ProcessId":"p"}`} {
		code, raw := hoistOp(t, srv.URL(), target, body)
		if code != http.StatusBadRequest || !strings.Contains(raw, "InvalidRequestException") || !strings.Contains(raw, "--dev") {
			t.Errorf("%s on a server without --dev: %d %s", target, code, raw)
		}
	}
	if out := serverTime(t, srv.URL()); out.Dev || out.OffsetSeconds != 0 {
		t.Errorf("GetTime = %+v", out)
	}
}

// TestDevModeRefusesPostgres: virtual time is per node, so dev mode needs the embedded store.
func TestDevModeRefusesPostgres(t *testing.T) {
	_, err := server.New(context.Background(), server.Config{Dev: true, Store: "postgres://nowhere/hoist", DataDir: t.TempDir(),
		Listen: "127.0.0.1:0"})
	if err == nil || !strings.Contains(err.Error(), "embedded store") {
		t.Fatalf("New(--dev, postgres) = %v", err)
	}
}

// TestDevTimeAdvanceTimesOutReservationAndTicket: in dev mode Hoist.AdvanceTime, through the
// signed API and nothing else, makes a RESERVED player session TIMEDOUT and a searching
// matchmaking ticket TIMED_OUT, while the game server process, connected and healthy, keeps
// working (it is not judged silent for the five minutes jumped over).
func TestDevTimeAdvanceTimesOutReservationAndTicket(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	fleet := devMatchmakingFleet(t, gl)
	_, token := computeToken(t, gl, fleet, "custom-dev", "dev-host")
	startMatchProcess(t, srv, fleet, "dev-host", token)
	gs := activeSession(t, gl, fleet)
	ps, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: gs, PlayerId: aws.String("bob")})
	if err != nil || ps.PlayerSession.Status != types.PlayerSessionStatusReserved {
		t.Fatalf("CreatePlayerSession: %v", err)
	}
	_, err = gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{TicketId: aws.String("t-solo"), ConfigurationName: aws.String("arena"),
		Players: []types.Player{{PlayerId: aws.String("solo"), LatencyInMs: map[string]int32{"custom-dev": 30}}}})
	if err != nil {
		t.Fatal(err)
	}
	before := serverTime(t, srv.URL())
	code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":300}`)
	after := serverTime(t, srv.URL())
	if code != http.StatusOK || !after.Dev || after.OffsetSeconds < 300 || after.Time <= before.Time {
		t.Fatalf("AdvanceTime: %d %s, then %+v", code, raw, after)
	}
	eventually(t, 5*time.Second, "bob's reservation TIMEDOUT", func() bool {
		d, err := gl.DescribePlayerSessions(ctx, &gamelift.DescribePlayerSessionsInput{PlayerSessionId: ps.PlayerSession.PlayerSessionId})
		return err == nil && d.PlayerSessions[0].Status == types.PlayerSessionStatusTimedout
	})
	eventually(t, 5*time.Second, "the ticket TIMED_OUT", func() bool {
		d, err := gl.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: []string{"t-solo"}})
		return err == nil && d.TicketList[0].Status == types.MatchmakingConfigurationStatusTimedOut
	})
	// The process keeps working through five minutes without a heartbeat of virtual time: its
	// game session is still ACTIVE once the process monitor has stepped at the new time.
	if err := srv.StepLoops(ctx); err != nil {
		t.Fatal(err)
	}
	d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: gs})
	if err != nil || d.GameSessions[0].Status != types.GameSessionStatusActive {
		t.Fatalf("the game session after the jump: %v %+v", err, d)
	}
}

// devMatchmakingFleet creates an Anywhere fleet in custom-dev and a matchmaking
// configuration "arena" (2v2 teams, 30 s timeout) placing on it.
func devMatchmakingFleet(t *testing.T, gl *gamelift.Client) string {
	t.Helper()
	ctx := context.Background()
	fleet := createAnywhereFleet(t, gl, "custom-dev")
	_, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("devq"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + fleet)}}})
	if err == nil {
		_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("teams"), RuleSetBody: aws.String(teamRules)})
	}
	if err == nil {
		_, err = gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("arena"),
			RuleSetName: aws.String("teams"), RequestTimeoutSeconds: aws.Int32(30), AcceptanceRequired: aws.Bool(false),
			GameSessionQueueArns: []string{"arn:aws:gamelift:us-west-2::gamesessionqueue/devq"}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return fleet
}

// activeSession creates a game session on fleet and waits until it is ACTIVE.
func activeSession(t *testing.T, gl *gamelift.Client, fleet string) *string {
	t.Helper()
	ctx := context.Background()
	out, err := gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String("custom-dev"), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	id := out.GameSession.GameSessionId
	eventually(t, 5*time.Second, "the game session ACTIVE", func() bool {
		d, err := gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: id})
		return err == nil && d.GameSessions[0].Status == types.GameSessionStatusActive
	})
	return id
}
