package gamelift

import (
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// TestMeasureSearchGameSessions measures, with HOIST_MEASURE_SESSIONS=1, SearchGameSessions
// latency over 10,000 ACTIVE game sessions of one fleet (the domain on the embedded store, no
// HTTP), beside DescribeAlias in the same run. It reports figures and asserts nothing about
// them.
func TestMeasureSearchGameSessions(t *testing.T) {
	if os.Getenv("HOIST_MEASURE_SESSIONS") == "" {
		t.Skip("set HOIST_MEASURE_SESSIONS=1 to measure")
	}
	const sessions, rounds = 10_000, 300
	h := newHost(t)
	for i := range sessions {
		ref := h.ready(t, fmt.Sprintf("p%05d", i), 1+i%60000)
		gs := ok(h.f.h.CreateGameSession(h.f.ctx, &api.CreateGameSessionInput{FleetId: api.String(h.fleet),
			Location: api.String("custom-loc-1"), MaximumPlayerSessionCount: api.Int32(int32(i % 50)),
			GameProperties: []api.GameProperty{{Key: api.String("map"), Value: api.String(fmt.Sprintf("m%d", i%7))}}}))(t).GameSession
		must(t, h.f.svc.ActivateGameSession(h.f.ctx, ref, *gs.GameSessionId))
		if i%1000 == 999 {
			h.token = h.f.token(t, h.fleet, "host-1")
		}
	}
	alias := h.f.createAlias(t, "baseline", &api.RoutingStrategy{Type: routingType(api.RoutingStrategyTypeSimple), FleetId: api.String(h.fleet)})
	time1 := func(call func()) []time.Duration {
		lat := make([]time.Duration, rounds)
		for i := range lat {
			t0 := time.Now()
			call()
			lat[i] = time.Since(t0)
		}
		slices.Sort(lat)
		return lat
	}
	base := time1(func() { ok(h.f.h.DescribeAlias(h.f.ctx, &api.DescribeAliasInput{AliasId: alias.AliasId}))(t) })
	in := &api.SearchGameSessionsInput{FleetId: api.String(h.fleet),
		FilterExpression: api.String("gameSessionProperties.map = 'm3' AND maximumSessions >= 10 AND hasAvailablePlayerSessions = true"),
		SortExpression:   api.String("creationTimeMillis DESC")}
	ok(h.f.h.SearchGameSessions(h.f.ctx, in))(t) // warms the per-node cache
	search := time1(func() { ok(h.f.h.SearchGameSessions(h.f.ctx, in))(t) })
	plain := time1(func() {
		ok(h.f.h.SearchGameSessions(h.f.ctx, &api.SearchGameSessionsInput{FleetId: api.String(h.fleet)}))(t)
	})
	p := func(l []time.Duration) string { return fmt.Sprintf("p50 %v, p99 %v", l[len(l)/2], l[len(l)*99/100]) }
	t.Logf("DescribeAlias (baseline): %s", p(base))
	t.Logf("SearchGameSessions over %d ACTIVE sessions, filter+sort: %s", sessions, p(search))
	t.Logf("SearchGameSessions over %d ACTIVE sessions, no expressions: %s", sessions, p(plain))
}
