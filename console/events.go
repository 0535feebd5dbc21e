package console

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// Changes tells open event streams that something they show may have changed. The server
// calls Notify when its store announces an outbox write (which reaches every node) and when
// the domain commits a change on this node. The zero value is not usable; use NewChanges.
type Changes struct {
	open atomic.Int32 // len(subs), read without the lock: most commits find no stream open
	mu   sync.RWMutex
	subs map[chan struct{}]struct{}
}

// NewChanges returns a Changes with no subscribers.
func NewChanges() *Changes { return &Changes{subs: map[chan struct{}]struct{}{}} }

// Notify wakes every subscribed stream. It never blocks: a stream already woken stays woken
// once, so a burst of changes costs each stream one re-read.
func (c *Changes) Notify() {
	if c == nil || c.open.Load() == 0 {
		return
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	for ch := range c.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// subscribe returns a channel woken by Notify and the function that unsubscribes it. A nil
// Changes gives a channel that is never woken.
func (c *Changes) subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	if c == nil {
		return ch, func() {}
	}
	c.mu.Lock()
	c.subs[ch] = struct{}{}
	c.open.Store(int32(len(c.subs)))
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		delete(c.subs, ch)
		c.open.Store(int32(len(c.subs)))
		c.mu.Unlock()
	}
}

// Query is one operation call a page subscribes to.
type Query struct {
	Op    string
	Input json.RawMessage
}

// Limits on the queries of one stream.
const (
	maxQueries     = 24
	maxQueryBytes  = 32 << 10
	keepaliveEvery = 15 // sweeps without an event before a comment line keeps proxies open
)

// parseQueries decodes the q parameter of /console/events: an object from keys the page
// chooses to Query values, read-only operations only.
func (c *Console) parseQueries(q string) (map[string]Query, error) {
	if len(q) > maxQueryBytes {
		return nil, fmt.Errorf("the queries are longer than %d bytes", maxQueryBytes)
	}
	qs := map[string]Query{}
	if err := json.Unmarshal([]byte(q), &qs); err != nil {
		return nil, fmt.Errorf("q is not a JSON object of {\"Op\":...,\"Input\":{...}} queries: %v", err)
	}
	if len(qs) == 0 || len(qs) > maxQueries {
		return nil, fmt.Errorf("give between 1 and %d queries, not %d", maxQueries, len(qs))
	}
	for k, v := range qs {
		if !c.readable(v.Op) {
			return nil, fmt.Errorf("query %q: the console only calls read operations, not %q", k, v.Op)
		}
		if len(v.Input) == 0 || string(v.Input) == "null" {
			v.Input = json.RawMessage("{}")
			qs[k] = v
		}
	}
	return qs, nil
}

// serveEvents streams the answers of the page's queries as server-sent events: all of them at
// once, then each again whenever it differs from what was last sent, re-read on every
// Changes notification and every Sweep. Each pass that sent something ends with a "synced"
// event, so the page renders once per pass.
func (c *Console) serveEvents(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		w.Header().Set("Allow", "GET")
		writeJSONError(w, http.StatusMethodNotAllowed, "InvalidRequestException", "open the event stream with GET")
		return
	}
	if !c.authorize(w, r) {
		return
	}
	qs, err := c.parseQueries(r.URL.Query().Get("q"))
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "InvalidRequestException", err.Error())
		return
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeJSONError(w, http.StatusInternalServerError, "InternalServiceException", "this connection cannot stream")
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flusher.Flush()
	rc := http.NewResponseController(w)
	c.stream(r, &stream{w: w, flush: flusher.Flush, queries: qs, sent: map[string][32]byte{},
		deadline: func() { _ = rc.SetWriteDeadline(time.Now().Add(writeTimeout)) }})
}

// stream is one open event stream.
type stream struct {
	w       io.Writer
	flush   func()
	queries map[string]Query
	sent    map[string][32]byte // hash of the last answer sent per key
	quiet   int                 // passes since the last event
	// deadline bounds the writes of the next pass (writeTimeout), so that a client that
	// stopped reading cannot hold the stream forever.
	deadline func()
}

// writeTimeout is how long the writes of one pass may block on a client that does not read.
const writeTimeout = 30 * time.Second

// stream runs the passes of one stream until the client goes away or its session ends.
func (c *Console) stream(r *http.Request, s *stream) {
	ctx := r.Context()
	wake, stop := c.cfg.Changes.subscribe()
	defer stop()
	tick := clock.Real{}.NewTicker(c.cfg.Sweep)
	defer tick.Stop()
	var last time.Time
	for {
		if c.user(r) == "" {
			fmt.Fprint(s.w, "event: expired\ndata: {}\n\n")
			s.flush()
			return
		}
		last = time.Now()
		s.deadline()
		if err := c.pass(ctx, s); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-c.closed:
			return
		case <-wake:
			if !settle(ctx, last) {
				return
			}
		case <-tick.C():
		}
	}
}

// minPassGap is the least time between the starts of two passes of a stream woken by
// Changes: a burst of commits costs one re-read per gap, not one per commit.
const minPassGap = 200 * time.Millisecond

// settle waits until minPassGap has passed since last; false when ctx ended first.
func settle(ctx context.Context, last time.Time) bool {
	d := minPassGap - time.Since(last)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// event is the data of an "answer" event.
type event struct {
	Key    string
	Status int
	Body   json.RawMessage
}

// pass re-reads every query and sends the answers that changed.
func (c *Console) pass(ctx context.Context, s *stream) error {
	keys := make([]string, 0, len(s.queries))
	for k := range s.queries {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	sent := 0
	for _, k := range keys {
		q := s.queries[k]
		a := c.call(ctx, q.Op, q.Input)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sum := sha256.Sum256(append([]byte(fmt.Sprint(a.Status)+"\n"), a.Body...))
		if prev, ok := s.sent[k]; ok && prev == sum {
			continue
		}
		if err := s.send("answer", event{Key: k, Status: a.Status, Body: rawJSON(a.Body)}); err != nil {
			return err
		}
		s.sent[k] = sum
		sent++
	}
	return s.finish(sent)
}

// finish ends a pass: a "synced" event after changes, a keep-alive comment now and then.
func (s *stream) finish(sent int) error {
	var err error
	if sent > 0 {
		s.quiet = 0
		err = s.send("synced", struct{}{})
	} else if s.quiet++; s.quiet >= keepaliveEvery {
		s.quiet = 0
		_, err = io.WriteString(s.w, ": keep-alive\n\n")
	} else {
		return nil
	}
	s.flush()
	return err
}

// send writes one event.
func (s *stream) send(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(s.w, "event: %s\ndata: %s\n\n", name, b)
	return err
}

// rawJSON returns b when it is JSON, else b as a JSON string.
func rawJSON(b []byte) json.RawMessage {
	if json.Valid(b) {
		return b
	}
	q, _ := json.Marshal(string(b))
	return q
}
