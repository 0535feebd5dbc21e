package hostd

import "testing"

// Instances get distinct user IDs in the range, the same one when asked again, and freed
// IDs are reused.
func TestUIDPool(t *testing.T) {
	p := &uidPool{base: DefaultUIDBase}
	seen := map[int]bool{}
	ids := []string{"i-1", "i-2", "i-3", "i-4"}
	for _, id := range ids {
		uid := p.get(id)
		if uid < DefaultUIDBase || uid >= DefaultUIDBase+UIDRange || seen[uid] {
			t.Fatalf("%s got uid %d (seen: %v)", id, uid, seen)
		}
		seen[uid] = true
		if again := p.get(id); again != uid {
			t.Fatalf("%s: %d then %d", id, uid, again)
		}
	}
	first := p.get("i-1")
	p.put("i-1")
	if len(p.used) != len(ids)-1 {
		t.Fatalf("after put: %v", p.used)
	}
	if again := p.get("i-1"); again != first {
		t.Fatalf("i-1 came back with %d, not %d", again, first)
	}
}

// A collision of derived IDs moves to the next free one.
func TestUIDPoolCollision(t *testing.T) {
	p := &uidPool{base: 1000}
	a := p.get("i-a")
	p.used[a+1] = "taken"
	p.put("i-a")
	p.used[a] = "other"
	if got := p.get("i-a"); got != a+2 {
		t.Fatalf("got %d, want %d", got, a+2)
	}
}

// Host paths in the sandbox become /local/... paths for isolated instances only.
func TestInside(t *testing.T) {
	h := New(Config{Dir: "/data/instances"})
	in := &instance{h: h, dir: "/data/instances/i-1"}
	if got := in.inside("/data/instances/i-1/local/game/run.sh"); got != "/data/instances/i-1/local/game/run.sh" || in.root() != in.dir {
		t.Fatalf("not isolated: %s, root %s", got, in.root())
	}
	h.cfg.Isolation.Available = true
	if got := in.inside("/data/instances/i-1/local/game/run.sh"); got != "/local/game/run.sh" || in.root() != "/" {
		t.Fatalf("isolated: %s, root %s", got, in.root())
	}
}
