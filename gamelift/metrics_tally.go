package gamelift

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// Tallies are the durable counters behind the metrics of things that happened (placements
// that ended, matches created, processes activated, fleet events). Each is a small record
// updated in the transaction of the change it counts, so a count exists exactly when its
// change committed, whichever node made it, and survives restarts. Tallies are never reset;
// they are deleted with nothing (a deleted queue's tally stays, as CloudWatch keeps its
// history).
const kindTally = "metrictally"

// Tally scopes: the Parent of a tally record, and the prefix of its ID.
const (
	tallyFleet       = "fleet"
	tallyQueue       = "queue"
	tallyMatchmaking = "matchmaking"
)

// tallyDoc is one tally record: counts by key, and sums (in seconds) by key.
type tallyDoc struct {
	Counts map[string]int64   `json:"c,omitempty"`
	Sums   map[string]float64 `json:"s,omitempty"`
}

func (d *tallyDoc) add(key string, n int64) {
	if d.Counts == nil {
		d.Counts = map[string]int64{}
	}
	d.Counts[key] += n
}

func (d *tallyDoc) addSum(key string, v float64) {
	if d.Sums == nil {
		d.Sums = map[string]float64{}
	}
	d.Sums[key] += v
}

// tally updates, in tx, the tally of name in scope with change.
func (s *Service) tally(tx store.Tx, scope, name string, change func(*tallyDoc)) error {
	id := scope + "/" + name
	var d tallyDoc
	rec, err := getDoc(tx, kindTally, id, &d, func() error { return errNoRecord })
	switch {
	case errors.Is(err, errNoRecord):
		change(&d)
		err = insertChild(tx, kindTally, id, scope, &d)
		if errors.Is(err, store.ErrExists) { // another transaction created it first
			return fmt.Errorf("%w: %w", store.ErrConflict, err)
		}
		return err
	case err != nil:
		return err
	}
	change(&d)
	return putDoc(tx, rec, &d)
}

// tallies reads every tally of scope, by name.
func (s *Service) tallies(ctx context.Context, scope string) (map[string]*tallyDoc, error) {
	out := map[string]*tallyDoc{}
	err := s.view(ctx, func(tx store.Tx) error {
		clear(out)
		return eachChild(tx, kindTally, scope, func(r *store.Record, d *tallyDoc) error {
			out[strings.TrimPrefix(r.ID, scope+"/")] = d
			return nil
		})
	})
	return out, err
}

// Tally keys of a fleet (besides fleet event codes, which are counted under their code).
const (
	tallyActivations  = "activations"
	tallyTerminations = "terminations"
)

// tallyFleetEvent counts a fleet event by its code.
func (s *Service) tallyFleetEvent(tx store.Tx, fleetID, code string) error {
	return s.tally(tx, tallyFleet, fleetID, func(d *tallyDoc) { d.add(code, 1) })
}

// tallyEvent counts an event for subscribers as it is recorded (emitEvent): placement
// outcomes per queue, matchmaking events per configuration with their rule evaluations and
// times to match.
func (s *Service) tallyEvent(tx store.Tx, resource string, detail any) error {
	_, name, _ := strings.Cut(resource[strings.LastIndexByte(resource, ':')+1:], "/")
	switch d := detail.(type) {
	case placementDetail:
		return s.tally(tx, tallyQueue, name, func(t *tallyDoc) { t.add(d.Type, 1) })
	case *matchDetail:
		return s.tally(tx, tallyMatchmaking, name, func(t *tallyDoc) { s.countMatchEvent(t, d) })
	}
	return nil
}

// Time-to-match tally keys: the count and sum, and one count per histogram bound.
const (
	tallyTimeToMatch       = "time_to_match"
	tallyTimeToMatchBucket = "time_to_match_le_"
)

// TimeToMatchBuckets are the upper bounds (seconds) of the time-to-match histogram.
var TimeToMatchBuckets = []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600}

// countMatchEvent adds a matchmaking event to its configuration's tally: its type, the
// acceptance outcome, rule evaluations, and for a potential match each ticket's time to match.
func (s *Service) countMatchEvent(t *tallyDoc, d *matchDetail) {
	t.add(d.Type, 1)
	if d.Type == evAcceptCompleted {
		t.add("acceptance_"+d.Acceptance, 1)
	}
	for _, m := range d.RuleEvaluationMetrics {
		t.add("rule_passed/"+m.RuleName, int64(m.PassedCount))
		t.add("rule_failed/"+m.RuleName, int64(m.FailedCount))
	}
	if d.Type != evPotentialMatch {
		return
	}
	now := s.clock.Now()
	for _, tk := range d.Tickets {
		start, err := time.Parse("2006-01-02T15:04:05.000Z", tk.StartTime)
		if err != nil {
			continue
		}
		secs := max(now.Sub(start).Seconds(), 0)
		t.add(tallyTimeToMatch, 1)
		t.addSum(tallyTimeToMatch, secs)
		for _, b := range TimeToMatchBuckets {
			if secs <= b {
				t.add(fmt.Sprintf("%s%g", tallyTimeToMatchBucket, b), 1)
			}
		}
	}
}
