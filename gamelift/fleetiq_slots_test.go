package gamelift

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// A read of a slot list finds the claimable game servers and remembers the run of claimed
// ones at its start, so that the next read starts after it; the run ends when its earliest
// claim lapses, and a registration by the node drops it.
func TestSlotListReadsStartAfterTheSettledRun(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	for i := range 5 {
		register(t, f, "g", fmt.Sprintf("gs-%d", i), 1)
	}
	claimID := func(id string) {
		t.Helper()
		ok(f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String(id)}))(t)
	}
	parent := slotParent("g", instanceID(1))
	read := func(want int) claimables {
		t.Helper()
		found, err := f.svc.readClaimables(f.ctx, parent, f.svc.nowMillis(), want, share{count: 1})
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	claimID("gs-0")
	claimID("gs-1")
	claimID("gs-3")
	t0 := f.svc.nowMillis()
	f.clock.Advance(10 * time.Second)
	claimID("gs-4") // lapses 10 s after the others
	found := read(2)
	if !slices.Equal(found.ids, []string{"gs-2"}) || found.run.until != t0+ClaimDuration.Milliseconds() {
		t.Fatalf("first read = %+v, want gs-2 and a run of gs-0 and gs-1 until their claims lapse", found)
	}
	claimID("gs-2")
	if found = read(2); len(found.ids) != 0 || found.run.through == 0 {
		t.Fatalf("read after claiming gs-2 = %+v, want nothing claimable and a run of all five", found)
	}
	all := found.run
	// The next read starts after the run: it finds nothing to read, and the run stays.
	if again := read(2); len(again.ids) != 0 || again.run != all || again.until != int64(1<<63-1) {
		t.Fatalf("read after the run = %+v, want the same run %+v and no claim read", again, all)
	}
	register(t, f, "g", "gs-5", 1) // drops the run; gs-5 comes after it anyway
	if found = read(2); !slices.Equal(found.ids, []string{"gs-5"}) {
		t.Fatalf("read after gs-5 registered = %+v, want gs-5", found)
	}
	f.clock.Advance(ClaimDuration - 10*time.Second) // the claims of gs-0, gs-1 and gs-3 lapse
	if found = read(10); !slices.Equal(found.ids, []string{"gs-0", "gs-1", "gs-3", "gs-5"}) {
		t.Fatalf("read once the first claims lapsed = %+v, want all but gs-2 and gs-4, claimed 10 s later", found)
	}
}

// With several nodes, a pool read takes only the node's share: it reads the game servers of
// no other share, and an instance whose share is all claimed is exhausted for the node's
// pools while a read of every share still finds the others.
func TestSlotListReadOfOneShare(t *testing.T) {
	f := newFixture(t, "")
	activeGroup(t, f, "g")
	sh := share{rank: 0, count: 2}
	var own, others []string
	for i := range 20 {
		id := fmt.Sprintf("gs-%d", i)
		register(t, f, "g", id, 1)
		if sh.owns(id) {
			own = append(own, id)
		} else {
			others = append(others, id)
		}
	}
	parent := slotParent("g", instanceID(1))
	read := func(sh share) claimables {
		t.Helper()
		found, err := f.svc.readClaimables(f.ctx, parent, f.svc.nowMillis(), 64, sh)
		if err != nil {
			t.Fatal(err)
		}
		return found
	}
	if found := read(sh); !slices.Equal(found.ids, own) || len(own) == 0 || len(others) == 0 {
		t.Fatalf("read of share %+v = %+v; want its game servers %v", sh, found, own)
	}
	for _, id := range own {
		ok(f.svc.ClaimGameServer(f.ctx, &api.ClaimGameServerInput{GameServerGroupName: api.String("g"), GameServerId: api.String(id)}))(t)
	}
	gp := &groupPlacement{exhausted: make([]int64, 1)}
	now := f.svc.nowMillis()
	gp.noteExhausted(0, read(sh), now)
	if want := now + ClaimDuration.Milliseconds(); gp.exhausted[0] != want {
		t.Fatalf("share all claimed: exhausted until %d, want %d (its claims lapse)", gp.exhausted[0], want)
	}
	if found := read(share{count: 1}); !slices.Equal(found.ids, others) {
		t.Fatalf("read of every share = %+v, want the other share's %v", found, others)
	}
}
