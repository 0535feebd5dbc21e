package sqlite

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/hoist-gg/hoist/store"
)

// maxAttempts bounds how often Update runs its function when it returns ErrConflict.
const maxAttempts = 10

// maxBatch caps how many Updates one commit (one log entry) holds.
const maxBatch = 256

// errAborted is returned to the callers of a batch whose committer stopped before committing
// it: a function called runtime.Goexit (t.FailNow, for one) on the committer's goroutine.
var errAborted = errors.New("sqlite store: a function in the commit batch exited its goroutine; nothing was committed")

// reqState is where a request is in the group commit. It is guarded by Store.qmu.
type reqState uint8

const (
	queued    reqState = iota // waiting in Store.queue
	chosen                    // will commit the next batch
	taken                     // in a batch being run and committed
	withdrawn                 // its context ended before a batch took it
)

// request is one Update in the group commit.
type request struct {
	ctx   context.Context
	fn    func(store.Tx) error
	state reqState
	wake  chan struct{} // receives once: when the request is finished or chosen to lead
	lead  bool          // set before wake when the request is chosen to commit a batch

	// Set by the committer before wake. fnErr is fn's error, or nil if its writes joined the
	// batch; afterBatch says fn ran after another function of the batch wrote, so its outcome
	// may rest on writes that were not committed yet.
	fnErr      error
	afterBatch bool
	panicked   any // what fn panicked with, re-panicked in the caller
	err        error
	finished   bool
}

// pending is a batch's writes before they are committed.
type pending struct {
	writes layer
	seq    int64 // the last Seq handed out in the batch
}

// Update runs fn in a read-write transaction; see store.Store. Updates are serialisable: each
// function runs alone, seeing every write committed or batched before it. fn may run on the
// goroutine of another Update of its batch, so it must not call runtime.Goexit (t.FailNow).
func (s *Store) Update(ctx context.Context, fn func(store.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	req := &request{ctx: ctx, fn: fn, wake: make(chan struct{}, 1)}
	lead, err := s.enqueue(req)
	if err != nil {
		return err
	}
	if !lead && !s.await(req) {
		return req.err
	}
	if lead || req.lead {
		s.lead()
	}
	if req.panicked != nil {
		panic(req.panicked)
	}
	return req.err
}

// enqueue queues req and reports whether its caller is to commit the next batch because no
// committer is running.
func (s *Store) enqueue(req *request) (lead bool, err error) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.shut {
		return false, errClosed
	}
	s.queue = append(s.queue, req)
	if s.leading {
		return false, nil
	}
	s.leading = true
	req.state = chosen
	return true, nil
}

// await waits until req is finished or chosen to lead. If req's context ends while it is still
// queued, it is withdrawn with the context's error and await reports false.
func (s *Store) await(req *request) bool {
	select {
	case <-req.wake:
		return true
	case <-req.ctx.Done():
	}
	s.qmu.Lock()
	if req.state == queued {
		req.state = withdrawn
		req.err = req.ctx.Err()
		s.qmu.Unlock()
		return false
	}
	s.qmu.Unlock()
	<-req.wake // already taken or chosen: the batch ends soon
	return true
}

// lead commits one batch of queued requests, finishes them, and hands the lead to the next
// queued request, if any.
func (s *Store) lead() {
	batch := s.take()
	defer s.handoff()
	defer s.abortUnfinished(batch)
	b := &pending{writes: layer{}, seq: s.seq}
	for _, r := range batch {
		s.run(r, b)
	}
	err := s.commit(b)
	for _, r := range batch {
		s.finish(r, err)
	}
}

// take removes up to maxBatch requests from the front of the queue, skipping withdrawn ones.
func (s *Store) take() []*request {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	n := min(len(s.queue), maxBatch)
	batch := make([]*request, 0, n)
	for _, r := range s.queue[:n] {
		if r.state != withdrawn {
			r.state = taken
			batch = append(batch, r)
		}
	}
	s.queue = slices.Clone(s.queue[n:])
	return batch
}

// handoff chooses the first queued request to commit the next batch, or, with none queued,
// marks the store idle.
func (s *Store) handoff() {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	for len(s.queue) > 0 && s.queue[0].state == withdrawn {
		s.queue = s.queue[1:]
	}
	if len(s.queue) == 0 {
		s.queue = nil
		s.leading = false
		s.idle.Broadcast()
		return
	}
	next := s.queue[0]
	next.state, next.lead = chosen, true
	next.wake <- struct{}{}
}

// run runs r's function over the batch so far, again while it returns ErrConflict (up to
// maxAttempts); if it succeeds, its writes join the batch.
func (s *Store) run(r *request, b *pending) {
	if err := r.ctx.Err(); err != nil {
		r.fnErr = err
		return
	}
	r.afterBatch = len(b.writes) > 0
	for attempt := 1; ; attempt++ {
		tx := &updateTx{mem: s.mem, batch: b.writes, seq: b.seq}
		p, err := call(r.fn, tx)
		tx.done = true
		switch {
		case p != nil:
			r.panicked, r.fnErr = p, errAborted
			return
		case err == nil:
			b.writes.merge(&tx.writes)
			b.seq = tx.seq
			return
		case !errors.Is(err, store.ErrConflict) || attempt == maxAttempts || r.ctx.Err() != nil:
			r.fnErr = err
			return
		}
	}
}

// call runs fn, turning a panic into its value.
func call(fn func(store.Tx) error, tx store.Tx) (panicked any, err error) {
	defer func() { panicked = recover() }()
	return nil, fn(tx)
}

// finish sets r's result from its function's and the batch commit's, and wakes its caller.
// A function that failed keeps its own error unless it ran after uncommitted writes of the
// batch and the commit failed: then its outcome may rest on writes that never happened.
func (s *Store) finish(r *request, commitErr error) {
	switch {
	case r.fnErr == nil || (r.afterBatch && commitErr != nil && r.panicked == nil):
		r.err = commitErr
	default:
		r.err = r.fnErr
	}
	r.finished = true
	r.wake <- struct{}{}
}

// abortUnfinished finishes, with errAborted, the requests of a batch that lead left behind
// because a function ended the committer's goroutine; it does nothing otherwise.
func (s *Store) abortUnfinished(batch []*request) {
	for _, r := range batch {
		if !r.finished {
			r.fnErr = errAborted
			s.finish(r, nil)
		}
	}
}

// commit appends the batch to the log and, once that is done, applies it to memory; then it
// may start a snapshot.
func (s *Store) commit(b *pending) error {
	if len(b.writes) == 0 && b.seq == s.seq {
		return nil
	}
	// Every function of the batch has returned: finish the write even if callers give up now,
	// so that what the log holds and what Update reports never disagree.
	ups := b.writes.upserts()
	entry := encodeBatch(b.writes, ups, b.seq)
	if s.beforeCommit != nil {
		if err := s.beforeCommit(); err != nil {
			return fmt.Errorf("sqlite store: commit: %w", err)
		}
	}
	if err := s.log.append(entry); err != nil {
		return fmt.Errorf("sqlite store: commit: %w", err)
	}
	s.commits.Add(1)
	s.snap.logBytes += int64(len(entry))
	s.apply(b, ups)
	s.announce(ups)
	s.maybeSnapshot()
	return nil
}

// apply puts a committed batch's writes into memory; ups is b.writes.upserts().
func (s *Store) apply(b *pending, ups []*store.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for kind, m := range b.writes {
		for id, r := range m {
			if r == nil {
				s.mem.delete(kind, id)
			}
		}
	}
	for _, r := range ups {
		s.mem.set(r)
	}
	s.seq = b.seq
}
