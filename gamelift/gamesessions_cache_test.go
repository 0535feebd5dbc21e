package gamelift

import (
	"testing"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// listOnly hides the store's EachVersion, so a Service over it scans with List.
type listOnly struct{ store.Store }

// TestSessionCacheAcrossNodes runs search and utilization on two more "nodes" sharing the
// store, one validating its cache with EachVersion and one with List, while a third changes
// the sessions: each node's answers follow every change made elsewhere.
func TestSessionCacheAcrossNodes(t *testing.T) {
	h := newHost(t)
	if _, ok := h.f.store.(versionLister); !ok {
		t.Fatal("the embedded store does not implement versionLister")
	}
	versions, _ := hostFixtureOn(t, h.f.store, h.f.clock, "v")
	listing, _ := hostFixtureOn(t, listOnly{h.f.store}, h.f.clock, "l")
	refs := []ProcessRef{h.ready(t, "p1", 7001), h.ready(t, "p2", 7002), h.ready(t, "p3", 7003)}
	ids := make([]string, len(refs))
	for i := range refs {
		ids[i] = *h.createSession(t, "", int32(2+i)).GameSessionId
	}
	byProcess := map[string]string{}
	for _, id := range ids {
		p := ok(h.f.svc.GameSessionProcess(h.f.ctx, id))(t)
		byProcess[p.ProcessID] = id
	}
	activate := func(i int) { must(t, h.f.svc.ActivateGameSession(h.f.ctx, refs[i], byProcess[refs[i].ProcessID])) }
	activate(0)
	activate(1)
	check := func(step string, wantNames map[string]string, wantMax int32) {
		t.Helper()
		for name, node := range map[string]*fixture{"EachVersion": versions, "List": listing, "writer": h.f} {
			got := map[string]string{}
			out := ok(node.h.SearchGameSessions(node.ctx, &api.SearchGameSessionsInput{FleetId: api.String(h.fleet)}))(t)
			for _, gs := range out.GameSessions {
				got[*gs.GameSessionId] = api.Deref(gs.Name)
			}
			if len(got) != len(wantNames) {
				t.Errorf("%s, node %s: search found %v, want %v", step, name, got, wantNames)
			}
			for id, n := range wantNames {
				if g, ok := got[id]; !ok || g != n {
					t.Errorf("%s, node %s: session %s named %q (found %v), want %q", step, name, id, g, ok, n)
				}
			}
			u := ok(node.svc.describeUtilization(node.ctx, &api.DescribeFleetUtilizationInput{FleetIds: []string{h.fleet}}))(t).FleetUtilization[0]
			if int(*u.ActiveGameSessionCount) != len(wantNames) || *u.MaximumPlayerSessionCount != wantMax {
				t.Errorf("%s, node %s: utilization %d sessions, %d max players; want %d, %d", step, name,
					*u.ActiveGameSessionCount, *u.MaximumPlayerSessionCount, len(wantNames), wantMax)
			}
		}
	}
	a, b, c := byProcess["p1"], byProcess["p2"], byProcess["p3"]
	check("two active", map[string]string{a: "match", b: "match"}, maxOf(t, h, a)+maxOf(t, h, b))
	ok(h.f.h.UpdateGameSession(h.f.ctx, &api.UpdateGameSessionInput{GameSessionId: api.String(a), Name: api.String("renamed")}))(t)
	activate(2)
	force := api.TerminationModeForceTerminate
	ok(h.f.h.TerminateGameSession(h.f.ctx, &api.TerminateGameSessionInput{GameSessionId: api.String(b), TerminationMode: &force}))(t)
	check("renamed, activated, terminated", map[string]string{a: "renamed", c: "match"}, maxOf(t, h, a)+maxOf(t, h, c))
}

// maxOf returns a session's MaximumPlayerSessionCount.
func maxOf(t *testing.T, h *host, id string) int32 {
	return *h.session(t, id).MaximumPlayerSessionCount
}
