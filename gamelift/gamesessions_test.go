package gamelift

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// createSession creates a game session on h's fleet in custom-loc-1.
func (h *host) createSession(t *testing.T, token string, max int32) *api.GameSession {
	t.Helper()
	in := &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"),
		MaximumPlayerSessionCount: api.Int32(max), Name: api.String("match")}
	if token != "" {
		in.IdempotencyToken = api.String(token)
	}
	return ok(h.f.h.CreateGameSession(h.f.ctx, in))(t).GameSession
}

func (h *host) session(t *testing.T, id string) *api.GameSession {
	t.Helper()
	out := ok(h.f.h.DescribeGameSessions(h.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(id)}))(t)
	return &out.GameSessions[0]
}

func (h *host) players(t *testing.T, gs string) map[string]string {
	t.Helper()
	out := ok(h.f.h.DescribePlayerSessions(h.f.ctx, &api.DescribePlayerSessionsInput{GameSessionId: api.String(gs)}))(t)
	m := map[string]string{}
	for _, p := range out.PlayerSessions {
		m[*p.PlayerId] = string(*p.Status)
	}
	return m
}

func (h *host) stepSessions(t *testing.T) {
	t.Helper()
	if err := h.f.svc.SessionMonitor().Step(h.f.ctx); err != nil {
		t.Fatal(err)
	}
}

func TestGameSessionLifecycle(t *testing.T) {
	h := newHost(t)
	p1 := h.ready(t, "p1", 7001)
	gs := h.createSession(t, "match-1", 3)
	want := "arn:aws:gamelift:" + testRegion + "::gamesession/" + h.fleet + "/custom-loc-1/match-1"
	if *gs.GameSessionId != want || *gs.Status != api.GameSessionStatusActivating || *gs.Port != 7001 || *gs.IpAddress != "10.0.0.7" {
		t.Fatalf("CreateGameSession = %s %s port %d ip %s", *gs.GameSessionId, *gs.Status, *gs.Port, *gs.IpAddress)
	}
	if st := h.n.started(); len(st) != 1 || st[0].Ref != p1 || st[0].GS.GameSessionID != want || st[0].GS.MaximumPlayerSessionCount != 3 {
		t.Fatalf("CreateGameSession pushes: %+v", st)
	}
	// The same token answers the same session; other parameters are a mismatch.
	if again := h.createSession(t, "match-1", 3); *again.GameSessionId != want || len(h.n.started()) != 1 {
		t.Errorf("idempotent repeat gave %s and %d pushes", *again.GameSessionId, len(h.n.started()))
	}
	_, err := h.f.h.CreateGameSession(h.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"),
		MaximumPlayerSessionCount: api.Int32(9), IdempotencyToken: api.String("match-1")})
	wantCode(t, err, api.IdempotentParameterMismatchException)
	// The only process is busy.
	_, err = h.f.h.CreateGameSession(h.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"),
		MaximumPlayerSessionCount: api.Int32(1)})
	wantCode(t, err, api.FleetCapacityExceededException)

	// Players cannot join before activation.
	_, err = h.f.h.CreatePlayerSession(h.f.ctx, &api.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId, PlayerId: api.String("a")})
	wantCode(t, err, api.InvalidGameSessionStatusException)
	if err := h.f.svc.ActivateGameSession(h.f.ctx, p1, want); err != nil {
		t.Fatal(err)
	}
	if s := h.session(t, want); *s.Status != api.GameSessionStatusActive {
		t.Fatalf("after ActivateGameSession: %s", *s.Status)
	}
	ps := ok(h.f.h.CreatePlayerSessions(h.f.ctx, &api.CreatePlayerSessionsInput{GameSessionId: gs.GameSessionId,
		PlayerIds: []string{"a", "b", "c"}, PlayerDataMap: map[string]string{"a": "team-red", "zz": "ignored"}}))(t).PlayerSessions
	if len(ps) != 3 || api.Deref(ps[0].PlayerData) != "team-red" || *ps[0].Status != api.PlayerSessionStatusReserved {
		t.Fatalf("CreatePlayerSessions = %+v", ps)
	}
	_, err = h.f.h.CreatePlayerSession(h.f.ctx, &api.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId, PlayerId: api.String("d")})
	wantCode(t, err, api.GameSessionFullException)

	// a is accepted and leaves; b is accepted; c never shows up and times out.
	must(t, h.f.svc.AcceptPlayerSession(h.f.ctx, p1, want, *ps[0].PlayerSessionId))
	wantCode(t, h.f.svc.AcceptPlayerSession(h.f.ctx, p1, want, *ps[0].PlayerSessionId), api.InvalidRequestException)
	must(t, h.f.svc.RemovePlayerSession(h.f.ctx, p1, want, *ps[0].PlayerSessionId))
	must(t, h.f.svc.AcceptPlayerSession(h.f.ctx, p1, want, *ps[1].PlayerSessionId))
	h.f.clock.Advance(59 * time.Second)
	h.stepSessions(t)
	if got := h.players(t, want); got["c"] != "RESERVED" {
		t.Fatalf("after 59 s: %v", got)
	}
	h.f.clock.Advance(2 * time.Second)
	h.stepSessions(t)
	got := h.players(t, want)
	if got["a"] != "COMPLETED" || got["b"] != "ACTIVE" || got["c"] != "TIMEDOUT" {
		t.Fatalf("player sessions: %v", got)
	}
	if n := *h.session(t, want).CurrentPlayerSessionCount; n != 1 {
		t.Errorf("CurrentPlayerSessionCount = %d, want 1", n)
	}

	// DENY_ALL from the game server closes the session to new players.
	must(t, h.f.svc.UpdatePlayerSessionCreationPolicy(h.f.ctx, p1, want, "DENY_ALL"))
	_, err = h.f.h.CreatePlayerSession(h.f.ctx, &api.CreatePlayerSessionInput{GameSessionId: gs.GameSessionId, PlayerId: api.String("e")})
	wantCode(t, err, api.GameSessionFullException)

	// The process ends: the session is TERMINATED and b's player session COMPLETED.
	must(t, h.f.svc.ServerProcessEnding(h.f.ctx, p1))
	s := h.session(t, want)
	if *s.Status != api.GameSessionStatusTerminated || s.TerminationTime == nil || h.players(t, want)["b"] != "COMPLETED" {
		t.Fatalf("after ProcessEnding: %s, players %v", *s.Status, h.players(t, want))
	}

	// Thirty days later the records are purged and the token can be used again.
	h.f.clock.Advance(DefaultSessionRetention + time.Minute)
	h.stepSessions(t)
	_, err = h.f.h.DescribeGameSessions(h.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: api.String(want)})
	wantCode(t, err, api.NotFoundException)
	_, err = h.f.h.DescribePlayerSessions(h.f.ctx, &api.DescribePlayerSessionsInput{PlayerId: api.String("b")})
	if out, _ := h.f.h.DescribePlayerSessions(h.f.ctx, &api.DescribePlayerSessionsInput{PlayerId: api.String("b")}); err != nil || len(out.PlayerSessions) != 0 {
		t.Errorf("player b after the purge: %v %+v", err, out)
	}
	h.token = h.f.token(t, h.fleet, "host-1") // the first one expired long ago
	h.ready(t, "p2", 7002)
	if gs2 := h.createSession(t, "match-1", 3); *gs2.Status != api.GameSessionStatusActivating {
		t.Errorf("token after the purge: %+v", gs2)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestActivationTimeoutAndConcurrentActivations(t *testing.T) {
	h := newHost(t)
	ok(h.f.h.UpdateRuntimeConfiguration(h.f.ctx, &api.UpdateRuntimeConfigurationInput{FleetId: api.String(h.fleet),
		RuntimeConfiguration: &api.RuntimeConfiguration{GameSessionActivationTimeoutSeconds: api.Int32(30),
			MaxConcurrentGameSessionActivations: api.Int32(1),
			ServerProcesses:                     []api.ServerProcess{{LaunchPath: api.String("/game"), ConcurrentExecutions: api.Int32(2)}}}}))(t)
	h.ready(t, "p1", 7001)
	h.ready(t, "p2", 7002)
	gs := h.createSession(t, "", 4)
	_, err := h.f.h.CreateGameSession(h.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"),
		MaximumPlayerSessionCount: api.Int32(1)})
	wantCode(t, err, api.FleetCapacityExceededException) // host-1 already has one session activating
	h.f.clock.Advance(31 * time.Second)
	h.stepSessions(t)
	if s := h.session(t, *gs.GameSessionId); *s.Status != api.GameSessionStatusTerminated {
		t.Fatalf("after the activation timeout: %s", *s.Status)
	}
	if codes := strings.Join(h.f.eventCodes(t, h.fleet), " "); !strings.Contains(codes, "GAME_SESSION_ACTIVATION_TIMEOUT") {
		t.Errorf("events: %s", codes)
	}
	if p := h.n.pushes(); len(p) != 1 {
		t.Errorf("TerminateProcess pushes after the timeout: %+v", p)
	}
	h.createSession(t, "", 1) // the other process is free and nothing is activating now
}

func TestTerminateGameSessionModes(t *testing.T) {
	h := newHost(t)
	p1, p2 := h.ready(t, "p1", 7001), h.ready(t, "p2", 7002)
	a, b := h.createSession(t, "a", 2), h.createSession(t, "b", 2)
	hostOf := func(gs *api.GameSession) ProcessRef {
		if *gs.Port == 7001 {
			return p1
		}
		return p2
	}
	for _, gs := range []*api.GameSession{a, b} {
		must(t, h.f.svc.ActivateGameSession(h.f.ctx, hostOf(gs), *gs.GameSessionId))
	}
	trig := api.TerminationModeTriggerOnProcessTerminate
	out := ok(h.f.h.TerminateGameSession(h.f.ctx, &api.TerminateGameSessionInput{GameSessionId: a.GameSessionId, TerminationMode: &trig}))(t)
	if *out.GameSession.Status != api.GameSessionStatusTerminating {
		t.Fatalf("TRIGGER_ON_PROCESS_TERMINATE: %s", *out.GameSession.Status)
	}
	must(t, h.f.svc.ServerProcessEnding(h.f.ctx, hostOf(a)))
	s := h.session(t, *a.GameSessionId)
	if *s.Status != api.GameSessionStatusTerminated || *s.StatusReason != api.GameSessionStatusReasonTriggeredOnProcessTerminate {
		t.Fatalf("after ProcessEnding: %s %v", *s.Status, s.StatusReason)
	}
	force := api.TerminationModeForceTerminate
	out = ok(h.f.h.TerminateGameSession(h.f.ctx, &api.TerminateGameSessionInput{GameSessionId: b.GameSessionId, TerminationMode: &force}))(t)
	if *out.GameSession.Status != api.GameSessionStatusTerminated || *out.GameSession.StatusReason != api.GameSessionStatusReasonForceTerminated {
		t.Fatalf("FORCE_TERMINATE: %s", *out.GameSession.Status)
	}
	_, err := h.f.h.TerminateGameSession(h.f.ctx, &api.TerminateGameSessionInput{GameSessionId: b.GameSessionId, TerminationMode: &force})
	wantCode(t, err, api.InvalidGameSessionStatusException)
	if p := h.n.pushes(); len(p) != 2 {
		t.Errorf("TerminateProcess pushes: %+v", p)
	}
}

func TestSearchGameSessions(t *testing.T) {
	h := newHost(t)
	for i := range 25 {
		ref := h.ready(t, fmt.Sprintf("p%02d", i), 7000+i)
		gs := ok(h.f.h.CreateGameSession(h.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet),
			Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(int32(i % 5)),
			GameProperties: []api.GameProperty{{Key: api.String("mode"), Value: api.String([]string{"ctf", "dm"}[i%2])}}}))(t).GameSession
		if i != 24 { // the last stays ACTIVATING and is never found
			must(t, h.f.svc.ActivateGameSession(h.f.ctx, ref, *gs.GameSessionId))
		}
	}
	search := func(filter, sort string, next *string) *api.SearchGameSessionsOutput {
		in := &api.SearchGameSessionsInput{FleetId: api.String(h.fleet), Limit: api.Int32(100), NextToken: next}
		if filter != "" {
			in.FilterExpression = api.String(filter)
		}
		if sort != "" {
			in.SortExpression = api.String(sort)
		}
		return ok(h.f.h.SearchGameSessions(h.f.ctx, in))(t)
	}
	first := search("", "", nil)
	second := search("", "", first.NextToken)
	if len(first.GameSessions) != 20 || len(second.GameSessions) != 4 || second.NextToken != nil {
		t.Fatalf("pages of %d and %d", len(first.GameSessions), len(second.GameSessions))
	}
	hits := search("gameSessionProperties.mode = 'ctf' AND maximumSessions >= 3", "maximumSessions DESC", nil).GameSessions
	if len(hits) != 4 || *hits[0].MaximumPlayerSessionCount != 4 || *hits[3].MaximumPlayerSessionCount != 3 {
		t.Fatalf("filtered search: %d hits", len(hits))
	}
	_, err := h.f.h.SearchGameSessions(h.f.ctx, &api.SearchGameSessionsInput{FleetId: api.String(h.fleet), FilterExpression: api.String("players = 1")})
	if msg := wantCode(t, err, api.InvalidRequestException); !strings.Contains(msg, "FilterExpression") {
		t.Errorf("message %q does not say what is wrong", msg)
	}
	u := ok(h.f.h.DescribeFleetUtilization(h.f.ctx, &api.DescribeFleetUtilizationInput{FleetIds: []string{h.fleet}}))(t).FleetUtilization[0]
	if *u.ActiveGameSessionCount != 24 || *u.MaximumPlayerSessionCount != 46 {
		t.Errorf("utilization: %d sessions, %d max players", *u.ActiveGameSessionCount, *u.MaximumPlayerSessionCount)
	}
}

func TestCreateGameSessionErrors(t *testing.T) {
	h := newHost(t)
	h.ready(t, "p1", 7001)
	f := h.f
	term := f.createAlias(t, "closed", &api.RoutingStrategy{Type: routingType(api.RoutingStrategyTypeTerminal), Message: api.String("gone fishing")})
	_, err := f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{AliasId: term.AliasId, MaximumPlayerSessionCount: api.Int32(1)})
	if msg := wantCode(t, err, api.TerminalRoutingStrategyException); msg != "gone fishing" {
		t.Errorf("message %q", msg)
	}
	_, err = f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{FleetId: api.String("fleet-nope"), Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(1)})
	wantCode(t, err, api.NotFoundException)
	_, err = f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), MaximumPlayerSessionCount: api.Int32(1)})
	wantCode(t, err, api.InvalidRequestException) // Anywhere fleets need a Location
	_, err = f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(201)})
	wantCode(t, err, api.InvalidRequestException)
	simple := f.createAlias(t, "open", &api.RoutingStrategy{Type: routingType(api.RoutingStrategyTypeSimple), FleetId: api.String(h.fleet)})
	in := &api.CreateGameSessionInput{AliasId: simple.AliasId, Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(1), CreatorId: api.String("alice")}
	ok(f.h.CreateGameSession(f.ctx, in))(t)
	h.ready(t, "p2", 7002)
	_, err = f.h.CreateGameSession(f.ctx, in)
	wantCode(t, err, api.LimitExceededException) // one per CreatorId per second without a policy
	f.clock.Advance(time.Second)
	ok(f.h.CreateGameSession(f.ctx, in))(t)
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(h.fleet)}))(t)
	_, err = f.h.CreateGameSession(f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet), Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(1)})
	wantCode(t, err, api.InvalidFleetStatusException)
}

func routingType(t api.RoutingStrategyType) *api.RoutingStrategyType { return &t }
