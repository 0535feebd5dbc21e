package matchsim

import (
	"context"
	"time"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// Defaults of Config.
const (
	DefaultStep    = 10 * time.Millisecond
	DefaultTimeout = 120 * time.Second
)

// epoch is the virtual clock's origin: arrival offsets are added to it.
var epoch = time.Unix(1_700_000_000, 0).UTC()

// Config tunes a run.
type Config struct {
	// Step is the virtual interval between steps when no ticket arrives; DefaultStep when 0.
	Step time.Duration
	// Timeout is the virtual age at which a ticket is removed unmatched; DefaultTimeout when 0.
	Timeout time.Duration
	// MaxTime stops the run at this virtual time, leaving tickets in the pool; 0 runs until
	// every ticket has been matched or has timed out.
	MaxTime time.Duration
	// Options are passed to flexmatch.NewMatcher.
	Options flexmatch.Options
	// OnMatch, when set, is called with every match as it is proposed (tests check them).
	OnMatch func(at time.Duration, m *flexmatch.Match)
}

// withDefaults fills in the zero fields.
func (c Config) withDefaults() Config {
	if c.Step <= 0 {
		c.Step = DefaultStep
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Result is what a run measured, before summarising (NewReport).
type Result struct {
	RuleSet *flexmatch.RuleSet
	Config  Config
	// Metrics are the per-match quality statistics; MatchRecord.Quality follows their order.
	Metrics []Metric
	// Tickets and Players count the population.
	Tickets, Players int
	// Arrived, Matched, TimedOut and Left count tickets: Arrived = Matched + TimedOut + Left.
	Arrived, Matched, TimedOut, Left int
	// MatchedPlayers counts the players of matched tickets.
	MatchedPlayers int
	// Unexpected counts tickets a match held that were not waiting in the pool (proposed
	// twice, or after their timeout): a matcher bug when not 0.
	Unexpected int
	// Matches are the proposed matches, in order.
	Matches []MatchRecord
	// Waits are the matched tickets' times to match, in match order.
	Waits []Wait
	// Steps are the matcher's steps, in order.
	Steps []StepRecord
	// MatcherTime is the real time spent in the matcher's Add, Remove and Step calls.
	MatcherTime time.Duration
	// FirstArrival and LastArrival are the virtual times of the first and last arrival.
	FirstArrival, LastArrival time.Duration
	// End is the virtual time of the last step.
	End time.Duration
}

// MatchRecord is one proposed match.
type MatchRecord struct {
	// At is the virtual time of the Step that proposed it.
	At           time.Duration
	Tickets      int
	Players      int
	ExpansionAge time.Duration
	// Quality holds one value per Result.Metrics entry; ok[i] is false when the statistic
	// does not apply to this match (for example no latency Region).
	Quality []float64
	ok      []bool
}

// Wait is one matched ticket's virtual time to match.
type Wait struct {
	At, Wait time.Duration
}

// StepRecord is one step: its virtual time, the real time of that step's Add, Remove and
// Step calls, the tickets added, the matches proposed, and the pool size after it.
type StepRecord struct {
	At       time.Duration
	Took     time.Duration
	Arrivals int
	Matches  int
	Pool     int
}

// sim is the state of one run.
type sim struct {
	rs      *flexmatch.RuleSet
	cfg     Config
	m       *flexmatch.Matcher
	tickets []Ticket
	next    int                      // next ticket to arrive
	fifo    []int                    // arrived tickets, in arrival order (for timeouts)
	head    int                      // first fifo entry not yet checked for timeout
	pending map[string]time.Duration // arrival of every ticket in the pool
	res     *Result
}

// Run simulates the population's tickets through a matcher for rs. It stops early, with the
// context's error and the partial result, when ctx is done.
func Run(ctx context.Context, rs *flexmatch.RuleSet, pop *Population, cfg Config) (*Result, error) {
	cfg = cfg.withDefaults()
	s := &sim{rs: rs, cfg: cfg, m: flexmatch.NewMatcher(rs, cfg.Options), tickets: pop.Tickets,
		pending: map[string]time.Duration{}}
	s.res = &Result{RuleSet: rs, Config: cfg, Metrics: Metrics(rs), Tickets: len(pop.Tickets), Players: pop.Players()}
	var now, tick time.Duration
	for i := 0; s.more(); i++ {
		now, tick = s.advance(now, tick)
		if cfg.MaxTime > 0 && now > cfg.MaxTime {
			break
		}
		if i%1024 == 0 && ctx.Err() != nil {
			return s.finish(), ctx.Err()
		}
		if err := s.event(now); err != nil {
			return nil, err
		}
	}
	return s.finish(), nil
}

// more reports whether tickets are still to arrive or waiting in the pool.
func (s *sim) more() bool { return s.next < len(s.tickets) || len(s.pending) > 0 }

// advance picks the next step's time: the next arrival if it comes no later than the next
// tick (or the pool is empty, when ticks have nothing to do), else the next tick. tick is
// always the next point of the Step grid after now.
func (s *sim) advance(now, tick time.Duration) (time.Duration, time.Duration) {
	if s.next < len(s.tickets) {
		arr := s.tickets[s.next].Arrival
		if len(s.pending) == 0 || arr <= tick {
			if tick <= arr {
				tick = (arr/s.cfg.Step + 1) * s.cfg.Step
			}
			return arr, tick
		}
	}
	return tick, tick + s.cfg.Step
}

// event runs one step at virtual time now: the arrivals, the timeouts, then Step. Only the
// matcher's calls are timed.
func (s *sim) event(now time.Duration) error {
	arrivals := s.arrivals(now)
	expired := s.expired(now)
	start := time.Now()
	for _, t := range arrivals {
		if err := s.m.Add(t); err != nil {
			return err
		}
	}
	for _, id := range expired {
		s.m.Remove(id)
	}
	matches := s.m.Step(epoch.Add(now))
	took := time.Since(start)
	s.res.MatcherTime += took
	for _, mt := range matches {
		s.record(now, mt)
	}
	s.res.Steps = append(s.res.Steps, StepRecord{At: now, Took: took, Arrivals: len(arrivals), Matches: len(matches), Pool: len(s.pending)})
	return nil
}

// arrivals makes the matcher tickets of every ticket arriving by now.
func (s *sim) arrivals(now time.Duration) []*flexmatch.Ticket {
	var out []*flexmatch.Ticket
	for ; s.next < len(s.tickets) && s.tickets[s.next].Arrival <= now; s.next++ {
		t := &s.tickets[s.next]
		out = append(out, &flexmatch.Ticket{ID: t.ID, Players: t.Players, Start: epoch.Add(t.Arrival)})
		s.pending[t.ID] = t.Arrival
		s.fifo = append(s.fifo, s.next)
		if s.res.Arrived == 0 {
			s.res.FirstArrival = t.Arrival
		}
		s.res.LastArrival = t.Arrival
		s.res.Arrived++
	}
	return out
}

// expired lists the pool's tickets whose age has reached the timeout, and counts them out.
func (s *sim) expired(now time.Duration) []string {
	var out []string
	for ; s.head < len(s.fifo); s.head++ {
		t := &s.tickets[s.fifo[s.head]]
		if now-t.Arrival < s.cfg.Timeout {
			break
		}
		if _, ok := s.pending[t.ID]; ok {
			delete(s.pending, t.ID)
			out = append(out, t.ID)
		}
	}
	s.res.TimedOut += len(out)
	return out
}

// record accounts for one proposed match.
func (s *sim) record(now time.Duration, mt *flexmatch.Match) {
	rec := MatchRecord{At: now, Tickets: len(mt.Tickets), ExpansionAge: mt.ExpansionAge}
	for _, t := range mt.Tickets {
		if _, ok := s.pending[t.ID]; !ok {
			s.res.Unexpected++
		}
		s.res.Waits = append(s.res.Waits, Wait{At: now, Wait: now - s.pending[t.ID]})
		delete(s.pending, t.ID)
		rec.Players += len(t.Players)
	}
	rec.Quality, rec.ok = measure(s.res.Metrics, mt)
	s.res.Matched += rec.Tickets
	s.res.MatchedPlayers += rec.Players
	s.res.Matches = append(s.res.Matches, rec)
	if s.cfg.OnMatch != nil {
		s.cfg.OnMatch(now, mt)
	}
}

// finish counts the tickets left in the pool.
func (s *sim) finish() *Result {
	s.res.Left = len(s.pending)
	if n := len(s.res.Steps); n > 0 {
		s.res.End = s.res.Steps[n-1].At
	}
	return s.res
}
