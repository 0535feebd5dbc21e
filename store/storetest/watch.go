package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// testWatch checks, for stores that are Watchers, that committed writes of announced kinds are
// announced with their kind and parent, and that other kinds and rolled-back writes are not.
func testWatch(t *testing.T, s store.Store) {
	w, ok := s.(store.Watcher)
	if !ok {
		t.Skip("the store does not announce writes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan store.Announcement, 64)
	w.Watch(ctx, func(a store.Announcement) { got <- a })
	// Wait until the watcher is listening: a marker write is announced.
	marker := store.AnnouncedPrefix + "-marker"
	for i := 0; ; i++ {
		update(t, s, func(tx store.Tx) error {
			return tx.Insert(&store.Record{Kind: marker, ID: string(rune('a' + i)), Parent: "m"})
		})
		if drainUntil(got, marker, 500*time.Millisecond) {
			break
		}
		if i == 20 {
			t.Fatal("no announcement of a committed write within 10 s")
		}
	}
	boom := errors.New("roll back")
	err := s.Update(ctx, func(tx store.Tx) error {
		if err := tx.Insert(&store.Record{Kind: store.AnnouncedPrefix, ID: "rolled-back", Parent: "no"}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Update = %v, want the function's error", err)
	}
	insert(t, s, rec("alias", "quiet", "no"), &store.Record{Kind: store.AnnouncedPrefix, ID: "x", Parent: "p1"})
	r := get(t, s, store.AnnouncedPrefix, "x")
	update(t, s, func(tx store.Tx) error { r.Parent = "p2"; return tx.Put(r) })
	want := []string{"p1", "p2"}
	deadline := time.After(10 * time.Second)
	for len(want) > 0 {
		select {
		case a := <-got:
			switch {
			case a.Missed || a.Kind == marker:
			case a.Kind != store.AnnouncedPrefix || a.Parent != want[0]:
				t.Fatalf("announcement %+v, want kind %q parent %q", a, store.AnnouncedPrefix, want[0])
			default:
				want = want[1:]
			}
		case <-deadline:
			t.Fatalf("announcements for parents %v never came", want)
		}
	}
}

// drainUntil reads announcements until one of kind arrives (true) or d passes (false).
func drainUntil(got <-chan store.Announcement, kind string, d time.Duration) bool {
	timeout := time.After(d)
	for {
		select {
		case a := <-got:
			if a.Kind == kind {
				return true
			}
		case <-timeout:
			return false
		}
	}
}
