package gamelift

import (
	"container/heap"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// The matchmaker: one MatchmakingLoop in the cluster (on the leader) holds a flexmatch
// Matcher per configuration with its SEARCHING tickets in memory, and commits what they
// propose with compare-and-set like any other change. Its inbox is the outbox address
// MatchmakerAddress: every change to a ticket that concerns the pool (filed, stopped,
// returned to searching) and every match waiting for acceptance writes a note there in its
// own transaction, and the store's announcement of that write wakes the loop at once, on
// whichever node it runs. After a restart or a leader change the loop rebuilds its pools
// from the work list (mmwait) and its acceptance deadlines from the matches (mmmatch).

// MatchmakerAddress is the outbox address of the matchmaker's inbox.
const MatchmakerAddress = "matchmaker"

// MessageTicket is an inbox note: Body is a ticketNote.
const MessageTicket = "Ticket"

// matchNote prefixes the ID of a match in a ticketNote; configNote, the name of a
// configuration that changed.
const (
	matchNote  = "match:"
	configNote = "config:"
)

// ticketNote names a ticket (or, with matchNote, a match) whose state the matchmaker must
// look at again.
type ticketNote struct {
	ID string `json:"id"`
}

// tellMatchmaker writes an inbox note, in tx.
func (s *Service) tellMatchmaker(tx store.Tx, id string) error {
	return s.enqueue(tx, MatchmakerAddress, MessageTicket, ticketNote{ID: id}, 0)
}

// MatchmakingLoop is the matchmaker. Step takes in the inbox, times out tickets and
// acceptances, and forms and commits matches; Run steps on the Service's clock and at every
// Wake.
type MatchmakingLoop struct {
	s    *Service
	wake chan struct{}
	mu   sync.Mutex
	// loaded is when the pools were last completed from the work list (Unix ms; 0: never).
	loaded int64
	pools  map[string]*pool
	// accepting holds the acceptance deadlines of matches waiting for players.
	accepting map[string]int64
	// estimates are each configuration's recent time to match, in seconds.
	estimates map[string]float64
	// purged is when ended tickets were last purged (Unix ms).
	purged int64
}

// pool is one configuration's tickets.
type pool struct {
	ruleSet   string // the rule set's ARN and creation time it was built for
	rs        *flexmatch.RuleSet
	matcher   *flexmatch.Matcher
	deadlines deadlineHeap
}

// MatchmakingLoop returns the matchmaker of s.
func (s *Service) MatchmakingLoop() *MatchmakingLoop {
	return &MatchmakingLoop{s: s, wake: make(chan struct{}, 1), pools: map[string]*pool{},
		accepting: map[string]int64{}, estimates: map[string]float64{}}
}

// Wake asks a running loop to step now (a note arrived in its inbox).
func (l *MatchmakingLoop) Wake() {
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Run steps every interval and at every Wake until ctx is done. The pools are dropped when
// it returns (leadership lost): the next leader rebuilds them from the store.
func (l *MatchmakingLoop) Run(ctx context.Context, interval time.Duration, onError func(error)) {
	defer l.reset()
	clock.EveryOrWake(ctx, l.s.clock, interval, l.wake, l.Step, onError)
}

// reset forgets the in-memory state.
func (l *MatchmakingLoop) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.loaded, l.pools, l.accepting = 0, map[string]*pool{}, map[string]int64{}
}

// Step makes one pass.
func (l *MatchmakingLoop) Step(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.s.nowMillis(); l.loaded == 0 || now-l.loaded >= catchUpInterval.Milliseconds() {
		if err := l.load(ctx); err != nil {
			return err
		}
		l.loaded = now
	}
	errs := []error{l.intake(ctx), l.expire(ctx), l.expireAcceptances(ctx)}
	errs = append(errs, l.match(ctx), l.purge(ctx))
	return errors.Join(errs...)
}

// catchUpInterval is how often the matchmaker rereads its work list for tickets its pools
// lack (a note it could not act on, a commit whose outcome it could not read).
const catchUpInterval = 30 * time.Second

// ticketPurgeInterval is how often ended tickets past the retention period are deleted.
const ticketPurgeInterval = time.Minute

// purge deletes, once a ticketPurgeInterval, the tickets that ended more than the game
// session retention period ago.
func (l *MatchmakingLoop) purge(ctx context.Context) error {
	now := l.s.nowMillis()
	if now-l.purged < ticketPurgeInterval.Milliseconds() {
		return nil
	}
	l.purged = now
	cutoff := now - l.s.sessions.retention.Milliseconds()
	for {
		n := 0
		err := l.s.update(ctx, func(tx store.Tx) error {
			n = 0
			recs, err := tx.List(kindMatchEnded, store.ListOptions{Limit: purgeBatch})
			for _, r := range recs {
				var e deadlineDoc
				if err := unmarshal(r.Data, &e); err != nil || e.At >= cutoff {
					return err
				}
				for _, kind := range []string{kindMatchTicket, kindMatchEnded} {
					if err := deleteIfThere(tx, kind, r.ID); err != nil {
						return err
					}
				}
				n++
			}
			return err
		})
		if err != nil || n < purgeBatch {
			return err
		}
	}
}

// load rebuilds the pools from the work list (the tickets they lack) and the acceptance
// deadlines from the matches: at the start, and every catchUpInterval.
func (l *MatchmakingLoop) load(ctx context.Context) error {
	var ids []string
	err := l.s.view(ctx, func(tx store.Tx) error {
		ids = ids[:0]
		waits, err := tx.List(kindMatchWait, store.ListOptions{})
		for _, r := range waits {
			ids = append(ids, r.ID)
		}
		if err != nil {
			return err
		}
		matches, err := tx.List(kindMatch, store.ListOptions{})
		for _, r := range matches {
			var md matchDoc
			if unmarshal(r.Data, &md) == nil && md.Status == ticketAccepting {
				l.accepting[md.ID] = md.Deadline
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	return l.takeIn(ctx, slices.DeleteFunc(ids, l.pooled))
}

// pooled reports whether a ticket is in one of the pools.
func (l *MatchmakingLoop) pooled(id string) bool {
	for _, p := range l.pools {
		if p.matcher.Has(id) {
			return true
		}
	}
	return false
}

// intake takes the inbox's notes.
func (l *MatchmakingLoop) intake(ctx context.Context) error {
	for {
		taken, err := l.s.takeOutbox(ctx, MatchmakerAddress, intakeBatch, func(store.Tx, Message) error { return nil })
		if err != nil {
			return err
		}
		ids := make([]string, 0, len(taken))
		for _, m := range taken {
			var n ticketNote
			if err := unmarshal(m.Body, &n); err != nil {
				return err
			}
			ids = append(ids, n.ID)
		}
		if err := l.takeIn(ctx, ids); err != nil {
			return err
		}
		if len(taken) < intakeBatch {
			return nil
		}
	}
}

// intakeBatch is how many inbox notes one transaction takes.
const intakeBatch = 256

// takeIn brings the named tickets' pool membership up to date: QUEUED tickets start
// searching (with their event), SEARCHING ones join their pool, others leave it. Match
// notes register acceptance deadlines; configuration notes rebuild a changed pool.
func (l *MatchmakingLoop) takeIn(ctx context.Context, ids []string) error {
	var errs []error
	for _, id := range ids {
		if mid, ok := strings.CutPrefix(id, matchNote); ok {
			l.noteMatch(ctx, mid)
			continue
		}
		if cfg, ok := strings.CutPrefix(id, configNote); ok {
			errs = append(errs, l.noteConfig(ctx, cfg))
			continue
		}
		t, err := l.s.startSearching(ctx, id, l.estimate)
		if err == nil {
			err = l.place(ctx, id, t)
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// noteConfig rebuilds a configuration's pool if its settings changed (a deleted
// configuration has no tickets left to hold).
func (l *MatchmakingLoop) noteConfig(ctx context.Context, name string) error {
	if l.pools[name] == nil {
		return nil
	}
	_, err := l.pool(ctx, name)
	if hasErrorCode(err, api.NotFoundException) {
		delete(l.pools, name)
		return nil
	}
	return err
}

// noteMatch registers a match waiting for acceptance.
func (l *MatchmakingLoop) noteMatch(ctx context.Context, id string) {
	var md matchDoc
	if l.s.read(ctx, kindMatch, id, &md, func() error { return errNoRecord }) == nil && md.Status == ticketAccepting {
		l.accepting[id] = md.Deadline
	}
}

// place puts a searching ticket in its configuration's pool (with the rule set's defaults
// filled in), or takes a ticket that is not searching out of every pool. A ticket its
// configuration's rule set no longer accepts (the configuration now names another rule set)
// FAILS.
func (l *MatchmakingLoop) place(ctx context.Context, id string, t *ticketDoc) error {
	if t == nil || t.Status != ticketSearching {
		for _, p := range l.pools {
			p.matcher.Remove(id)
		}
		return nil
	}
	p, err := l.pool(ctx, t.Config)
	var apiErr *api.Error
	if errors.As(err, &apiErr) {
		return l.s.failSearching(ctx, id, "The ticket's matchmaking configuration cannot be used: "+apiErr.Message)
	}
	if err != nil || p.matcher.Has(id) {
		return err
	}
	ft := t.flex()
	for i := range ft.Players {
		if err := p.rs.Prepare(&ft.Players[i]); err != nil {
			return l.s.failSearching(ctx, id, "The configuration's rule set does not accept the ticket: "+err.Error()+".")
		}
	}
	if p.matcher.Add(ft) == nil {
		heap.Push(&p.deadlines, ticketDeadline{id: id, at: t.Deadline})
	}
	return nil
}

// pool returns a configuration's pool, (re)building it when its rule set or
// AdditionalPlayerCount changed; the old pool's tickets move to the new one.
func (l *MatchmakingLoop) pool(ctx context.Context, config string) (*pool, error) {
	var cfg *matchConfigDoc
	var rsDoc *ruleSetDoc
	var rs *flexmatch.RuleSet
	err := l.s.view(ctx, func(tx store.Tx) error {
		var err error
		if _, cfg, err = l.s.matchConfigTx(tx, config); err != nil {
			return err
		}
		rsDoc, rs, err = l.s.ruleSetTx(tx, cfg.RuleSetName)
		return err
	})
	if err != nil {
		return nil, err
	}
	key := rsDoc.ARN + "@" + strconv.FormatInt(rsDoc.Created, 10) + "+" + strconv.Itoa(int(cfg.AdditionalPlayers))
	old := l.pools[config]
	if old != nil && old.ruleSet == key {
		return old, nil
	}
	p := &pool{ruleSet: key, rs: rs, matcher: flexmatch.NewMatcher(rs, flexmatch.Options{AdditionalPlayers: int(cfg.AdditionalPlayers)})}
	l.pools[config] = p
	if old != nil {
		return p, l.move(ctx, old)
	}
	return p, nil
}

// move puts the tickets of a replaced pool into the new one, as they are in the store.
func (l *MatchmakingLoop) move(ctx context.Context, old *pool) error {
	var errs []error
	for _, ft := range old.matcher.Tickets() {
		var t ticketDoc
		if err := l.s.read(ctx, kindMatchTicket, ft.ID, &t, func() error { return errNoRecord }); err != nil {
			errs = append(errs, ignoreNoRecord(err))
			continue
		}
		errs = append(errs, l.place(ctx, t.ID, &t))
	}
	return errors.Join(errs...)
}

// failSearching ends a QUEUED or SEARCHING ticket FAILED, with its event.
func (s *Service) failSearching(ctx context.Context, id, message string) error {
	return s.update(ctx, func(tx store.Tx) error {
		var t ticketDoc
		rec, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
		if err != nil || (t.Status != ticketSearching && t.Status != ticketQueued) {
			return ignoreNoRecord(err)
		}
		return s.endTicket(tx, rec, &t, ticketFailed, "", message, true)
	})
}

// estimate is a configuration's current wait estimate in seconds (0: none yet).
func (l *MatchmakingLoop) estimate(config string) int32 { return int32(l.estimates[config] + 0.5) }

// flex converts a stored ticket for the matcher.
func (t *ticketDoc) flex() *flexmatch.Ticket {
	ft := &flexmatch.Ticket{ID: t.ID, Start: time.UnixMilli(t.Start), Backfill: t.Backfill}
	for i := range t.Players {
		ft.Players = append(ft.Players, t.Players[i].flex())
	}
	return ft
}

// startSearching moves a QUEUED ticket to SEARCHING (with MatchmakingSearching) and returns
// the ticket as it now is; nil when it does not exist.
func (s *Service) startSearching(ctx context.Context, id string, estimate func(string) int32) (*ticketDoc, error) {
	var out *ticketDoc
	err := s.update(ctx, func(tx store.Tx) error {
		var t ticketDoc
		rec, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
		if err != nil {
			out = nil
			return ignoreNoRecord(err)
		}
		out = &t
		if t.Status != ticketQueued {
			return nil
		}
		_, cfg, err := s.matchConfigTx(tx, t.Config)
		if err != nil {
			return err
		}
		t.Status, t.Estimate = ticketSearching, estimate(t.Config)
		if err := putDoc(tx, rec, &t); err != nil {
			return err
		}
		return s.matchEvent(tx, cfg, evSearching, []*ticketDoc{&t}, nil, func(d *matchDetail) {
			d.EstimatedWaitMillis = "NOT_AVAILABLE"
			if t.Estimate > 0 {
				d.EstimatedWaitMillis = int64(t.Estimate) * 1000
			}
		})
	})
	return out, err
}

// expire times out the tickets whose RequestTimeoutSeconds passed while searching.
func (l *MatchmakingLoop) expire(ctx context.Context) error {
	now := l.s.nowMillis()
	var errs []error
	for _, p := range l.pools {
		for len(p.deadlines) > 0 && p.deadlines[0].at <= now {
			d := heap.Pop(&p.deadlines).(ticketDeadline)
			if !p.matcher.Has(d.id) {
				continue
			}
			if err := l.s.timeOutTicket(ctx, d.id); err != nil {
				heap.Push(&p.deadlines, d)
				errs = append(errs, err)
				break
			}
			p.matcher.Remove(d.id)
		}
	}
	return errors.Join(errs...)
}

// timeOutTicket ends a ticket TIMED_OUT if it is still searching past its deadline.
func (s *Service) timeOutTicket(ctx context.Context, id string) error {
	return s.update(ctx, func(tx store.Tx) error {
		var t ticketDoc
		rec, err := getDoc(tx, kindMatchTicket, id, &t, func() error { return errNoRecord })
		if err != nil || (t.Status != ticketSearching && t.Status != ticketQueued) || t.Deadline > s.nowMillis() {
			return ignoreNoRecord(err)
		}
		return s.endTicket(tx, rec, &t, ticketTimedOut, "TimedOut", "Removed from matchmaking due to timing out.", true)
	})
}

// expireAcceptances breaks the matches whose AcceptanceTimeoutSeconds passed.
func (l *MatchmakingLoop) expireAcceptances(ctx context.Context) error {
	now := l.s.nowMillis()
	var errs []error
	for id, at := range l.accepting {
		if at > now {
			continue
		}
		if err := l.s.acceptanceTimedOut(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(l.accepting, id)
	}
	return errors.Join(errs...)
}

// match steps every pool and commits what it proposes. A proposal holding a ticket that
// stopped searching meanwhile is dropped; its other tickets go back into the pool.
func (l *MatchmakingLoop) match(ctx context.Context) error {
	now := l.s.clock.Now()
	var errs []error
	for config, p := range l.pools {
		for _, fm := range p.matcher.Step(now) {
			err := l.s.update(ctx, func(tx store.Tx) error {
				_, cfg, err := l.s.matchConfigTx(tx, config)
				if err != nil {
					return err
				}
				return l.s.proposeTx(tx, cfg, fm)
			})
			switch {
			case err == nil:
				l.learn(config, fm, now)
			case errors.Is(err, errStaleMatch):
				l.requeue(ctx, config, fm)
			default:
				l.requeue(ctx, config, fm)
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// requeue rereads the tickets of a proposal that did not commit and puts those still
// searching back into their pool; a ticket that cannot be read goes back as it was (a note
// or the catch-up corrects it if it changed meanwhile).
func (l *MatchmakingLoop) requeue(ctx context.Context, config string, fm *flexmatch.Match) {
	for _, ft := range fm.Tickets {
		var t ticketDoc
		err := l.s.read(ctx, kindMatchTicket, ft.ID, &t, func() error { return errNoRecord })
		switch {
		case err == nil:
			_ = l.place(ctx, t.ID, &t) // an error leaves it to the catch-up
		case !errors.Is(err, errNoRecord) && l.pools[config] != nil:
			_ = l.pools[config].matcher.Add(ft)
		}
	}
}

// learn folds a match's waiting times into its configuration's estimate.
func (l *MatchmakingLoop) learn(config string, fm *flexmatch.Match, now time.Time) {
	for _, t := range fm.Tickets {
		wait := now.Sub(t.Start).Seconds()
		old, ok := l.estimates[config]
		if !ok {
			old = wait
		}
		l.estimates[config] = 0.9*old + 0.1*wait
	}
}

// Pooled reports how many tickets the loop holds in memory for a configuration.
func (l *MatchmakingLoop) Pooled(config string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	if p := l.pools[config]; p != nil {
		return p.matcher.Len()
	}
	return 0
}

// ticketDeadline is a ticket's request deadline in a pool.
type ticketDeadline struct {
	id string
	at int64
}

// deadlineHeap orders ticket deadlines, earliest first.
type deadlineHeap []ticketDeadline

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h deadlineHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *deadlineHeap) Push(x any)        { *h = append(*h, x.(ticketDeadline)) }
func (h *deadlineHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
