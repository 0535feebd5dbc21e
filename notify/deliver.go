package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// Sender posts a request to a subscriber's endpoint and returns the HTTP status it answered;
// err is set when there was no answer (connection refused, timeout).
type Sender interface {
	Send(ctx context.Context, r *Request) (status int, err error)
}

// DeliveryLoop delivers the stored deliveries to their endpoints: in order per subscription
// (a message is not attempted before the previous one to the same subscription has been
// delivered or given up), retrying failures as the delivery policy says, on the service's
// clock. Its state is the store's, so another loop (after a restart, or on a new leader)
// carries on where it stopped. It runs on one node of the cluster (the leader); one Step runs
// at a time.
type DeliveryLoop struct {
	s    *Service
	send Sender
	// Logger receives a debug line for every attempt; nil discards.
	Logger *slog.Logger

	mu   sync.Mutex
	wake chan struct{}
}

// Tuning of the loop.
const (
	// scanLimit is how many deliveries a Step reads: the oldest, whose subscriptions' heads
	// they are. Later ones wait for these to go.
	scanLimit = 1000
	// parallelSends is how many endpoints a Step posts to at once.
	parallelSends = 16
	// failedRetention is how long failed deliveries are kept.
	failedRetention = 14 * 24 * time.Hour
)

// DeliveryLoop returns the delivery loop of s, which posts with send.
func (s *Service) DeliveryLoop(send Sender) *DeliveryLoop {
	return &DeliveryLoop{s: s, send: send, wake: make(chan struct{}, 1)}
}

// Wake makes a running loop step now (a delivery was written).
func (l *DeliveryLoop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run steps every interval and at every Wake until ctx is done.
func (l *DeliveryLoop) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	clock.EveryOrWake(ctx, l.s.clock, interval, l.wake, l.Step, onError)
}

// attempt is one delivery being attempted.
type attempt struct {
	id    string
	d     *deliveryDoc
	retry RetryPolicy
	// ctype and sigVersion are the Content-Type and SignatureVersion req is made with.
	ctype, sigVersion string
	req               *Request
	// at is when the attempt was made (Unix ms): retry delays count from it.
	at     int64
	status int
	err    error
}

// Step attempts every subscription's first delivery whose time has come, and records the
// outcomes; it goes round again while some were delivered, so that each subscription's queue
// drains in order.
func (l *DeliveryLoop) Step(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ctx.Err() == nil {
		delivered, err := l.round(ctx)
		if err != nil || delivered == 0 {
			return errors.Join(err, l.trimFailed(ctx))
		}
	}
	return ctx.Err()
}

// round attempts the due heads once and returns how many were delivered.
func (l *DeliveryLoop) round(ctx context.Context) (int, error) {
	due, err := l.due(ctx)
	if err != nil {
		return 0, err
	}
	l.post(ctx, due)
	delivered := 0
	var errs []error
	for _, a := range due {
		ok, err := l.settle(ctx, a)
		if ok {
			delivered++
		}
		errs = append(errs, err)
	}
	return delivered, errors.Join(errs...)
}

// due reads the deliveries to attempt now and renders their requests.
func (l *DeliveryLoop) due(ctx context.Context) ([]*attempt, error) {
	var due []*attempt
	now := l.s.nowMillis()
	err := l.s.store.View(ctx, func(tx store.Tx) error {
		due = due[:0]
		recs, docs, err := list[deliveryDoc](tx, kindDelivery, store.ListOptions{Limit: scanLimit})
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		policies := policyCache{tx: tx}
		for i, d := range docs {
			if seen[recs[i].Parent] || d.Next > now {
				seen[recs[i].Parent] = true
				continue
			}
			seen[recs[i].Parent] = true
			retry, ctype, sigVersion, err := policies.of(d)
			if err != nil {
				return err
			}
			due = append(due, &attempt{id: recs[i].ID, d: d, retry: retry, ctype: ctype, sigVersion: sigVersion, at: now})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return due, l.renderAll(ctx, due)
}

// renderAll makes each attempt's signed request.
func (l *DeliveryLoop) renderAll(ctx context.Context, due []*attempt) error {
	for _, a := range due {
		req, err := l.s.render(ctx, a.d, a.sigVersion, a.ctype)
		if err != nil {
			return err
		}
		a.req = req
	}
	return nil
}

// policyCache reads, once per Step, the policies of topics and subscriptions.
type policyCache struct {
	tx     store.Tx
	topics map[string]*topicDoc
	subs   map[string]*subDoc
}

// of returns the retry policy, content type and signature version of delivery d.
func (c *policyCache) of(d *deliveryDoc) (RetryPolicy, string, string, error) {
	if c.topics == nil {
		c.topics, c.subs = map[string]*topicDoc{}, map[string]*subDoc{}
	}
	t, err := cached(c.tx, c.topics, kindTopic, d.Topic)
	if err != nil {
		return RetryPolicy{}, "", "", err
	}
	sub, err := cached(c.tx, c.subs, kindSub, d.Sub)
	if err != nil {
		return RetryPolicy{}, "", "", err
	}
	retry, ctype := effective(t.Attrs[attrDeliveryPolicy], sub.DeliveryPolicy)
	sigVersion := t.Attrs[attrSignatureVer]
	if sigVersion == "" {
		sigVersion = "1"
	}
	return retry, ctype, sigVersion, nil
}

// cached reads kind/id into the cache m, once; a missing record reads as the zero doc.
func cached[T any](tx store.Tx, m map[string]*T, kind, id string) (*T, error) {
	if v, ok := m[id]; ok {
		return v, nil
	}
	v := new(T)
	if _, _, err := get(tx, kind, id, v); err != nil {
		return nil, err
	}
	m[id] = v
	return v, nil
}

// post sends the attempts' requests, parallelSends at a time, and records the answers.
func (l *DeliveryLoop) post(ctx context.Context, due []*attempt) {
	sem := make(chan struct{}, parallelSends)
	var wg sync.WaitGroup
	for _, a := range due {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			a.status, a.err = l.send.Send(ctx, a.req)
		})
	}
	wg.Wait()
}

// outcome classifies an answer as SNS does: 2xx is delivered; no answer or a 5xx (or 1xx)
// is retried; 3xx and 4xx are not retried (SNS counts them as delivered; Hoist keeps them
// with the failed deliveries, since the endpoint did not take the message).
func outcome(status int, err error) (delivered, retry bool, why string) {
	switch {
	case err != nil:
		return false, true, err.Error()
	case status >= 200 && status < 300:
		return true, false, ""
	case status >= 300 && status < 500:
		return false, false, fmt.Sprintf("HTTP %d (not retried)", status)
	}
	return false, true, fmt.Sprintf("HTTP %d", status)
}

// settle records the outcome of attempt a: the delivery is removed, scheduled again, or
// moved to the failed deliveries. delivered reports the first.
func (l *DeliveryLoop) settle(ctx context.Context, a *attempt) (delivered bool, err error) {
	delivered, retry, why := outcome(a.status, a.err)
	l.logger().Debug("notification delivery attempt", "endpoint", a.d.Endpoint, "type", a.d.Type,
		"messageId", a.d.MessageID, "attempt", a.d.Attempts+1, "delivered", delivered, "error", why)
	return delivered, l.s.store.Update(ctx, func(tx store.Tx) error {
		var d deliveryDoc
		rec, found, err := get(tx, kindDelivery, a.id, &d)
		switch {
		case err != nil || !found:
			return err
		case delivered:
			return tx.Delete(kindDelivery, a.id)
		}
		d.Attempts++
		d.LastError = why
		if retry && d.Attempts <= a.retry.NumRetries {
			d.Next = a.at + a.retry.Delay(d.Attempts).Milliseconds()
			return put(tx, rec, &d)
		}
		d.GaveUp = l.s.nowMillis()
		if err := tx.Delete(kindDelivery, a.id); err != nil {
			return err
		}
		return insert(tx, kindFailed, a.id, d.Topic, &d)
	})
}

// trimFailed removes the failed deliveries older than failedRetention, oldest first, a
// batch per Step.
func (l *DeliveryLoop) trimFailed(ctx context.Context) error {
	cutoff := l.s.clock.Now().Add(-failedRetention).UnixMilli()
	var old []string
	err := l.s.store.View(ctx, func(tx store.Tx) error {
		recs, docs, err := list[deliveryDoc](tx, kindFailed, store.ListOptions{Limit: 100})
		old = old[:0]
		for i, d := range docs {
			if d.GaveUp >= cutoff {
				break
			}
			old = append(old, recs[i].ID)
		}
		return err
	})
	if err != nil || len(old) == 0 {
		return err
	}
	return l.s.store.Update(ctx, func(tx store.Tx) error {
		for _, id := range old {
			if err := ignoreNotFound(tx.Delete(kindFailed, id)); err != nil {
				return err
			}
		}
		return nil
	})
}

func (l *DeliveryLoop) logger() *slog.Logger {
	if l.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Logger
}
