package metrics

import (
	"math"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/metrics/statsd"
)

// Tags the Server SDKs add to every sample (global tags): the process ID Hoist gave the
// process (GAMELIFT_SDK_PROCESS_ID), which attributes the sample, and the OS process ID.
// Neither becomes a label: process_id already says it.
const (
	processIDTag  = "gamelift_process_id"
	processPIDTag = "process_pid"
)

// Bounds of one sample's labels.
const (
	maxGameTags     = 16
	maxLabelValue   = 128
	maxSetMembers   = 10000
	gamePrefix      = "hoist_game_"
	kindCounter     = "counter"
	kindGauge       = "gauge"
	kindHistogram   = "histogram"
	kindSummary     = "summary"
	reasonConflict  = "type_conflict"
	reasonNegative  = "negative_counter"
	reasonTooManyTg = "too_many_tags"
)

// gameTimerBuckets are the bucket bounds, in seconds, of timers (ms samples).
var gameTimerBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// reservedLabels are label names a tag cannot take; such tags get the prefix tag_.
var reservedLabels = map[string]bool{"fleet_id": true, "location": true, "compute": true,
	"process_id": true, "le": true, "quantile": true}

// Series is one game series as it is kept and forwarded by an agent. Labels holds the tag
// labels' names and values alternately, sorted by name; Buckets the count of each bound of
// the timer buckets (not cumulative); Count and Sum the observations of histograms and
// summaries.
type Series struct {
	Name    string    `json:"n"`
	Kind    string    `json:"k"`
	Labels  []string  `json:"l,omitempty"`
	Value   float64   `json:"v,omitempty"`
	Count   float64   `json:"c,omitempty"`
	Sum     float64   `json:"s,omitempty"`
	Buckets []float64 `json:"b,omitempty"`
}

// gameSeries is a Series with the members of a set.
type gameSeries struct {
	Series
	members map[string]struct{}
}

func newGameSeries(name, kind string, labels []string) *gameSeries {
	s := &gameSeries{Series: Series{Name: name, Kind: kind, Labels: labels}}
	if kind == kindHistogram {
		s.Buckets = make([]float64, len(gameTimerBuckets))
	}
	return s
}

// familyName is the Prometheus name and kind of a DogStatsD metric.
func familyName(name string, t statsd.Type) (string, string) {
	base := gamePrefix + sanitize(name)
	switch t {
	case statsd.Counter:
		if !strings.HasSuffix(base, "_total") {
			base += "_total"
		}
		return base, kindCounter
	case statsd.Timer:
		return base + "_seconds", kindHistogram
	case statsd.Histogram, statsd.Distribution:
		return base, kindSummary
	case statsd.Set:
		return base + "_unique", kindGauge
	}
	return base, kindGauge
}

// kindOf is the kind a sample type makes.
func kindOf(t statsd.Type) string {
	_, k := familyName("", t)
	return k
}

// sanitize replaces every character not allowed in a Prometheus name with _.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	return string(b)
}

// labelName is the label a tag key becomes; "" for none.
func labelName(key string) string {
	n := sanitize(key)
	if n == "" {
		return ""
	}
	if n[0] >= '0' && n[0] <= '9' || strings.HasPrefix(n, "__") || reservedLabels[n] {
		n = "tag_" + n
	}
	return n
}

// labelValue bounds a tag value and makes it valid UTF-8.
func labelValue(v string) string {
	if len(v) > maxLabelValue {
		v = v[:maxLabelValue]
	}
	return strings.ToValidUTF8(v, "\uFFFD")
}

// tagLabels turns tags into sorted label pairs (a later tag of a key wins); false when
// there are too many.
func tagLabels(tags []statsd.Tag) ([]string, bool) {
	m := map[string]string{}
	for _, t := range tags {
		if t.Key == processIDTag || t.Key == processPIDTag {
			continue
		}
		if n := labelName(t.Key); n != "" {
			m[n] = labelValue(t.Value)
		}
	}
	if len(m) > maxGameTags {
		return nil, false
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	pairs := make([]string, 0, 2*len(names))
	for _, n := range names {
		pairs = append(pairs, n, m[n])
	}
	return pairs, true
}

// seriesKey identifies a series within a process.
func seriesKey(name string, labels []string) string {
	return name + "\x00" + strings.Join(labels, "\x00")
}

// add applies a sample; it returns the reason it was refused, or "".
func (s *gameSeries) add(smp statsd.Sample) string {
	if kindOf(smp.Type) != s.Kind {
		return reasonConflict
	}
	w := 1 / smp.Rate
	switch smp.Type {
	case statsd.Counter:
		return s.count(smp.Values, w)
	case statsd.Gauge:
		s.Value = smp.Values[len(smp.Values)-1]
	case statsd.Timer:
		for _, v := range smp.Values {
			s.observe(v/1000, w)
		}
	case statsd.Histogram, statsd.Distribution:
		for _, v := range smp.Values {
			s.Count += w
			s.Sum += v * w
		}
	case statsd.Set:
		s.addMembers(smp.Members)
	}
	return ""
}

// count adds counter values divided by the sample rate; negative ones are refused.
func (s *gameSeries) count(values []float64, w float64) string {
	for _, v := range values {
		if v < 0 {
			return reasonNegative
		}
	}
	for _, v := range values {
		s.Value += v * w
	}
	return ""
}

// observe adds one timer observation, in seconds, of weight w.
func (s *gameSeries) observe(v, w float64) {
	s.Count += w
	s.Sum += v * w
	if i, _ := slices.BinarySearch(gameTimerBuckets, v); i < len(s.Buckets) {
		s.Buckets[i] += w
	}
}

// addMembers adds set members (at most maxSetMembers) and sets the value to their number.
func (s *gameSeries) addMembers(members []string) {
	if s.members == nil {
		s.members = map[string]struct{}{}
	}
	for _, m := range members {
		if len(s.members) < maxSetMembers {
			s.members[m] = struct{}{}
		}
	}
	s.Value = float64(len(s.members))
}

// round is a weighted count as the integer Prometheus wants.
func round(f float64) uint64 { return uint64(math.Round(max(f, 0))) }
