package server_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

// teamRules is a 2v2 rule set (teams of 1–2) on skill and game mode, with a latency rule.
const teamRules = `{
  "name": "teams",
  "ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "skill", "type": "number", "default": 1000}, {"name": "mode", "type": "string", "default": "ctf"}],
  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 2}, {"name": "blue", "minPlayers": 1, "maxPlayers": 2}],
  "rules": [
    {"name": "SameMode", "type": "comparison", "measurements": ["flatten(teams[*].players.attributes[mode])"], "operation": "="},
    {"name": "CloseSkill", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 200},
    {"name": "Fast", "type": "latency", "maxLatency": 100}
  ]
}`

// matchProcess is a server SDK process that activates what it gets and records its pushes.
type matchProcess struct {
	sdk     *serversdk.SDK
	started chan serversdk.GameSession
	updates chan serversdk.UpdateGameSession
}

// startMatchProcess connects one server SDK process to srv.
func startMatchProcess(t *testing.T, srv *server.Server, fleet, compute, token string) *matchProcess {
	p := &matchProcess{started: make(chan serversdk.GameSession, 4), updates: make(chan serversdk.UpdateGameSession, 8)}
	p.sdk = serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" }})
	ctx := context.Background()
	if err := p.sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), ProcessID: compute + "-p",
		HostID: compute, FleetID: fleet, AuthToken: token}); err != nil {
		t.Fatal(err)
	}
	err := p.sdk.ProcessReady(ctx, serversdk.ProcessParameters{Port: 21000,
		OnStartGameSession: func(gs serversdk.GameSession) {
			p.sdk.ActivateGameSession(context.Background())
			p.started <- gs
		},
		OnUpdateGameSession: func(u serversdk.UpdateGameSession) { p.updates <- u }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.sdk.Destroy() })
	return p
}

// mmLab is a server whose loops run on a fake clock (the matchmaker is woken by its inbox,
// not by time), with one Anywhere fleet and one SDK process.
type mmLab struct {
	t    *testing.T
	clk  *clock.Fake
	srv  *server.Server
	gl   *gamelift.Client
	proc *matchProcess
}

func newMMLab(t *testing.T) *mmLab {
	l := &mmLab{t: t, clk: clock.NewFake(time.Now())}
	l.srv = startServer(t, server.Config{Clock: l.clk})
	l.gl = client(l.srv.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, l.gl, "custom-mm")
	_, token := computeToken(t, l.gl, fleet, "custom-mm", "mm-host")
	l.proc = startMatchProcess(t, l.srv, fleet, "mm-host", token)
	ctx := context.Background()
	_, err := l.gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("mmq"),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + fleet)}}})
	l.must(err, "CreateGameSessionQueue")
	_, err = l.gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("teams"), RuleSetBody: aws.String(teamRules)})
	l.must(err, "CreateMatchmakingRuleSet")
	_, err = l.gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String("arena"),
		RuleSetName: aws.String("teams"), RequestTimeoutSeconds: aws.Int32(30), AcceptanceRequired: aws.Bool(true),
		AcceptanceTimeoutSeconds: aws.Int32(10), GameSessionQueueArns: []string{"arn:aws:gamelift:us-west-2::gamesessionqueue/mmq"},
		GameSessionData: aws.String("arena-data")})
	l.must(err, "CreateMatchmakingConfiguration")
	return l
}

func (l *mmLab) must(err error, what string) {
	l.t.Helper()
	if err != nil {
		l.t.Fatalf("%s: %v", what, err)
	}
}

// start files a one-player ticket.
func (l *mmLab) start(ticket, player string, skill float64) {
	l.t.Helper()
	_, err := l.gl.StartMatchmaking(context.Background(), &gamelift.StartMatchmakingInput{TicketId: aws.String(ticket),
		ConfigurationName: aws.String("arena"), Players: []types.Player{{PlayerId: aws.String(player),
			PlayerAttributes: map[string]types.AttributeValue{"skill": {N: aws.Float64(skill)}}, LatencyInMs: map[string]int32{"custom-mm": 30}}}})
	l.must(err, "StartMatchmaking "+ticket)
}

// await waits until a ticket has a status, without stepping any loop: the matchmaker must be
// woken by its inbox.
func (l *mmLab) await(ticket string, want types.MatchmakingConfigurationStatus) *types.MatchmakingTicket {
	l.t.Helper()
	var got *types.MatchmakingTicket
	eventually(l.t, 20*time.Second, ticket+" "+string(want), func() bool {
		out, err := l.gl.DescribeMatchmaking(context.Background(), &gamelift.DescribeMatchmakingInput{TicketIds: []string{ticket}})
		if err != nil || len(out.TicketList) != 1 {
			return false
		}
		got = &out.TicketList[0]
		return got.Status == want
	})
	return got
}

func (l *mmLab) accept(ticket, player string, typ types.AcceptanceType) {
	l.t.Helper()
	_, err := l.gl.AcceptMatch(context.Background(), &gamelift.AcceptMatchInput{TicketId: aws.String(ticket), PlayerIds: []string{player}, AcceptanceType: typ})
	l.must(err, "AcceptMatch "+ticket)
}

// TestFlexMatchWithRealProcesses drives FlexMatch with the Go SDK against a server whose
// loops are only woken (the clock is fake and nothing steps them until the timeout part):
// a match accepted by its players becomes a game session on a real server SDK process with
// MatchmakerData and player sessions; the process backfills it through the server SDK; the
// acceptance timeout cancels a match nobody answered; a rejection sends the other ticket back
// to searching; the request timeout ends it.
func TestFlexMatchWithRealProcesses(t *testing.T) {
	l := newMMLab(t)
	ctx := context.Background()
	if _, err := l.gl.ValidateMatchmakingRuleSet(ctx, &gamelift.ValidateMatchmakingRuleSetInput{RuleSetBody: aws.String(`{"ruleLanguageVersion":"1.0"}`)}); apiCode(err) != "InvalidRequestException" {
		t.Errorf("validating a rule set without teams: %v", err)
	}
	l.start("t-alice", "alice", 1000)
	l.start("t-bob", "bob", 1100)
	l.await("t-alice", types.MatchmakingConfigurationStatusRequiresAcceptance)
	l.accept("t-alice", "alice", types.AcceptanceTypeAccept)
	l.accept("t-bob", "bob", types.AcceptanceTypeAccept)
	done := l.await("t-bob", types.MatchmakingConfigurationStatusCompleted)
	info := done.GameSessionConnectionInfo
	if info == nil || aws.ToInt32(info.Port) != 21000 || len(info.MatchedPlayerSessions) != 1 || aws.ToString(done.Players[0].Team) == "" {
		t.Fatalf("completed ticket %+v", done)
	}
	gs := <-l.proc.started
	var data struct {
		MatchID   string `json:"matchId"`
		ConfigARN string `json:"matchmakingConfigurationArn"`
		Teams     []struct {
			Name    string `json:"name"`
			Players []struct {
				PlayerID   string         `json:"playerId"`
				Attributes map[string]any `json:"attributes"`
			} `json:"players"`
		} `json:"teams"`
	}
	if err := json.Unmarshal([]byte(gs.MatchmakerData), &data); err != nil || len(data.Teams) != 2 || gs.GameSessionData != "arena-data" {
		t.Fatalf("MatchmakerData %q: %v", gs.MatchmakerData, err)
	}

	// Backfill through the server SDK: everyone in the game, on their teams.
	var players []serversdk.Player
	for _, team := range data.Teams {
		for _, p := range team.Players {
			skill := p.Attributes["skill"].(map[string]any)["valueAttribute"].(float64)
			players = append(players, serversdk.Player{PlayerID: p.PlayerID, Team: team.Name, LatencyInMs: map[string]int{"custom-mm": 30},
				PlayerAttributes: map[string]serversdk.AttributeValue{"skill": {AttrType: "DOUBLE", N: aws.Float64(skill)}}})
		}
	}
	backfill, err := l.proc.sdk.StartMatchBackfill(ctx, serversdk.StartMatchBackfillRequest{GameSessionArn: gs.GameSessionID,
		MatchmakingConfigurationArn: data.ConfigARN, Players: players})
	l.must(err, "server SDK StartMatchBackfill")
	l.start("t-carol", "carol", 1050)
	l.await("t-carol", types.MatchmakingConfigurationStatusRequiresAcceptance)
	l.accept("t-carol", "carol", types.AcceptanceTypeAccept)
	l.await(backfill, types.MatchmakingConfigurationStatusCompleted)
	if u := <-l.proc.updates; u.UpdateReason != "MATCHMAKING_DATA_UPDATED" || u.BackfillTicketID != backfill || !strings.Contains(u.GameSession.MatchmakerData, `"carol"`) {
		t.Fatalf("UpdateGameSession %+v", u)
	}
	again, err := l.proc.sdk.StartMatchBackfill(ctx, serversdk.StartMatchBackfillRequest{GameSessionArn: gs.GameSessionID,
		MatchmakingConfigurationArn: data.ConfigARN, Players: players})
	l.must(err, "second StartMatchBackfill")
	l.must(l.proc.sdk.StopMatchBackfill(ctx, serversdk.StopMatchBackfillRequest{GameSessionArn: gs.GameSessionID,
		MatchmakingConfigurationArn: data.ConfigARN, TicketID: again}), "StopMatchBackfill")
	if u := <-l.proc.updates; u.UpdateReason != "BACKFILL_CANCELLED" || u.BackfillTicketID != again {
		t.Fatalf("UpdateGameSession after StopMatchBackfill %+v", u)
	}

	// Nobody answers: the acceptance timeout cancels both tickets.
	l.start("t-frank", "frank", 1000)
	l.start("t-gina", "gina", 1000)
	l.await("t-gina", types.MatchmakingConfigurationStatusRequiresAcceptance)
	l.clk.Advance(11 * time.Second)
	if err := l.srv.StepLoops(ctx); err != nil {
		t.Fatal(err)
	}
	l.await("t-frank", types.MatchmakingConfigurationStatusCancelled)
	l.await("t-gina", types.MatchmakingConfigurationStatusCancelled)

	// A rejection: dave's ticket is cancelled, erin's searches again, then times out.
	l.start("t-dave", "dave", 1000)
	l.start("t-erin", "erin", 1000)
	l.await("t-dave", types.MatchmakingConfigurationStatusRequiresAcceptance)
	l.accept("t-erin", "erin", types.AcceptanceTypeAccept)
	l.accept("t-dave", "dave", types.AcceptanceTypeReject)
	l.await("t-dave", types.MatchmakingConfigurationStatusCancelled)
	l.await("t-erin", types.MatchmakingConfigurationStatusSearching)
	l.clk.Advance(31 * time.Second)
	if err := l.srv.StepLoops(ctx); err != nil {
		t.Fatal(err)
	}
	if got := l.await("t-erin", types.MatchmakingConfigurationStatusTimedOut); aws.ToString(got.StatusReason) != "TimedOut" {
		t.Errorf("timed out ticket: %+v", got)
	}
}
