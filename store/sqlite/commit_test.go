package sqlite

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/testwait"
	"github.com/hoist-gg/hoist/store"
)

var (
	errBoom     = errors.New("boom")
	errInjected = errors.New("injected commit failure")
)

// gate holds a store's first commit until release is closed, so that Updates queue up
// behind it and the next committer takes them as one batch. Later commits fail with the
// error that failNext holds, if any.
type gate struct {
	entered  chan struct{} // closed when the first commit reaches the hook
	release  chan struct{}
	calls    atomic.Int64
	failNext atomic.Pointer[error]
}

// holdFirstCommit installs a gate on s, runs a first Update in the background and waits until
// its commit is held. The returned channel yields that Update's result.
func holdFirstCommit(t *testing.T, s *Store) (*gate, <-chan error) {
	t.Helper()
	g := &gate{entered: make(chan struct{}), release: make(chan struct{})}
	s.beforeCommit = func() error {
		if g.calls.Add(1) == 1 {
			close(g.entered)
			<-g.release
			return nil
		}
		if err := g.failNext.Load(); err != nil {
			return *err
		}
		return nil
	}
	first := make(chan error, 1)
	go func() { first <- s.Update(context.Background(), insertFn("first")) }()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("the first commit never reached the hook")
	}
	return g, first
}

// insertFn inserts one record with Data equal to its ID.
func insertFn(id string) func(store.Tx) error {
	return func(tx store.Tx) error {
		return tx.Insert(&store.Record{Kind: "k", ID: id, Data: []byte(id)})
	}
}

// waitQueued polls until n Updates wait in s's queue.
func waitQueued(t *testing.T, s *Store, n int) {
	t.Helper()
	testwait.Until(t, 10*time.Second, time.Millisecond, fmt.Sprintf("%d Updates queued", n), func() bool {
		return queuedCount(s) == n
	})
}

// queuedCount is how many Updates wait in s's queue.
func queuedCount(s *Store) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	n := 0
	for _, r := range s.queue {
		if r.state == queued {
			n++
		}
	}
	return n
}

// queue starts Updates in order, each after the previous one is queued, and returns their
// results once all have returned. An Update that panics yields an error holding the value.
func queueInOrder(t *testing.T, s *Store, fns ...func(store.Tx) error) func() []error {
	t.Helper()
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Go(func() {
			defer func() {
				if p := recover(); p != nil {
					errs[i] = fmt.Errorf("panicked: %v", p)
				}
			}()
			errs[i] = s.Update(context.Background(), fn)
		})
		waitQueued(t, s, i+1)
	}
	return func() []error { wg.Wait(); return errs }
}

func openTest(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// has reports whether s holds the record k/id.
func has(s *Store, id string) bool {
	_, err := s.Get(context.Background(), "k", id)
	return err == nil
}

func TestGroupCommitBatches(t *testing.T) {
	s := openTest(t, t.TempDir())
	g, first := holdFirstCommit(t, s)
	const n = 40
	fns := make([]func(store.Tx) error, n)
	for i := range fns {
		fns[i] = insertFn(fmt.Sprint("r", i))
	}
	wait := queueInOrder(t, s, fns...)
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range wait() {
		if err != nil {
			t.Errorf("Update %d: %v", i, err)
		}
		if !has(s, fmt.Sprint("r", i)) {
			t.Errorf("record r%d missing", i)
		}
	}
	if got := s.commits.Load(); got != 2 {
		t.Errorf("%d commits for 1+%d Updates, want 2 (the held one and one batch)", got, n)
	}
}

// TestGroupCommitFreeRunning: many writers committing as fast as they can all land. Whether
// they share commits depends on timing (an append to the log takes microseconds, less than a
// writer needs to come round again); TestGroupCommitBatches checks batching deterministically.
func TestGroupCommitFreeRunning(t *testing.T) {
	s := openTest(t, t.TempDir())
	const writers, each = 32, 30
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Update(context.Background(), insertFn(fmt.Sprint(w, "-", i))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d Updates in %d commits", writers*each, s.commits.Load())
	var n int
	s.View(context.Background(), func(tx store.Tx) error {
		rs, err := tx.List("k", store.ListOptions{})
		n = len(rs)
		return err
	})
	if n != writers*each {
		t.Errorf("%d records, want %d", n, writers*each)
	}
}

// TestGroupCommitFailingNeighbours runs, in one batch, functions that fail, retry, panic and
// succeed: only the failed ones' writes are lost, and later functions see exactly the writes
// of the earlier successful ones.
func TestGroupCommitFailingNeighbours(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	g, first := holdFirstCommit(t, s)
	var seenC, seenF string
	tries := 0
	wait := queueInOrder(t, s,
		insertFn("a"),
		func(tx store.Tx) error { insertFn("b")(tx); return errBoom },
		func(tx store.Tx) error { seenC = visible(tx, "a", "b"); return insertFn("c")(tx) },
		func(tx store.Tx) error {
			tries++
			if tries == 1 {
				insertFn("d1")(tx)
				return fmt.Errorf("lost a race: %w", store.ErrConflict)
			}
			return insertFn("d2")(tx)
		},
		func(tx store.Tx) error { insertFn("e")(tx); panic("fn e") },
		func(tx store.Tx) error { seenF = visible(tx, "a", "b", "c", "d1", "d2", "e"); return insertFn("f")(tx) },
	)
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	errs := wait()
	want := []string{"<nil>", "boom", "<nil>", "<nil>", "panicked: fn e", "<nil>"}
	for i, err := range errs {
		if fmt.Sprint(err) != want[i] {
			t.Errorf("Update %d returned %v, want %s", i, err, want[i])
		}
	}
	if seenC != "a" || seenF != "a c d2" {
		t.Errorf("c saw %q (want \"a\"), f saw %q (want \"a c d2\")", seenC, seenF)
	}
	if got := s.commits.Load(); got != 2 {
		t.Errorf("%d commits, want 2", got)
	}
	s.Close()
	s = openTest(t, dir) // what reached the disk, not only memory
	for _, id := range []string{"first", "a", "b", "c", "d1", "d2", "e", "f"} {
		if want := id != "b" && id != "d1" && id != "e"; has(s, id) != want {
			t.Errorf("record %s stored: %v, want %v", id, !want, want)
		}
	}
}

// visible lists which of ids tx sees.
func visible(tx store.Tx, ids ...string) string {
	var out []string
	for _, id := range ids {
		if _, err := tx.Get("k", id); err == nil {
			out = append(out, id)
		}
	}
	return strings.Join(out, " ")
}

// TestGroupCommitFailure fails the commit of a batch: every caller whose function
// succeeded, or failed after reading the batch's uncommitted writes, gets the error; memory and
// disk stay as they were; the store goes on committing.
func TestGroupCommitFailure(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	g, first := holdFirstCommit(t, s)
	g.failNext.Store(&errInjected)
	seqBefore := s.seq
	wait := queueInOrder(t, s,
		func(tx store.Tx) error { return errBoom }, // saw only committed state: keeps its error
		insertFn("x1"),
		insertFn("x2"),
		insertFn("x1"), // ErrExists only because of x1 in the batch
		insertFn("x3"),
	)
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	errs := wait()
	if !errors.Is(errs[0], errBoom) {
		t.Errorf("Update 0 returned %v, want its own error", errs[0])
	}
	for i, err := range errs[1:] {
		if !errors.Is(err, errInjected) {
			t.Errorf("Update %d returned %v, want the commit error", i+1, err)
		}
	}
	for _, id := range []string{"x1", "x2", "x3"} {
		if has(s, id) {
			t.Errorf("record %s of the failed batch is in memory", id)
		}
	}
	if s.seq != seqBefore+1 { // only "first" took a Seq
		t.Errorf("Seq counter %d after the failed batch, want %d", s.seq, seqBefore+1)
	}
	g.failNext.Store(nil)
	if err := s.Update(context.Background(), insertFn("x2")); err != nil {
		t.Fatalf("Update after a failed commit: %v", err)
	}
	s.Close()
	s = openTest(t, dir)
	if !has(s, "first") || !has(s, "x2") || has(s, "x1") || has(s, "x3") {
		t.Error("after reopen: want first and x2 only")
	}
}

// TestCancelWhileQueued cancels an Update that waits behind a commit: it returns at once and
// its function never runs.
func TestCancelWhileQueued(t *testing.T) {
	s := openTest(t, t.TempDir())
	g, first := holdFirstCommit(t, s)
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ran := false
	go func() {
		done <- s.Update(c, func(tx store.Tx) error { ran = true; return insertFn("late")(tx) })
	}()
	waitQueued(t, s, 1)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled Update returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled Update kept waiting behind a held commit")
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := s.Update(context.Background(), insertFn("next")); err != nil {
		t.Fatal(err)
	}
	if ran || has(s, "late") {
		t.Error("the function of a withdrawn Update ran")
	}
}

// TestCloseCommitsQueued closes the store while Updates wait behind a commit: they are
// committed before Close returns, and Updates after it fail.
func TestCloseCommitsQueued(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	g, first := holdFirstCommit(t, s)
	wait := queueInOrder(t, s, insertFn("q1"), insertFn("q2"))
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	testwait.Until(t, 10*time.Second, time.Millisecond, "Close beginning", s.isShut)
	if err := s.Update(context.Background(), insertFn("after")); !errors.Is(err, errClosed) {
		t.Errorf("Update during Close returned %v, want errClosed", err)
	}
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	for i, err := range wait() {
		if err != nil {
			t.Errorf("queued Update %d: %v", i, err)
		}
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if !has(s, "q1") || !has(s, "q2") || has(s, "after") {
		t.Error("after reopen: want q1 and q2, not after")
	}
}

func (s *Store) isShut() bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return s.shut
}

// TestGoexitInBatch has a function end the committer's goroutine (as t.FailNow would): its
// batch fails with errAborted and the store goes on committing.
func TestGoexitInBatch(t *testing.T) {
	s := openTest(t, t.TempDir())
	g, first := holdFirstCommit(t, s)
	wait := queueInOrder(t, s,
		func(tx store.Tx) error { insertFn("a")(tx); runtime.Goexit(); return nil },
		insertFn("b"),
	)
	close(g.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if errs := wait(); !errors.Is(errs[1], errAborted) {
		t.Errorf("neighbour of a Goexit returned %v, want errAborted", errs[1])
	}
	if err := s.Update(context.Background(), insertFn("c")); err != nil {
		t.Fatalf("Update after a Goexit: %v", err)
	}
	if has(s, "a") || has(s, "b") || !has(s, "c") {
		t.Error("want c only")
	}
}
