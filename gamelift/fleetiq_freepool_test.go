package gamelift

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

// Every game server belongs to exactly one node's share, whatever the number of nodes.
func TestSharesPartitionGameServers(t *testing.T) {
	nodes := []string{"node-c", "node-a", "node-b"}
	shares := make([]share, len(nodes))
	for i, n := range nodes {
		shares[i] = shareOf(slices.Clone(nodes), n, 0)
	}
	if shares[1].rank != 0 || shares[2].rank != 1 || shares[0].rank != 2 || shares[0].count != 3 {
		t.Fatalf("shares = %+v, want ranks by sorted node ID out of 3", shares)
	}
	owned := make([]int, len(nodes))
	for i := range 3000 {
		id := fmt.Sprintf("gs-%d", i)
		n := 0
		for j, sh := range shares {
			if sh.owns(id) {
				n++
				owned[j]++
			}
		}
		if n != 1 {
			t.Fatalf("%s is in %d shares, want 1", id, n)
		}
	}
	for j, n := range owned {
		if n < 800 {
			t.Errorf("%s owns %d of 3000 game servers, want about a third", nodes[j], n)
		}
	}
	if sh := shareOf(nil, "alone", 0); sh.count != 1 || !sh.owns("anything") {
		t.Errorf("a node not yet reported among none: %+v", sh)
	}
}

// Two nodes on one store claim from their own shares of a group, so they never try the same
// game server; a node whose share is claimed takes from the other's before it answers
// OutOfCapacityException.
func TestClaimsComeFromTheNodesShare(t *testing.T) {
	a, b := twoNodes(t)
	for _, f := range []*fixture{a, b} {
		if err := f.svc.ReportNode(f.ctx, Node{ID: f.svc.node}); err != nil {
			t.Fatal(err)
		}
	}
	activeGroup(t, a, "g")
	const servers = 40
	for i := range servers {
		register(t, a, "g", fmt.Sprintf("gs-%02d", i), i/20)
	}
	shareA := share{rank: 0, count: 2}
	ownA := 0
	for i := range servers {
		if shareA.owns(fmt.Sprintf("gs-%02d", i)) {
			ownA++
		}
	}
	claimed := map[string]bool{}
	claimN := func(f *fixture, n int, inShare func(string) bool) {
		t.Helper()
		for range n {
			gs, err := claim(f, "g")
			if err != nil {
				t.Fatal(err)
			}
			id := *gs.GameServerId
			if claimed[id] || !inShare(id) {
				t.Fatalf("%s claimed %s (claimed before: %v, in its share: %v)", f.svc.node, id, claimed[id], inShare(id))
			}
			claimed[id] = true
		}
	}
	claimN(a, ownA, shareA.owns)
	claimN(b, servers-ownA-1, func(id string) bool { return !shareA.owns(id) })
	claimN(a, 1, func(id string) bool { return !shareA.owns(id) }) // the last one, of b's share
	_, err := claim(b, "g")
	wantCode(t, err, api.OutOfCapacityException)
}

// A claim starts at the first instance that may have room, and comes back to an earlier one
// once its hint lapses.
func TestNextSkipsExhaustedInstances(t *testing.T) {
	gp := &groupPlacement{instances: make([]rankedInstance, 5), exhausted: make([]int64, 5)}
	all := func(string) bool { return true }
	for i, until := range []int64{110, 110, 105, 110} {
		gp.markExhausted(i, until)
	}
	if got := gp.next(0, all, 100, false); got != 4 {
		t.Fatalf("next at 100 = %d, want 4", got)
	}
	if got := gp.next(0, all, 100, true); got != 0 {
		t.Fatalf("fresh next = %d, want 0", got)
	}
	if got := gp.next(0, all, 106, false); got != 2 {
		t.Fatalf("next at 106 = %d, want 2 (its hint lapsed at 105)", got)
	}
	gp.markExhausted(2, 120)
	if got := gp.next(0, all, 107, false); got != 4 {
		t.Fatalf("next at 107 = %d, want 4", got)
	}
	if got := gp.next(0, all, 111, false); got != 0 {
		t.Fatalf("next at 111 = %d, want 0", got)
	}
}
