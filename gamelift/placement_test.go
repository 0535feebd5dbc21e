package gamelift

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// placeWorld is two Anywhere fleets: A in custom-a and custom-b, B in custom-b and custom-c, each
// location a compute named after it; processes are added per test.
type placeWorld struct {
	f      *fixture
	n      *recNotifier
	a, b   string
	tokens map[string]string
}

func newPlaceWorld(t *testing.T) *placeWorld {
	f, n := newHostFixture(t)
	for _, l := range []string{"custom-a", "custom-b", "custom-c"} {
		f.location(t, l)
	}
	w := &placeWorld{f: f, n: n, tokens: map[string]string{}}
	w.a = w.fleet(t, "fleet-a", "custom-a", "custom-b")
	w.b = w.fleet(t, "fleet-b", "custom-b", "custom-c")
	return w
}

func (w *placeWorld) fleet(t *testing.T, name string, locs ...string) string {
	t.Helper()
	out := ok(w.f.h.CreateFleet(w.f.ctx, &api.CreateFleetInput{Name: api.String(name), ComputeType: anywhere(),
		Locations: locations(locs...)}))(t)
	id := *out.FleetAttributes.FleetId
	for _, l := range locs {
		ok(w.f.h.RegisterCompute(w.f.ctx, &api.RegisterComputeInput{FleetId: api.String(id), ComputeName: api.String(l),
			IpAddress: api.String("10.0.0.1"), Location: api.String(l)}))(t)
		w.tokens[id+"/"+l] = w.f.token(t, id, l)
	}
	return id
}

// ready starts an ACTIVE process pid of fleet in loc.
func (w *placeWorld) ready(t *testing.T, fleet, loc, pid string) ProcessRef {
	t.Helper()
	ref := ProcessRef{FleetID: fleet, ComputeName: loc, ProcessID: pid}
	must(t, w.f.svc.AuthenticateProcess(w.f.ctx, ref, w.tokens[fleet+"/"+loc]))
	must(t, w.f.svc.ActivateServerProcess(w.f.ctx, ref, ProcessActivation{Port: 7000, SdkVersion: "5.6.0", SdkLanguage: "Go"}))
	return ref
}

// queue creates, through CreateGameSessionQueue, a queue over both fleets (A first) with the
// given changes.
func (w *placeWorld) queue(t *testing.T, name string, change func(*api.CreateGameSessionQueueInput)) {
	t.Helper()
	in := &api.CreateGameSessionQueueInput{Name: api.String(name), TimeoutInSeconds: api.Int32(60), CustomEventData: api.String("ced"),
		Destinations: []api.GameSessionQueueDestination{{DestinationArn: api.String(w.f.svc.arn(arnFleet, w.a))},
			{DestinationArn: api.String(w.f.svc.arn(arnFleet, w.b))}}}
	if change != nil {
		change(in)
	}
	ok(w.f.h.CreateGameSessionQueue(w.f.ctx, in))(t)
}

// priorities is a PriorityConfiguration.
func priorities(order []api.PriorityType, locs ...string) *api.PriorityConfiguration {
	return &api.PriorityConfiguration{PriorityOrder: order, LocationOrder: locs}
}

func (w *placeWorld) start(t *testing.T, in *api.StartGameSessionPlacementInput) *api.GameSessionPlacement {
	t.Helper()
	if in.MaximumPlayerSessionCount == nil {
		in.MaximumPlayerSessionCount = api.Int32(4)
	}
	return ok(w.f.h.StartGameSessionPlacement(w.f.ctx, in))(t).GameSessionPlacement
}

func (w *placeWorld) describe(t *testing.T, id string) *api.GameSessionPlacement {
	t.Helper()
	return ok(w.f.h.DescribeGameSessionPlacement(w.f.ctx, &api.DescribeGameSessionPlacementInput{PlacementId: api.String(id)}))(t).GameSessionPlacement
}

func (w *placeWorld) step(t *testing.T) {
	t.Helper()
	must(t, w.f.svc.PlacementLoop().Step(w.f.ctx))
}

// where reports the fleet and location of a placement's game session.
func (w *placeWorld) where(t *testing.T, p *api.GameSessionPlacement) (fleet, loc string) {
	t.Helper()
	if p.GameSessionArn == nil {
		t.Fatalf("placement %s has no game session (status %s)", *p.PlacementId, *p.Status)
	}
	d, err := w.f.svc.readSession(w.f.ctx, *p.GameSessionArn)
	must(t, err)
	return d.FleetID, d.Location
}

func latencies(player string, ms map[string]float32) []api.PlayerLatency {
	var out []api.PlayerLatency
	for loc, v := range ms {
		out = append(out, api.PlayerLatency{PlayerId: api.String(player), RegionIdentifier: api.String(loc), LatencyInMilliseconds: api.Float32(v)})
	}
	return out
}

// events returns the events in the outbox other than fleet events, with their targets.
func (w *placeWorld) events(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range w.allEvents(t) {
		if e["detail-type"] != fleetEventType {
			out = append(out, e)
		}
	}
	return out
}

// allEvents returns every event in the outbox, with its target.
func (w *placeWorld) allEvents(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	must(t, w.f.store.View(w.f.ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindOutbox, store.ListOptions{Parent: EventsAddress})
		msgs, _ := messages(recs)
		for _, m := range msgs {
			var n EventNotice
			var env map[string]any
			if json.Unmarshal(m.Body, &n) != nil || json.Unmarshal(n.Event, &env) != nil {
				t.Fatalf("undecodable event %s", m.Body)
			}
			env["target"] = n.Target
			out = append(out, env)
		}
		return err
	}))
	return out
}

// eventTypes lists the types of the placement events in the outbox, oldest first.
func (w *placeWorld) eventTypes(t *testing.T) string {
	t.Helper()
	var types []any
	for _, e := range w.events(t) {
		types = append(types, e["detail"].(map[string]any)["type"])
	}
	return fmt.Sprint(types)
}

func TestPlacementLatencyChoiceAndFulfilment(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", func(q *api.CreateGameSessionQueueInput) {
		q.NotificationTarget = api.String("arn:aws:sns:us-west-2:123:placements")
	})
	for _, c := range [][2]string{{w.a, "custom-a"}, {w.a, "custom-b"}, {w.b, "custom-b"}, {w.b, "custom-c"}} {
		w.ready(t, c[0], c[1], "p-"+c[0][len(c[0])-4:]+"-"+c[1])
	}
	lat := append(latencies("alice", map[string]float32{"custom-a": 80, "custom-b": 30, "custom-c": 50}),
		latencies("bob", map[string]float32{"custom-a": 90, "custom-b": 40, "custom-c": 20})...)
	p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl-1"), GameSessionQueueName: api.String("q"),
		PlayerLatencies: lat, GameSessionName: api.String("duel"),
		DesiredPlayerSessions: []api.DesiredPlayerSession{{PlayerId: api.String("alice"), PlayerData: api.String("a-data")}, {PlayerId: api.String("bob")}}})
	if *p.Status != api.GameSessionPlacementStatePending {
		t.Fatalf("status %s, want PENDING", *p.Status)
	}
	// custom-b and custom-c tie at 35 ms on average; the destination order picks fleet A's custom-b.
	if fleet, loc := w.where(t, p); fleet != w.a || loc != "custom-b" {
		t.Fatalf("placed on %s %s, want fleet A in custom-b", fleet, loc)
	}
	st := w.n.started()
	if len(st) != 1 || st[0].GS.GameSessionID != *p.GameSessionArn || st[0].GS.Name != "duel" {
		t.Fatalf("CreateGameSession pushes %+v", st)
	}
	must(t, w.f.svc.ActivateGameSession(w.f.ctx, st[0].Ref, *p.GameSessionArn))
	p = w.describe(t, "pl-1")
	if *p.Status != api.GameSessionPlacementStateFulfilled || p.EndTime == nil || *p.GameSessionRegion != "custom-b" || len(p.PlacedPlayerSessions) != 2 {
		t.Fatalf("after activation: %s end %v region %v placed %d", *p.Status, p.EndTime, p.GameSessionRegion, len(p.PlacedPlayerSessions))
	}
	gs := ok(w.f.h.DescribeGameSessions(w.f.ctx, &api.DescribeGameSessionsInput{GameSessionId: p.GameSessionArn}))(t).GameSessions[0]
	if *gs.CurrentPlayerSessionCount != 2 {
		t.Errorf("game session has %d player sessions, want 2", *gs.CurrentPlayerSessionCount)
	}
	ps := ok(w.f.h.DescribePlayerSessions(w.f.ctx, &api.DescribePlayerSessionsInput{PlayerSessionId: p.PlacedPlayerSessions[0].PlayerSessionId}))(t).PlayerSessions[0]
	if *ps.Status != api.PlayerSessionStatusReserved || *ps.PlayerId != "alice" || *ps.PlayerData != "a-data" {
		t.Errorf("desired player session %s %s %v", *ps.Status, *ps.PlayerId, ps.PlayerData)
	}
	ev := w.events(t)
	if len(ev) != 1 || ev[0]["detail-type"] != "GameLift Queue Placement Event" || ev[0]["target"] != "arn:aws:sns:us-west-2:123:placements" {
		t.Fatalf("events %+v", ev)
	}
	d := ev[0]["detail"].(map[string]any)
	if d["type"] != "PlacementFulfilled" || d["placementId"] != "pl-1" || d["gameSessionArn"] != *p.GameSessionArn ||
		d["port"] != "7000" || d["customEventData"] != "ced" || len(d["placedPlayerSessions"].([]any)) != 2 {
		t.Errorf("PlacementFulfilled detail %+v", d)
	}
}

func TestPlacementPriorityOrders(t *testing.T) {
	cases := []struct {
		name     string
		change   func(*api.CreateGameSessionQueueInput)
		fleet    int // 0 = A, 1 = B
		location string
	}{
		{"default without latency: destination, then alphabetical", nil, 0, "custom-a"},
		{"LOCATION first with a location order", func(q *api.CreateGameSessionQueueInput) {
			q.PriorityConfiguration = priorities([]api.PriorityType{"LOCATION", "DESTINATION"}, "custom-c", "custom-a")
		}, 1, "custom-c"},
		{"DESTINATION then LOCATION", func(q *api.CreateGameSessionQueueInput) {
			q.PriorityConfiguration = priorities([]api.PriorityType{"DESTINATION", "LOCATION"}, "custom-b")
		}, 0, "custom-b"},
		{"filter", func(q *api.CreateGameSessionQueueInput) {
			q.FilterConfiguration = &api.FilterConfiguration{AllowedLocations: []string{"custom-c"}}
		}, 1, "custom-c"},
		{"destination order reversed", func(q *api.CreateGameSessionQueueInput) {
			q.Destinations[0], q.Destinations[1] = q.Destinations[1], q.Destinations[0]
		}, 1, "custom-b"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			w := newPlaceWorld(t)
			w.queue(t, "q", tc.change)
			for _, c := range [][2]string{{w.a, "custom-a"}, {w.a, "custom-b"}, {w.b, "custom-b"}, {w.b, "custom-c"}} {
				w.ready(t, c[0], c[1], fmt.Sprintf("p%d-%s-%s", i, c[0][len(c[0])-4:], c[1]))
			}
			p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q")})
			fleet, loc := w.where(t, p)
			if want := []string{w.a, w.b}[tc.fleet]; fleet != want || loc != tc.location {
				t.Errorf("placed on %s %s, want %s %s", fleet, loc, want, tc.location)
			}
		})
	}
}

func TestPlacementFallsBackWhenFirstChoiceIsFull(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", nil)
	w.ready(t, w.b, "custom-c", "only")
	p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q")})
	if fleet, loc := w.where(t, p); fleet != w.b || loc != "custom-c" {
		t.Errorf("placed on %s %s, want the one free process (fleet B, custom-c)", fleet, loc)
	}
}

func TestPlacementLatencyPolicyRelaxes(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", func(q *api.CreateGameSessionQueueInput) {
		q.PlayerLatencyPolicies = []api.PlayerLatencyPolicy{{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(400)},
			{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(100), PolicyDurationSeconds: api.Int32(10)}}
	})
	w.ready(t, w.b, "custom-c", "far")
	lat := latencies("alice", map[string]float32{"custom-a": 40, "custom-c": 300})
	p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q"), PlayerLatencies: lat})
	if p.GameSessionArn != nil {
		t.Fatal("placed beyond the 100 ms policy in force")
	}
	w.f.clock.Advance(9 * time.Second)
	w.step(t)
	if w.describe(t, "pl").GameSessionArn != nil {
		t.Fatal("placed before the first policy ran out")
	}
	w.f.clock.Advance(2 * time.Second)
	w.step(t)
	if fleet, loc := w.where(t, w.describe(t, "pl")); fleet != w.b || loc != "custom-c" {
		t.Errorf("placed on %s %s after the policy relaxed", fleet, loc)
	}
}

func TestPlacementMissingLatencyCountsAsTooFar(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", func(q *api.CreateGameSessionQueueInput) {
		q.PlayerLatencyPolicies = []api.PlayerLatencyPolicy{{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(1000)}}
	})
	w.ready(t, w.a, "custom-a", "no-data")
	w.ready(t, w.b, "custom-c", "data")
	lat := append(latencies("alice", map[string]float32{"custom-a": 10, "custom-c": 90}), latencies("bob", map[string]float32{"custom-c": 80})...)
	p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q"), PlayerLatencies: lat})
	if _, loc := w.where(t, p); loc != "custom-c" {
		t.Errorf("placed in %s, where bob reported no latency", loc)
	}
}

func TestPlacementTimesOutAndIsCancelled(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", nil)
	w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("late"), GameSessionQueueName: api.String("q")})
	w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("stopped"), GameSessionQueueName: api.String("q")})
	stopped := ok(w.f.h.StopGameSessionPlacement(w.f.ctx, &api.StopGameSessionPlacementInput{PlacementId: api.String("stopped")}))(t).GameSessionPlacement
	if *stopped.Status != api.GameSessionPlacementStateCancelled || stopped.EndTime == nil {
		t.Fatalf("stopped placement is %s", *stopped.Status)
	}
	w.f.clock.Advance(59 * time.Second)
	w.step(t)
	if s := *w.describe(t, "late").Status; s != api.GameSessionPlacementStatePending {
		t.Fatalf("status %s before the timeout", s)
	}
	w.f.clock.Advance(time.Second)
	w.step(t)
	if s := *w.describe(t, "late").Status; s != api.GameSessionPlacementStateTimedOut {
		t.Fatalf("status %s after the timeout", s)
	}
	if types := w.eventTypes(t); types != "[PlacementCancelled PlacementTimedOut]" {
		t.Errorf("event types %s", types)
	}
	_, err := w.f.h.StopGameSessionPlacement(w.f.ctx, &api.StopGameSessionPlacementInput{PlacementId: api.String("late")})
	wantCode(t, err, api.InvalidRequestException)
}

func TestPlacementFailsWhenItsSessionNeverActivates(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", nil)
	w.ready(t, w.a, "custom-a", "silent")
	p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q")})
	if p.GameSessionArn == nil {
		t.Fatal("not placed")
	}
	_, err := w.f.h.StopGameSessionPlacement(w.f.ctx, &api.StopGameSessionPlacementInput{PlacementId: api.String("pl")})
	wantCode(t, err, api.InvalidRequestException) // it has a game session
	w.f.clock.Advance(DefaultGameSessionActivationTimeout)
	must(t, w.f.svc.SessionMonitor().Step(w.f.ctx))
	if got := w.describe(t, "pl"); *got.Status != api.GameSessionPlacementStateFailed || got.GameSessionArn != nil {
		t.Errorf("after the activation timeout: %s %v", *got.Status, got.GameSessionArn)
	}
}

func TestPlacementRequestChecks(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", nil)
	w.queue(t, "by-location", func(q *api.CreateGameSessionQueueInput) {
		q.PriorityConfiguration = priorities([]api.PriorityType{"LOCATION"})
	})
	in := func(id, queue string) *api.StartGameSessionPlacementInput {
		return &api.StartGameSessionPlacementInput{PlacementId: api.String(id), GameSessionQueueName: api.String(queue), MaximumPlayerSessionCount: api.Int32(2)}
	}
	over := &api.PriorityConfigurationOverride{LocationOrder: []string{"custom-c"}}
	bad := []struct {
		name string
		in   *api.StartGameSessionPlacementInput
		code api.ErrorCode
	}{
		{"unknown queue", in("x1", "nope"), api.NotFoundException},
		{"latencies with an override", func() *api.StartGameSessionPlacementInput {
			i := in("x2", "by-location")
			i.PlayerLatencies, i.PriorityConfigurationOverride = latencies("a", map[string]float32{"custom-a": 1}), over
			return i
		}(), api.InvalidRequestException},
		{"override on a queue without LOCATION first", func() *api.StartGameSessionPlacementInput {
			i := in("x3", "q")
			i.PriorityConfigurationOverride = over
			return i
		}(), api.InvalidRequestException},
		{"more desired players than seats", func() *api.StartGameSessionPlacementInput {
			i := in("x4", "q")
			for _, p := range []string{"a", "b", "c"} {
				i.DesiredPlayerSessions = append(i.DesiredPlayerSessions, api.DesiredPlayerSession{PlayerId: api.String(p)})
			}
			return i
		}(), api.InvalidRequestException},
	}
	for _, b := range bad {
		_, err := w.f.h.StartGameSessionPlacement(w.f.ctx, b.in)
		if !hasErrorCode(err, b.code) {
			t.Errorf("%s: %v, want %s", b.name, err, b.code)
		}
	}
	first := w.start(t, in("same", "q"))
	again := w.start(t, in("same", "q"))
	if *first.StartTime != *again.StartTime {
		t.Error("a repeated request did not answer the same placement")
	}
	_, err := w.f.h.StartGameSessionPlacement(w.f.ctx, in("same", "by-location"))
	wantCode(t, err, api.InvalidRequestException)
	_, err = w.f.h.DescribeGameSessionPlacement(w.f.ctx, &api.DescribeGameSessionPlacementInput{PlacementId: api.String("never")})
	wantCode(t, err, api.NotFoundException)
}

func TestPlacementOverrideFallback(t *testing.T) {
	for _, tc := range []struct {
		fallback api.PlacementFallbackStrategy
		placed   bool
	}{{api.PlacementFallbackStrategyDefaultAfterSinglePass, true}, {api.PlacementFallbackStrategyNone, false}} {
		t.Run(string(tc.fallback), func(t *testing.T) {
			w := newPlaceWorld(t)
			w.queue(t, "q", func(q *api.CreateGameSessionQueueInput) {
				q.PriorityConfiguration = priorities([]api.PriorityType{"LOCATION"})
			})
			w.ready(t, w.a, "custom-a", "p")
			p := w.start(t, &api.StartGameSessionPlacementInput{PlacementId: api.String("pl"), GameSessionQueueName: api.String("q"),
				PriorityConfigurationOverride: &api.PriorityConfigurationOverride{LocationOrder: []string{"custom-c"}, PlacementFallbackStrategy: &tc.fallback}})
			if p.GameSessionArn != nil {
				t.Fatal("the first pass left the override's locations")
			}
			w.step(t)
			if placed := w.describe(t, "pl").GameSessionArn != nil; placed != tc.placed {
				t.Errorf("after a second pass placed = %v, want %v", placed, tc.placed)
			}
		})
	}
}

// TestPlacementRacesCreateGameSession has 32 placements and 32 CreateGameSession calls race
// for 40 processes: every process hosts at most one game session, and every placement has at
// most one.
func TestPlacementRacesCreateGameSession(t *testing.T) {
	w := newPlaceWorld(t)
	w.queue(t, "q", func(q *api.CreateGameSessionQueueInput) {
		q.Destinations, q.FilterConfiguration = q.Destinations[:1], &api.FilterConfiguration{AllowedLocations: []string{"custom-a"}}
	})
	const procs = 40
	for i := range procs {
		w.ready(t, w.a, "custom-a", fmt.Sprintf("p%02d", i))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	created := 0
	for i := range 32 {
		wg.Go(func() {
			_, err := w.f.h.StartGameSessionPlacement(w.f.ctx, &api.StartGameSessionPlacementInput{PlacementId: api.String(fmt.Sprintf("race-%d", i)),
				GameSessionQueueName: api.String("q"), MaximumPlayerSessionCount: api.Int32(2)})
			if err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			_, err := w.f.h.CreateGameSession(w.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(w.a), Location: api.String("custom-a"),
				MaximumPlayerSessionCount: api.Int32(2)})
			if err == nil {
				mu.Lock()
				created++
				mu.Unlock()
			} else if !hasErrorCode(err, api.FleetCapacityExceededException) {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for range 3 {
		w.step(t)
	}
	hosts, placed := map[string]string{}, 0
	for _, s := range w.n.started() {
		if prev, ok := hosts[s.Ref.ProcessID]; ok {
			t.Fatalf("process %s got two game sessions: %s and %s", s.Ref.ProcessID, prev, s.GS.GameSessionID)
		}
		hosts[s.Ref.ProcessID] = s.GS.GameSessionID
	}
	for i := range 32 {
		if w.describe(t, fmt.Sprintf("race-%d", i)).GameSessionArn != nil {
			placed++
		}
	}
	if len(hosts) != procs || placed+created != procs {
		t.Errorf("%d processes host sessions; %d placed + %d created, want %d in all", len(hosts), placed, created, procs)
	}
}

func TestFleetEventsGoToTheEventPath(t *testing.T) {
	w := newPlaceWorld(t)
	var codes []string
	for _, e := range w.allEvents(t) {
		if e["detail-type"] != fleetEventType {
			continue
		}
		d := e["detail"].(map[string]any)
		if e["target"] != "" || d["resourceId"] != w.a && d["resourceId"] != w.b || e["resources"].([]any)[0] != w.f.svc.arn(arnFleet, d["resourceId"].(string)) {
			t.Errorf("fleet event %+v", e)
		}
		codes = append(codes, d["eventCode"].(string))
	}
	if got := strings.Join(codes, " "); got != "FLEET_CREATED FLEET_STATE_ACTIVE FLEET_CREATED FLEET_STATE_ACTIVE" {
		t.Errorf("fleet events %s", got)
	}
}
