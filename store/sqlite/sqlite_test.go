package sqlite_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
	"github.com/hoist-gg/hoist/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dir := t.TempDir()
		return func() (store.Store, error) { return sqlite.Open(dir) }
	})
}

// TestConformanceSnapshotting runs the suite with a snapshot after nearly every commit.
func TestConformanceSnapshotting(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		dir := t.TempDir()
		return func() (store.Store, error) { return sqlite.OpenSnapshotting(dir) }
	})
}

// TestCrashSnapshotting kills the writer while snapshots are written and put in force, a few
// times, so that the kill lands at different points of a snapshot's life.
func TestCrashSnapshotting(t *testing.T) {
	for i := range 4 {
		t.Run(fmt.Sprint("kill", i), func(t *testing.T) {
			storetest.CrashConcurrent(t, func(t *testing.T) string { return t.TempDir() },
				func(dir string) (store.Store, error) { return sqlite.OpenSnapshotting(dir) })
		})
	}
}

func TestCrash(t *testing.T) {
	storetest.Crash(t, func(t *testing.T) string { return t.TempDir() },
		func(dir string) (store.Store, error) { return sqlite.Open(dir) })
}

func TestCrashConcurrent(t *testing.T) {
	storetest.CrashConcurrent(t, func(t *testing.T) string { return t.TempDir() },
		func(dir string) (store.Store, error) { return sqlite.Open(dir) })
}

func TestOpenTwice(t *testing.T) {
	dir := t.TempDir()
	s, err := sqlite.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2, err := sqlite.Open(dir); err == nil {
		s2.Close()
		t.Fatal("a second Open of the same directory succeeded")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = sqlite.Open(dir) // the lock is released by Close
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
}

func TestUseAfterClose(t *testing.T) {
	s, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	ctx := context.Background()
	if err := s.View(ctx, func(store.Tx) error { return nil }); err == nil {
		t.Error("View after Close succeeded")
	}
	if err := s.Update(ctx, func(store.Tx) error { return nil }); err == nil {
		t.Error("Update after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func BenchmarkGetInView(b *testing.B) {
	storetest.BenchGet(b, openBench(b))
}

func BenchmarkInsertInUpdate(b *testing.B) {
	storetest.BenchInsert(b, openBench(b))
}

func openBench(b *testing.B) *sqlite.Store {
	s, err := sqlite.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkInsertParallel(b *testing.B) {
	for _, writers := range []int{1, 4, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			storetest.BenchInsertParallel(b, openBench(b), writers)
		})
	}
}
