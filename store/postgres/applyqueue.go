package postgres

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5/pgconn"
)

// Group commit of CompareAndSetOnly Updates. Their writes (deferred.go) are applied by
// hoist_apply (schema.go), which takes several Updates at once and runs each in a
// subtransaction of its own. An Update whose function returned and that finds fewer than
// maxApplyCalls calls in flight leads: it sends its writes and those queued (at most
// maxApplyBatch Updates) in one call, hands each its outcome, and makes the first Update
// queued meanwhile lead the next call; otherwise it queues its writes and waits. Concurrent claims therefore share round trips and
// commits instead of each paying its own, and an Update still commits or fails alone.

// maxApplyBatch bounds the Updates of one hoist_apply call, and maxApplyCalls the calls of
// one Store in flight at once: a second call fills while the first is on its way (measured
// on 2 CPUs: 2 calls gave more claims than 1 or 4).
const (
	maxApplyBatch = 64
	maxApplyCalls = 2
)

// applyTimeout bounds a call, which serves Updates whose own contexts it cannot follow: past
// it they fail with store.ErrUnavailable (committed or not, as any write the database did not
// answer).
const applyTimeout = 30 * time.Second

// sqlApply is the call of hoist_apply.
const sqlApply = `SELECT seqs, codes, messages FROM hoist_apply($1, $2, $3, $4, $5, $6, $7)`

// applyReq is one Update's writes waiting for, or in, a call.
type applyReq struct {
	args applyArgs
	seqs []int64 // the Seq of each of its operations, once done
	err  error
	done bool
	wake chan struct{} // signalled once: when done, or when it is to lead the next call
}

// applyQueue holds the queued Updates of one Store. An Update is queued, or in one call.
type applyQueue struct {
	mu      sync.Mutex
	pending []*applyReq
	leaders int // calls in flight
}

// apply applies a's operations, in a call of hoist_apply shared with the Updates queued
// beside it, and returns their Seqs, or the driver's error (for classify). Once queued the
// Update is applied even if ctx ends.
func (s *Store) apply(ctx context.Context, a applyArgs) ([]int64, error) {
	req := &applyReq{args: a, wake: make(chan struct{}, 1)}
	q := &s.applies
	q.mu.Lock()
	lead := q.leaders < maxApplyCalls
	if lead {
		q.leaders++
	} else {
		q.pending = append(q.pending, req)
	}
	q.mu.Unlock()
	if !lead {
		if <-req.wake; req.done {
			return req.seqs, req.err
		}
	}
	call, cancel := context.WithTimeout(context.WithoutCancel(ctx), applyTimeout)
	s.applyBatch(call, q.take(req))
	cancel()
	q.handOff()
	return req.seqs, req.err
}

// take returns a call's Updates: lead, then the first ones queued.
func (q *applyQueue) take(lead *applyReq) []*applyReq {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(len(q.pending), maxApplyBatch-1)
	batch := append([]*applyReq{lead}, q.pending[:n]...)
	q.pending = append(q.pending[:0], q.pending[n:]...)
	return batch
}

// handOff makes the first queued Update lead the next call, or ends this lead.
func (q *applyQueue) handOff() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		q.leaders--
		return
	}
	next := q.pending[0]
	q.pending = append(q.pending[:0], q.pending[1:]...)
	next.wake <- struct{}{}
}

// applyBatch makes one call of hoist_apply for the Updates of batch and gives each its
// outcome.
func (s *Store) applyBatch(ctx context.Context, batch []*applyReq) {
	var all applyArgs
	counts := make([]int32, len(batch))
	for i, r := range batch {
		counts[i] = int32(len(r.args.ops))
		all.append(&r.args)
	}
	var seqs []int64
	var codes, messages []string
	err := s.pool.QueryRow(ctx, sqlApply, counts, string(all.ops), all.kinds, all.ids, all.parents,
		all.versions, all.datas).Scan(&seqs, &codes, &messages)
	pos := 0
	for i, r := range batch {
		n := len(r.args.ops)
		switch {
		case err != nil && ctx.Err() != nil:
			r.err = fmt.Errorf("%w: hoist_apply did not answer within %s: %w", store.ErrUnavailable, applyTimeout, err)
		case err != nil:
			r.err = err
		case i >= len(codes) || pos+n > len(seqs):
			r.err = fmt.Errorf("hoist_apply answered %d outcomes and %d Seqs for %d Updates", len(codes), len(seqs), len(batch))
		case codes[i] != "":
			r.err = &pgconn.PgError{Severity: "ERROR", Code: codes[i], Message: messages[i]}
		default:
			r.seqs = seqs[pos : pos+n]
		}
		pos += n
		r.done = true
		r.wake <- struct{}{} // the leader's own is never read
	}
}
