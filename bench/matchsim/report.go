package matchsim

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// Report is a run's summary, as printed (WriteText) or as JSON (WriteJSON). Real times are
// measured with the wall clock around the matcher's calls; virtual times are on the
// simulated clock.
type Report struct {
	RuleSet string `json:"rule_set"`
	// Tickets and Players count the population; ArrivalRate is its mean arrival rate in
	// tickets per virtual second (0 when they all arrive at once).
	Tickets     int     `json:"tickets"`
	Players     int     `json:"players"`
	ArrivalRate float64 `json:"arrival_rate_per_s"`
	StepMS      float64 `json:"step_ms"`
	TimeoutS    float64 `json:"timeout_s"`
	// VirtualS is the virtual time of the last step.
	VirtualS float64 `json:"virtual_s"`
	Steps    int     `json:"steps"`
	// Arrived = Matched + TimedOut + Left, in tickets.
	Arrived        int `json:"arrived"`
	Matched        int `json:"matched"`
	TimedOut       int `json:"timed_out"`
	Left           int `json:"left"`
	MatchedPlayers int `json:"matched_players"`
	Unexpected     int `json:"unexpected"`
	Matches        int `json:"matches"`
	MaxPool        int `json:"max_pool"`
	// MatcherS is the real time spent in Add, Remove and Step; MatchedPerS is Matched
	// divided by it: the benchmark figure.
	MatcherS    float64 `json:"matcher_s"`
	MatchedPerS float64 `json:"matched_per_matcher_s"`
	// StepUS is the real time of each step (its Add, Remove and Step calls), in
	// microseconds; MatchStepUS only of the steps that proposed at least one match.
	StepUS      Summary `json:"step_us"`
	MatchStepUS Summary `json:"match_step_us"`
	// TimeToMatchMS is the matched tickets' virtual time from arrival to the proposing Step.
	TimeToMatchMS   Summary    `json:"time_to_match_ms"`
	PlayersPerMatch Summary    `json:"players_per_match"`
	Expansions      []Bucket   `json:"expansions"`
	Quality         []Quality  `json:"quality"`
	Unmeasured      []RuleInfo `json:"unmeasured_rules,omitempty"`
}

// Bucket counts the matches whose expansion age fell in [FromS, ToS) (ToS 0: no bound):
// the buckets are cut at the rule set's expansion wait times.
type Bucket struct {
	FromS   float64 `json:"from_s"`
	ToS     float64 `json:"to_s,omitempty"`
	Matches int     `json:"matches"`
}

// Quality is one rule's per-match statistic over the run's matches.
type Quality struct {
	Rule   string `json:"rule"`
	Type   string `json:"type"`
	Metric string `json:"metric"`
	Unit   string `json:"unit"`
	Summary
}

// RuleInfo names a rule without a per-match statistic.
type RuleInfo struct {
	Rule string `json:"rule"`
	Type string `json:"type"`
}

// NewReport summarises a run.
func NewReport(res *Result) *Report {
	cfg := res.Config
	rep := &Report{RuleSet: res.RuleSet.Name, Tickets: res.Tickets, Players: res.Players,
		StepMS: ms(cfg.Step), TimeoutS: cfg.Timeout.Seconds(), VirtualS: res.End.Seconds(), Steps: len(res.Steps),
		Arrived: res.Arrived, Matched: res.Matched, TimedOut: res.TimedOut, Left: res.Left,
		MatchedPlayers: res.MatchedPlayers, Unexpected: res.Unexpected, Matches: len(res.Matches),
		MatcherS: res.MatcherTime.Seconds()}
	rep.ArrivalRate = arrivalRate(res)
	if rep.MatcherS > 0 {
		rep.MatchedPerS = float64(res.Matched) / rep.MatcherS
	}
	rep.stepFigures(res.Steps)
	rep.matchFigures(res)
	return rep
}

// ms is a duration in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// arrivalRate is the mean arrival rate: tickets after the first per second until the last.
func arrivalRate(res *Result) float64 {
	span := res.LastArrival - res.FirstArrival
	if span <= 0 || res.Arrived < 2 {
		return 0
	}
	return float64(res.Arrived-1) / span.Seconds()
}

// stepFigures summarises the steps' real latency and the pool size.
func (rep *Report) stepFigures(steps []StepRecord) {
	var all, matching []time.Duration
	for _, s := range steps {
		all = append(all, s.Took)
		if s.Matches > 0 {
			matching = append(matching, s.Took)
		}
		rep.MaxPool = max(rep.MaxPool, s.Pool)
	}
	rep.StepUS = summarize(durations(all, time.Microsecond))
	rep.MatchStepUS = summarize(durations(matching, time.Microsecond))
}

// matchFigures summarises times to match, match sizes, expansions and quality.
func (rep *Report) matchFigures(res *Result) {
	waits := make([]time.Duration, len(res.Waits))
	for i, w := range res.Waits {
		waits[i] = w.Wait
	}
	rep.TimeToMatchMS = summarize(durations(waits, time.Millisecond))
	sizes := make([]float64, len(res.Matches))
	for i, m := range res.Matches {
		sizes[i] = float64(m.Players)
	}
	rep.PlayersPerMatch = summarize(sizes)
	rep.Expansions = expansionBuckets(res.RuleSet, res.Matches)
	rep.Quality, rep.Unmeasured = quality(res)
}

// expansionWaits are the rule set's distinct expansion wait times, ascending, after 0.
func expansionWaits(rs *flexmatch.RuleSet) []time.Duration {
	waits := []time.Duration{0}
	for _, e := range rs.Expansions {
		for _, s := range e.Steps {
			waits = append(waits, s.Wait)
		}
	}
	slices.Sort(waits)
	return slices.Compact(waits)
}

// expansionBuckets counts matches by expansion age, cut at the expansion wait times.
func expansionBuckets(rs *flexmatch.RuleSet, matches []MatchRecord) []Bucket {
	waits := expansionWaits(rs)
	out := make([]Bucket, len(waits))
	for i, w := range waits {
		out[i].FromS = w.Seconds()
		if i+1 < len(waits) {
			out[i].ToS = waits[i+1].Seconds()
		}
	}
	for _, m := range matches {
		i, found := slices.BinarySearch(waits, m.ExpansionAge)
		if !found {
			i--
		}
		out[i].Matches++
	}
	return out
}

// quality summarises each metric over the matches it applies to, and lists the rules
// without one.
func quality(res *Result) ([]Quality, []RuleInfo) {
	var out []Quality
	for i, m := range res.Metrics {
		var xs []float64
		for _, mr := range res.Matches {
			if mr.ok[i] {
				xs = append(xs, mr.Quality[i])
			}
		}
		out = append(out, Quality{Rule: m.Rule, Type: m.RuleType, Metric: m.Name, Unit: m.Unit, Summary: summarize(xs)})
	}
	var none []RuleInfo
	for _, r := range res.RuleSet.Rules {
		if !slices.ContainsFunc(res.Metrics, func(m Metric) bool { return m.Rule == r.Name }) {
			none = append(none, RuleInfo{Rule: r.Name, Type: r.Type})
		}
	}
	return out, none
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteText writes the report as plain text.
func (rep *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	rep.writeRun(tw)
	rep.writeMatcher(tw)
	rep.writeMatches(tw)
	rep.writeQuality(tw)
	return tw.Flush()
}

// writeRun writes the population and ticket accounting.
func (rep *Report) writeRun(w io.Writer) {
	fmt.Fprintf(w, "hoist matchsim: rule set %q\n", rep.RuleSet)
	fmt.Fprintf(w, "population\t%d tickets, %d players, arriving at %s tickets/s\n", rep.Tickets, rep.Players, formatF(rep.ArrivalRate, 1))
	fmt.Fprintf(w, "run\tstep %s, timeout %s, %s of virtual time, %d steps, pool at most %d tickets\n",
		fmtDur(msDur(rep.StepMS)), fmtDur(time.Duration(rep.TimeoutS*float64(time.Second))), fmtDur(time.Duration(rep.VirtualS*float64(time.Second))), rep.Steps, rep.MaxPool)
	fmt.Fprintf(w, "tickets\tarrived %d = matched %d (%s%%) + timed out %d + left %d\n",
		rep.Arrived, rep.Matched, formatF(percent(rep.Matched, rep.Arrived), 2), rep.TimedOut, rep.Left)
	if rep.Unexpected > 0 {
		fmt.Fprintf(w, "!!! %d matched tickets were not waiting in the pool (matcher bug)\n", rep.Unexpected)
	}
}

// writeMatcher writes the real-time figures.
func (rep *Report) writeMatcher(w io.Writer) {
	fmt.Fprintf(w, "\nmatcher (real time)\n")
	fmt.Fprintf(w, "  matcher time\t%s in Add, Remove and Step\n", fmtDur(time.Duration(rep.MatcherS*float64(time.Second))))
	fmt.Fprintf(w, "  throughput\t%s tickets matched per second of matcher time\n", formatF(rep.MatchedPerS, 0))
	fmt.Fprintf(w, "  step latency\t%s\t(all %d steps)\n", durRow(rep.StepUS, time.Microsecond), rep.StepUS.N)
	fmt.Fprintf(w, "  matching steps\t%s\t(%d steps that proposed a match)\n", durRow(rep.MatchStepUS, time.Microsecond), rep.MatchStepUS.N)
}

// writeMatches writes time to match, match sizes and expansions.
func (rep *Report) writeMatches(w io.Writer) {
	fmt.Fprintf(w, "\nmatches (virtual time)\n")
	fmt.Fprintf(w, "  time to match\t%s\t(%d tickets, arrival to the proposing step)\n", durRow(rep.TimeToMatchMS, time.Millisecond), rep.TimeToMatchMS.N)
	fmt.Fprintf(w, "  players/match\t%s\t(%d matches)\n", numRow(rep.PlayersPerMatch), rep.Matches)
	fmt.Fprintf(w, "  expansion age\t")
	for i, b := range rep.Expansions {
		if i > 0 {
			fmt.Fprint(w, ", ")
		}
		fmt.Fprintf(w, "%s: %d (%s%%)", b.label(), b.Matches, formatF(percent(b.Matches, rep.Matches), 1))
	}
	fmt.Fprintln(w)
}

// writeQuality writes the per-rule statistics.
func (rep *Report) writeQuality(w io.Writer) {
	fmt.Fprintf(w, "\nmatch quality (per match)\n")
	for _, q := range rep.Quality {
		fmt.Fprintf(w, "  %s (%s)\t%s (%s)\t%s\n", q.Rule, q.Type, q.Metric, q.Unit, numRow(q.Summary))
	}
	for _, r := range rep.Unmeasured {
		fmt.Fprintf(w, "  %s (%s)\tno per-match statistic\n", r.Rule, r.Type)
	}
}

// label is a bucket's range, e.g. "5s-10s" or "15s+".
func (b Bucket) label() string {
	if b.ToS == 0 {
		return formatF(b.FromS, 0) + "s+"
	}
	return formatF(b.FromS, 0) + "s-" + formatF(b.ToS, 0) + "s"
}

// durRow formats a duration Summary held in unit.
func durRow(s Summary, unit time.Duration) string {
	if s.N == 0 {
		return "-"
	}
	d := func(x float64) string { return fmtDur(time.Duration(x * float64(unit))) }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  mean %s", d(s.P50), d(s.P90), d(s.P99), d(s.Max), d(s.Mean))
}

// numRow formats a number Summary.
func numRow(s Summary) string {
	if s.N == 0 {
		return "-"
	}
	f := func(x float64) string { return formatF(x, 1) }
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  max %s  mean %s  (min %s)", f(s.P50), f(s.P90), f(s.P99), f(s.Max), f(s.Mean), f(s.Min))
}

// msDur converts milliseconds to a duration.
func msDur(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// percent is 100 a / b, 0 when b is 0.
func percent(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

// formatF formats x with prec decimals, dropping a trailing ".0…".
func formatF(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if prec > 0 && s[len(s)-prec-1:] == "."+strings.Repeat("0", prec) {
		return s[:len(s)-prec-1]
	}
	return s
}
