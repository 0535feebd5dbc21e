package gamelift

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// duelRules is a 1v1 rule set on skill; teams of 1–2 when big is set (for backfill).
func duelRules(big bool) string {
	max := 1
	if big {
		max = 2
	}
	return fmt.Sprintf(`{"ruleLanguageVersion": "1.0",
	  "playerAttributes": [{"name": "skill", "type": "number", "default": 10}, {"name": "mode", "type": "string"}],
	  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": %d}, {"name": "blue", "minPlayers": 1, "maxPlayers": %d}],
	  "rules": [{"name": "SameMode", "type": "comparison", "measurements": ["flatten(teams[*].players.attributes[mode])"], "operation": "="},
	            {"name": "CloseSkill", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 50}]}`, max, max)
}

// ticketWorld is a placeWorld with a rule set and a matchmaking configuration.
type ticketWorld struct {
	*placeWorld
	loop *MatchmakingLoop
}

// newTicketWorld creates rule set "duel" and configuration "cfg"; change adjusts the
// configuration before it is created.
func newTicketWorld(t *testing.T, rules string, change func(*api.CreateMatchmakingConfigurationInput)) *ticketWorld {
	w := &ticketWorld{placeWorld: newPlaceWorld(t)}
	w.loop = w.f.svc.MatchmakingLoop()
	ok(w.f.h.CreateMatchmakingRuleSet(w.f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String("duel"), RuleSetBody: api.String(rules)}))(t)
	in := &api.CreateMatchmakingConfigurationInput{Name: api.String("cfg"), RuleSetName: api.String("duel"),
		RequestTimeoutSeconds: api.Int32(60), AcceptanceRequired: api.Bool(false), CustomEventData: api.String("ced"),
		FlexMatchMode: ptr(api.FlexMatchModeStandalone), NotificationTarget: api.String("arn:aws:sns:us-west-2:123:mm")}
	if change != nil {
		change(in)
	}
	ok(w.f.h.CreateMatchmakingConfiguration(w.f.ctx, in))(t)
	return w
}

// ticket starts a one-player ticket.
func (w *ticketWorld) ticket(t *testing.T, id, player string, skill float64, mode string, lat map[string]int32) *api.MatchmakingTicket {
	t.Helper()
	return ok(w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{TicketId: api.String(id), ConfigurationName: api.String("cfg"),
		Players: []api.Player{mmPlayer(player, skill, mode, lat)}}))(t).MatchmakingTicket
}

func mmPlayer(id string, skill float64, mode string, lat map[string]int32) api.Player {
	return api.Player{PlayerId: api.String(id), LatencyInMs: lat, PlayerAttributes: map[string]api.AttributeValue{
		"skill": {N: api.Float64(skill)}, "mode": {S: api.String(mode)}}}
}

// status steps the matchmaker and describes the tickets, answering "id:STATUS ..." in order.
func (w *ticketWorld) status(t *testing.T, ids ...string) string {
	t.Helper()
	must(t, w.loop.Step(w.f.ctx))
	out := ok(w.f.h.DescribeMatchmaking(w.f.ctx, &api.DescribeMatchmakingInput{TicketIds: ids}))(t)
	var parts []string
	for _, tk := range out.TicketList {
		parts = append(parts, *tk.TicketId+":"+string(*tk.Status))
	}
	return strings.Join(parts, " ")
}

// describe answers one ticket.
func (w *ticketWorld) describeTicket(t *testing.T, id string) *api.MatchmakingTicket {
	t.Helper()
	out := ok(w.f.h.DescribeMatchmaking(w.f.ctx, &api.DescribeMatchmakingInput{TicketIds: []string{id}}))(t)
	if len(out.TicketList) != 1 {
		t.Fatalf("ticket %s not found", id)
	}
	return &out.TicketList[0]
}

// matchEvents lists the types of the matchmaking events in the outbox.
func (w *ticketWorld) matchEvents(t *testing.T) string {
	t.Helper()
	var types []string
	for _, e := range w.events(t) {
		if e["detail-type"] == matchDetailType {
			types = append(types, e["detail"].(map[string]any)["type"].(string))
		}
	}
	return strings.Join(types, " ")
}

func TestMatchmakingStandaloneMatch(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	tk := w.ticket(t, "t1", "alice", 100, "ctf", nil)
	if *tk.Status != api.MatchmakingConfigurationStatusQueued || *tk.ConfigurationArn != w.f.svc.arn("matchmakingconfiguration", "cfg") {
		t.Fatalf("StartMatchmaking answered %s %s", *tk.Status, *tk.ConfigurationArn)
	}
	if got := w.status(t, "t1"); got != "t1:SEARCHING" {
		t.Fatalf("after a step: %s", got)
	}
	w.ticket(t, "t2", "bob", 300, "ctf", nil)  // too far in skill
	w.ticket(t, "t3", "carol", 120, "dm", nil) // another mode
	w.ticket(t, "t4", "dave", 130, "ctf", nil)
	if got := w.status(t, "t1", "t2", "t3", "t4"); got != "t1:COMPLETED t2:SEARCHING t3:SEARCHING t4:COMPLETED" {
		t.Fatalf("after matching: %s", got)
	}
	done := w.describeTicket(t, "t1")
	if done.EndTime == nil || done.GameSessionConnectionInfo != nil || api.Deref(done.Players[0].Team) == "" {
		t.Errorf("completed standalone ticket: end %v conn %v team %v", done.EndTime, done.GameSessionConnectionInfo, done.Players[0].Team)
	}
	want := "MatchmakingSearching MatchmakingSearching MatchmakingSearching MatchmakingSearching PotentialMatchCreated MatchmakingSucceeded"
	if got := w.matchEvents(t); got != want {
		t.Errorf("events %s\nwant %s", got, want)
	}
	for _, e := range w.events(t) {
		d := e["detail"].(map[string]any)
		if d["type"] == "PotentialMatchCreated" && (d["acceptanceRequired"] != false || len(d["ruleEvaluationMetrics"].([]any)) != 2 || d["matchId"] == "") {
			t.Errorf("PotentialMatchCreated %v", d)
		}
		if e["target"] != "arn:aws:sns:us-west-2:123:mm" || d["customEventData"] != "ced" {
			t.Errorf("event target %v custom data %v", e["target"], d["customEventData"])
		}
	}
}

func TestMatchmakingAcceptance(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), func(in *api.CreateMatchmakingConfigurationInput) {
		in.AcceptanceRequired, in.AcceptanceTimeoutSeconds = api.Bool(true), api.Int32(30)
	})
	accept := func(id, player string, typ api.AcceptanceType) error {
		_, err := w.f.h.AcceptMatch(w.f.ctx, &api.AcceptMatchInput{TicketId: api.String(id), PlayerIds: []string{player}, AcceptanceType: &typ})
		return err
	}
	wantCode(t, accept("t1", "alice", api.AcceptanceTypeAccept), api.NotFoundException)
	w.ticket(t, "t1", "alice", 100, "ctf", nil)
	w.ticket(t, "t2", "bob", 110, "ctf", nil)
	wantCode(t, accept("t1", "alice", api.AcceptanceTypeAccept), api.InvalidRequestException) // still queued
	if got := w.status(t, "t1", "t2"); got != "t1:REQUIRES_ACCEPTANCE t2:REQUIRES_ACCEPTANCE" {
		t.Fatalf("proposed: %s", got)
	}
	wantCode(t, accept("t1", "bob", api.AcceptanceTypeAccept), api.InvalidRequestException) // bob is in t2
	must(t, accept("t1", "alice", api.AcceptanceTypeAccept))
	must(t, accept("t2", "bob", api.AcceptanceTypeAccept))
	if got := w.status(t, "t1", "t2"); got != "t1:COMPLETED t2:COMPLETED" {
		t.Fatalf("accepted: %s", got)
	}
	// A rejection cancels the rejecting ticket and returns the other to the pool.
	w.ticket(t, "t3", "carol", 100, "ctf", nil)
	w.ticket(t, "t4", "dave", 100, "ctf", nil)
	w.status(t, "t3")
	must(t, accept("t3", "carol", api.AcceptanceTypeAccept))
	must(t, accept("t4", "dave", api.AcceptanceTypeReject))
	if got := w.status(t, "t3", "t4"); got != "t3:SEARCHING t4:CANCELLED" {
		t.Fatalf("rejected: %s", got)
	}
	// The acceptance timeout cancels the tickets whose players did not answer.
	w.ticket(t, "t5", "erin", 100, "ctf", nil)
	if got := w.status(t, "t3", "t5"); got != "t3:REQUIRES_ACCEPTANCE t5:REQUIRES_ACCEPTANCE" {
		t.Fatalf("proposed again: %s", got)
	}
	must(t, accept("t5", "erin", api.AcceptanceTypeAccept))
	w.f.clock.Advance(31 * time.Second)
	if got := w.status(t, "t3", "t5"); got != "t3:CANCELLED t5:SEARCHING" {
		t.Fatalf("after the acceptance timeout: %s", got)
	}
	want := "MatchmakingSearching MatchmakingSearching PotentialMatchCreated AcceptMatch AcceptMatch AcceptMatchCompleted MatchmakingSucceeded " +
		"MatchmakingSearching MatchmakingSearching PotentialMatchCreated AcceptMatch AcceptMatch AcceptMatchCompleted MatchmakingCancelled MatchmakingSearching " +
		"MatchmakingSearching PotentialMatchCreated AcceptMatch AcceptMatchCompleted MatchmakingCancelled MatchmakingSearching"
	if got := w.matchEvents(t); got != want {
		t.Errorf("events %s\nwant   %s", got, want)
	}
	// A player of a proposed match starting a new ticket breaks the match.
	w.ticket(t, "t6", "frank", 100, "ctf", nil)
	if got := w.status(t, "t5", "t6"); got != "t5:REQUIRES_ACCEPTANCE t6:REQUIRES_ACCEPTANCE" {
		t.Fatalf("proposed a third time: %s", got)
	}
	w.ticket(t, "t7", "frank", 100, "ctf", nil)
	t5, t6 := w.describeTicket(t, "t5"), w.describeTicket(t, "t6")
	if *t5.Status != api.MatchmakingConfigurationStatusSearching || *t6.Status != api.MatchmakingConfigurationStatusCancelled ||
		api.Deref(t6.StatusReason) != "Cancelled due to duplicate player" {
		t.Errorf("after a duplicate: t5 %s, t6 %s %v", *t5.Status, *t6.Status, t6.StatusReason)
	}
}

func TestMatchmakingTimeoutStopAndDuplicates(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	w.ticket(t, "t1", "alice", 100, "ctf", nil)
	w.ticket(t, "t2", "bob", 100, "dm", nil)
	w.status(t, "t1")
	_, err := w.f.h.StopMatchmaking(w.f.ctx, &api.StopMatchmakingInput{TicketId: api.String("t2")})
	must(t, err)
	wantCode(t, second(w.f.h.StopMatchmaking(w.f.ctx, &api.StopMatchmakingInput{TicketId: api.String("t2")})), api.InvalidRequestException)
	wantCode(t, second(w.f.h.StopMatchmaking(w.f.ctx, &api.StopMatchmakingInput{TicketId: api.String("nope")})), api.NotFoundException)
	// A player's new ticket cancels the old one, without an event.
	w.ticket(t, "t3", "alice", 100, "ctf", nil)
	old := w.describeTicket(t, "t1")
	if *old.Status != api.MatchmakingConfigurationStatusCancelled || api.Deref(old.StatusReason) != "Cancelled due to duplicate player" {
		t.Errorf("duplicate: %s %v", *old.Status, old.StatusReason)
	}
	w.f.clock.Advance(61 * time.Second)
	if got := w.status(t, "t1", "t2", "t3", "unknown"); got != "t1:CANCELLED t2:CANCELLED t3:TIMED_OUT" {
		t.Fatalf("after the request timeout: %s", got)
	}
	if got := w.matchEvents(t); got != "MatchmakingSearching MatchmakingSearching MatchmakingCancelled MatchmakingSearching MatchmakingTimedOut" {
		t.Errorf("events %s", got)
	}
	wantCode(t, second(w.f.h.DescribeMatchmaking(w.f.ctx, &api.DescribeMatchmakingInput{TicketIds: strings.Fields("a b c d e f g h i j k")})), api.InvalidRequestException)
	wantCode(t, second(w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{TicketId: api.String("t3"), ConfigurationName: api.String("cfg"),
		Players: []api.Player{mmPlayer("zed", 1, "ctf", nil)}})), api.InvalidRequestException) // a used ticket ID
	// Ended tickets are kept for the retention period, then purged.
	w.f.clock.Advance(DefaultSessionRetention - time.Hour)
	if got := w.status(t, "t1", "t2", "t3"); got != "t1:CANCELLED t2:CANCELLED t3:TIMED_OUT" {
		t.Fatalf("before the retention period ends: %s", got)
	}
	w.f.clock.Advance(2 * time.Hour)
	if got := w.status(t, "t1", "t2", "t3"); got != "" {
		t.Fatalf("after the retention period: %s", got)
	}
}

func TestStartMatchmakingChecksPlayers(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	cases := map[string][]api.Player{
		"no players":       nil,
		"missing required": {{PlayerId: api.String("p"), PlayerAttributes: map[string]api.AttributeValue{"skill": {N: api.Float64(1)}}}},
		"wrong type":       {{PlayerId: api.String("p"), PlayerAttributes: map[string]api.AttributeValue{"mode": {N: api.Float64(1)}}}},
		"two values":       {{PlayerId: api.String("p"), PlayerAttributes: map[string]api.AttributeValue{"mode": {S: api.String("a"), N: api.Float64(1)}}}},
		"twice":            {mmPlayer("p", 1, "a", nil), mmPlayer("p", 1, "a", nil)},
		"team given":       {{PlayerId: api.String("p"), Team: api.String("red"), PlayerAttributes: map[string]api.AttributeValue{"mode": {S: api.String("a")}}}},
		"zero latency":     {mmPlayer("p", 1, "a", map[string]int32{"custom-a": 0})},
	}
	for name, players := range cases {
		_, err := w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{ConfigurationName: api.String("cfg"), Players: players})
		if msg := wantCode(t, err, api.InvalidRequestException); msg == "" {
			t.Errorf("%s: empty message", name)
		}
	}
	_, err := w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{ConfigurationName: api.String("other"), Players: []api.Player{mmPlayer("p", 1, "a", nil)}})
	wantCode(t, err, api.NotFoundException)
	tk := ok(w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{ConfigurationName: api.String("cfg"), Players: []api.Player{mmPlayer("p", 1, "a", nil)}}))(t)
	if api.Deref(tk.MatchmakingTicket.TicketId) == "" {
		t.Error("no generated ticket ID")
	}
}

// queuedWorld is an ticketWorld in WITH_QUEUE mode over the placeWorld's queue, with a process
// ready in each location.
func queuedWorld(t *testing.T, rules string, change func(*api.CreateMatchmakingConfigurationInput)) *ticketWorld {
	pw := newPlaceWorld(t)
	pw.queue(t, "q", nil)
	for _, c := range [][2]string{{pw.a, "custom-a"}, {pw.a, "custom-b"}, {pw.b, "custom-b"}, {pw.b, "custom-c"}} {
		pw.ready(t, c[0], c[1], "p-"+c[0][len(c[0])-4:]+"-"+c[1])
	}
	w := &ticketWorld{placeWorld: pw, loop: pw.f.svc.MatchmakingLoop()}
	ok(w.f.h.CreateMatchmakingRuleSet(w.f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String("duel"), RuleSetBody: api.String(rules)}))(t)
	in := &api.CreateMatchmakingConfigurationInput{Name: api.String("cfg"), RuleSetName: api.String("duel"),
		RequestTimeoutSeconds: api.Int32(60), AcceptanceRequired: api.Bool(false), GameSessionQueueArns: []string{w.f.svc.arn(arnQueue, "q")},
		GameProperties: []api.GameProperty{{Key: api.String("map"), Value: api.String("dust")}}, GameSessionData: api.String("gsd")}
	if change != nil {
		change(in)
	}
	ok(w.f.h.CreateMatchmakingConfiguration(w.f.ctx, in))(t)
	return w
}

func TestMatchmakingWithQueuePlacesAGameSession(t *testing.T) {
	w := queuedWorld(t, duelRules(false), nil)
	w.ticket(t, "t1", "alice", 100, "ctf", map[string]int32{"custom-a": 80, "custom-c": 20})
	w.ticket(t, "t2", "bob", 100, "ctf", map[string]int32{"custom-a": 90, "custom-c": 30})
	if got := w.status(t, "t1", "t2"); got != "t1:PLACING t2:PLACING" {
		t.Fatalf("matched: %s", got)
	}
	wantCode(t, second(w.f.h.StopMatchmaking(w.f.ctx, &api.StopMatchmakingInput{TicketId: api.String("t1")})), api.InvalidRequestException)
	st := w.n.started()
	if len(st) != 1 || st[0].GS.GameSessionData != "gsd" || st[0].GS.GameProperties["map"] != "dust" || st[0].GS.MaximumPlayerSessionCount != 2 {
		t.Fatalf("CreateGameSession pushes %+v", st)
	}
	if fleet, loc := w.where(t, &api.GameSessionPlacement{PlacementId: api.String("x"), GameSessionArn: api.String(st[0].GS.GameSessionID)}); fleet != w.b || loc != "custom-c" {
		t.Errorf("placed in %s %s, want the players' fastest location custom-c", fleet, loc)
	}
	var md matchmakerDataDoc
	must(t, json.Unmarshal([]byte(st[0].GS.MatchmakerData), &md))
	if md.ConfigARN != w.f.svc.arn("matchmakingconfiguration", "cfg") || len(md.Teams) != 2 || len(md.Teams[0].Players) != 1 ||
		md.Teams[0].Players[0].Attributes["mode"].Type != "STRING" || api.Deref(md.AutoMode) != "MANUAL" {
		t.Errorf("MatchmakerData %s", st[0].GS.MatchmakerData)
	}
	must(t, w.f.svc.ActivateGameSession(w.f.ctx, st[0].Ref, st[0].GS.GameSessionID))
	if got := w.status(t, "t1", "t2"); got != "t1:COMPLETED t2:COMPLETED" {
		t.Fatalf("after activation: %s", got)
	}
	c := w.describeTicket(t, "t1").GameSessionConnectionInfo
	if c == nil || *c.GameSessionArn != st[0].GS.GameSessionID || *c.Port != 7000 || len(c.MatchedPlayerSessions) != 1 || *c.MatchedPlayerSessions[0].PlayerId != "alice" {
		t.Fatalf("connection info %+v", c)
	}
	ps := ok(w.f.h.DescribePlayerSessions(w.f.ctx, &api.DescribePlayerSessionsInput{GameSessionId: c.GameSessionArn}))(t).PlayerSessions
	if len(ps) != 2 {
		t.Errorf("%d player sessions, want 2", len(ps))
	}
	if got := w.matchEvents(t); got != "MatchmakingSearching MatchmakingSearching PotentialMatchCreated MatchmakingSucceeded" {
		t.Errorf("events %s", got)
	}
}

func TestMatchmakingPlacementTimeoutReturnsTicketsToThePool(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	ok(w.f.h.UpdateMatchmakingConfiguration(w.f.ctx, &api.UpdateMatchmakingConfigurationInput{Name: api.String("cfg"),
		FlexMatchMode: ptr(api.FlexMatchModeWithQueue), GameSessionQueueArns: []string{w.queueARN(t)}}))(t)
	w.ticket(t, "t1", "alice", 100, "ctf", nil)
	w.ticket(t, "t2", "bob", 100, "ctf", nil)
	if got := w.status(t, "t1", "t2"); got != "t1:PLACING t2:PLACING" { // no process anywhere: the placement waits
		t.Fatalf("matched: %s", got)
	}
	w.f.clock.Advance(11 * time.Second)
	w.step(t)
	if got := w.status(t, "t1", "t2"); got != "t1:PLACING t2:PLACING" {
		t.Fatalf("after the queue's timeout: %s", got)
	}
	// The placement timed out: the tickets search again and are matched again at once.
	if got := w.matchEvents(t); got != "MatchmakingSearching MatchmakingSearching PotentialMatchCreated PotentialMatchCreated" {
		t.Errorf("events %s", got)
	}
}

// queueARN creates a queue with the shortest timeout over fleet A and returns its ARN.
func (w *ticketWorld) queueARN(t *testing.T) string {
	w.queue(t, "short", func(q *api.CreateGameSessionQueueInput) { q.TimeoutInSeconds = api.Int32(10) })
	return w.f.svc.arn(arnQueue, "short")
}

func TestMatchBackfillFillsTheGameSession(t *testing.T) {
	w := queuedWorld(t, duelRules(true), nil)
	st := w.activeMatch(t)
	arn := st[0].GS.GameSessionID
	var md matchmakerDataDoc
	gs := ok(w.f.h.DescribeGameSessions(w.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(arn)}))(t).GameSessions[0]
	must(t, json.Unmarshal([]byte(*gs.MatchmakerData), &md))
	players := md.players("custom-a", map[string]int32{"alice": 20, "bob": 20})
	bf := ok(w.f.h.StartMatchBackfill(w.f.ctx, &api.StartMatchBackfillInput{ConfigurationName: api.String(md.ConfigARN),
		GameSessionArn: api.String(arn), Players: players}))(t).MatchmakingTicket
	w.ticket(t, "t3", "carol", 110, "ctf", map[string]int32{"custom-a": 30})
	if got := w.status(t, *bf.TicketId, "t3"); got != *bf.TicketId+":COMPLETED t3:COMPLETED" {
		t.Fatalf("backfill: %s", got)
	}
	gs = ok(w.f.h.DescribeGameSessions(w.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(arn)}))(t).GameSessions[0]
	if *gs.CurrentPlayerSessionCount != 3 || !strings.Contains(*gs.MatchmakerData, `"carol"`) {
		t.Errorf("after backfill: %d players, data %s", *gs.CurrentPlayerSessionCount, *gs.MatchmakerData)
	}
	_, bodies := w.n.outbox(MessageUpdateGameSession)
	if len(bodies) != 1 || !strings.Contains(string(bodies[0]), updateDataUpdated) || !strings.Contains(string(bodies[0]), *bf.TicketId) {
		t.Errorf("UpdateGameSession pushes %s", bodies)
	}
	// A second backfill request cancels an active first one, and the process hears of it.
	b1 := ok(w.f.h.StartMatchBackfill(w.f.ctx, &api.StartMatchBackfillInput{ConfigurationName: api.String("cfg"), GameSessionArn: api.String(arn), Players: players}))(t).MatchmakingTicket
	ok(w.f.h.StartMatchBackfill(w.f.ctx, &api.StartMatchBackfillInput{ConfigurationName: api.String("cfg"), GameSessionArn: api.String(arn), Players: players}))(t)
	if s := w.describeTicket(t, *b1.TicketId).Status; *s != api.MatchmakingConfigurationStatusCancelled {
		t.Errorf("replaced backfill ticket is %s", *s)
	}
	if _, bodies = w.n.outbox(MessageUpdateGameSession); len(bodies) != 2 || !strings.Contains(string(bodies[1]), updateBackfillCancelled) {
		t.Errorf("UpdateGameSession pushes %s", bodies)
	}
}

func TestAutomaticBackfill(t *testing.T) {
	w := queuedWorld(t, duelRules(true), func(in *api.CreateMatchmakingConfigurationInput) {
		in.BackfillMode, in.AdditionalPlayerCount = ptr(api.BackfillModeAutomatic), api.Int32(2)
	})
	w.ticket(t, "t1", "alice", 100, "ctf", map[string]int32{"custom-a": 20})
	w.ticket(t, "t2", "bob", 100, "ctf", map[string]int32{"custom-a": 20})
	w.status(t, "t1")
	st := w.n.started()
	if len(st) != 1 {
		t.Fatalf("%d games started", len(st))
	}
	must(t, w.f.svc.ActivateGameSession(w.f.ctx, st[0].Ref, st[0].GS.GameSessionID))
	w.status(t, "t1")
	gs := ok(w.f.h.DescribeGameSessions(w.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(st[0].GS.GameSessionID)}))(t).GameSessions[0]
	var md matchmakerDataDoc
	must(t, json.Unmarshal([]byte(*gs.MatchmakerData), &md))
	if md.AutoTicket == nil || api.Deref(md.AutoMode) != "AUTOMATIC" {
		t.Fatalf("MatchmakerData %s", *gs.MatchmakerData)
	}
	w.ticket(t, "t3", "carol", 100, "ctf", map[string]int32{"custom-a": 20})
	if got := w.status(t, *md.AutoTicket, "t3"); got != *md.AutoTicket+":COMPLETED t3:COMPLETED" {
		t.Fatalf("automatic backfill: %s", got)
	}
	// Bob leaves: a new automatic backfill ticket holds the players still in the game.
	bob := w.describeTicket(t, "t2").GameSessionConnectionInfo.MatchedPlayerSessions[0].PlayerSessionId
	must(t, w.f.svc.RemovePlayerSession(w.f.ctx, st[0].Ref, st[0].GS.GameSessionID, *bob))
	gs = ok(w.f.h.DescribeGameSessions(w.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(st[0].GS.GameSessionID)}))(t).GameSessions[0]
	must(t, json.Unmarshal([]byte(*gs.MatchmakerData), &md))
	next := w.describeTicket(t, *md.AutoTicket)
	var names []string
	for _, p := range next.Players {
		names = append(names, *p.PlayerId)
	}
	if *next.Status != api.MatchmakingConfigurationStatusQueued || strings.Join(names, " ") != "alice carol" {
		t.Fatalf("after bob left: ticket %s %s with %v", *next.TicketId, *next.Status, names)
	}
	// The game session ends: its backfill ticket is cancelled.
	ok(w.f.h.TerminateGameSession(w.f.ctx, &api.TerminateGameSessionInput{GameSessionId: gs.GameSessionId,
		TerminationMode: ptr(api.TerminationModeForceTerminate)}))(t)
	if got := w.status(t, *md.AutoTicket); got != *md.AutoTicket+":CANCELLED" {
		t.Fatalf("after the game session ended: %s", got)
	}
}

func TestBackfillOfAnEndedSessionRequeuesTheNewPlayers(t *testing.T) {
	w := queuedWorld(t, duelRules(true), nil)
	st := w.activeMatch(t)
	players := []api.Player{mmPlayer("alice", 100, "ctf", map[string]int32{"custom-a": 20}), mmPlayer("bob", 100, "ctf", map[string]int32{"custom-a": 20})}
	players[0].Team, players[1].Team = api.String("red"), api.String("blue")
	bf := ok(w.f.h.StartMatchBackfill(w.f.ctx, &api.StartMatchBackfillInput{ConfigurationName: api.String("cfg"),
		GameSessionArn: api.String(st[0].GS.GameSessionID), Players: players}))(t).MatchmakingTicket
	w.status(t, *bf.TicketId)
	// The session fills up behind matchmaking's back, so the backfill match cannot join it.
	for i := range 2 {
		ok(w.f.h.CreatePlayerSession(w.f.ctx, &api.CreatePlayerSessionInput{GameSessionId: api.String(st[0].GS.GameSessionID), PlayerId: api.String(fmt.Sprint("walk-in-", i))}))(t)
	}
	w.ticket(t, "t3", "carol", 100, "ctf", map[string]int32{"custom-a": 20})
	if got := w.status(t, *bf.TicketId, "t3"); got != *bf.TicketId+":FAILED t3:SEARCHING" {
		t.Fatalf("backfill into a full session: %s", got)
	}
}

func TestMatchmakingFollowsTheConfigurationsRuleSet(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	w.ticket(t, "t1", "alice", 100, "dm", nil)
	w.ticket(t, "t2", "bob", 300, "dm", nil) // too far in skill for CloseSkill
	if got := w.status(t, "t1", "t2"); got != "t1:SEARCHING t2:SEARCHING" {
		t.Fatalf("under duel: %s", got)
	}
	loose := `{"ruleLanguageVersion": "1.0",
	  "playerAttributes": [{"name": "skill", "type": "number", "default": 10}, {"name": "mode", "type": "string", "default": "ctf"}],
	  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 1}, {"name": "blue", "minPlayers": 1, "maxPlayers": 1}],
	  "rules": [{"name": "SameMode", "type": "comparison", "measurements": ["flatten(teams[*].players.attributes[mode])"], "operation": "="}]}`
	w.useRuleSet(t, "loose", loose)
	if got := w.status(t, "t1", "t2"); got != "t1:COMPLETED t2:COMPLETED" {
		t.Fatalf("the searching tickets moved to the new rule set: %s", got)
	}
	// A player without mode has the rule set's default, ctf.
	ok(w.f.h.StartMatchmaking(w.f.ctx, &api.StartMatchmakingInput{TicketId: api.String("t3"), ConfigurationName: api.String("cfg"),
		Players: []api.Player{{PlayerId: api.String("dave")}}}))(t)
	w.ticket(t, "t4", "frank", 100, "dm", nil)
	if got := w.status(t, "t3", "t4"); got != "t3:SEARCHING t4:SEARCHING" {
		t.Fatalf("ctf by default against dm: %s", got)
	}
	w.ticket(t, "t5", "erin", 100, "ctf", nil)
	if got := w.status(t, "t3", "t4", "t5"); got != "t3:COMPLETED t4:SEARCHING t5:COMPLETED" {
		t.Fatalf("ctf by default against ctf: %s", got)
	}
	// A rule set that requires what frank's ticket lacks fails the ticket.
	w.useRuleSet(t, "strict", strings.Replace(loose, `{"name": "skill", "type": "number", "default": 10}`, `{"name": "rank", "type": "number"}`, 1))
	if got := w.status(t, "t4"); got != "t4:FAILED" {
		t.Fatalf("under a rule set frank's ticket does not meet: %s", got)
	}
}

// useRuleSet creates a rule set and points the configuration at it.
func (w *ticketWorld) useRuleSet(t *testing.T, name, body string) {
	t.Helper()
	ok(w.f.h.CreateMatchmakingRuleSet(w.f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String(name), RuleSetBody: api.String(body)}))(t)
	ok(w.f.h.UpdateMatchmakingConfiguration(w.f.ctx, &api.UpdateMatchmakingConfigurationInput{Name: api.String("cfg"), RuleSetName: api.String(name)}))(t)
}

// activeMatch matches alice and bob (tickets t1 and t2) into a game session its process
// activates, and returns the CreateGameSession push.
func (w *ticketWorld) activeMatch(t *testing.T) []startPush {
	t.Helper()
	w.ticket(t, "t1", "alice", 100, "ctf", map[string]int32{"custom-a": 20})
	w.ticket(t, "t2", "bob", 100, "ctf", map[string]int32{"custom-a": 20})
	w.status(t, "t1")
	st := w.n.started()
	if len(st) != 1 {
		t.Fatalf("%d games started for one match", len(st))
	}
	must(t, w.f.svc.ActivateGameSession(w.f.ctx, st[0].Ref, st[0].GS.GameSessionID))
	w.status(t, "t1")
	return st
}

func TestMatchmakerCatchesUpWithLostNotes(t *testing.T) {
	w := newTicketWorld(t, duelRules(false), nil)
	w.status(t) // the matchmaker's first load
	w.ticket(t, "t1", "alice", 100, "ctf", nil)
	must(t, w.f.store.Update(w.f.ctx, func(tx store.Tx) error { // the note is lost
		recs, err := tx.List(kindOutbox, store.ListOptions{Parent: MatchmakerAddress})
		for _, r := range recs {
			err = errors.Join(err, tx.Delete(kindOutbox, r.ID))
		}
		return err
	}))
	if got := w.status(t, "t1"); got != "t1:QUEUED" {
		t.Fatalf("without its note: %s", got)
	}
	w.f.clock.Advance(catchUpInterval)
	if got := w.status(t, "t1"); got != "t1:SEARCHING" {
		t.Fatalf("after the catch-up: %s", got)
	}
}

func TestActionsAreLoggedOnceCommitted(t *testing.T) {
	var buf strings.Builder
	w := newTicketWorld(t, duelRules(false), nil)
	w.f.svc.log = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w.ticket(t, "t1", "alice", 100, "ctf", nil)
	w.ticket(t, "t2", "bob", 100, "ctf", nil)
	w.status(t, "t1")
	for _, want := range []string{`msg="match proposed"`, `msg="match completed"`, "configuration=cfg"} {
		if strings.Count(buf.String(), want) != 1 {
			t.Errorf("%s logged %d times: %s", want, strings.Count(buf.String(), want), buf.String())
		}
	}
	// A transaction that fails logs nothing.
	buf.Reset()
	_, err := w.f.h.StopMatchmaking(w.f.ctx, &api.StopMatchmakingInput{TicketId: api.String("t1")})
	wantCode(t, err, api.InvalidRequestException)
	if buf.Len() != 0 {
		t.Errorf("a failed call logged: %s", buf.String())
	}
}
