// Package statsd reads the DogStatsD datagrams game servers send (Server SDK 5.6 InitMetrics):
// a parser of the line format and a UDP listener. docs/metrics.md ("Game server metrics")
// says how the samples become Prometheus series.
//
// The line format is
//
//	<name>:<value>[:<value>...]|<type>[|@<sample rate>][|#<tag>[:<value>],...][|<field>...]
//
// with type c (counter), g (gauge), ms (timer), h (histogram), d (distribution) or s (set),
// several lines per datagram separated by newlines. Other fields (c: container ID,
// T timestamp, e: external data) are accepted and ignored; events (_e{...) and service
// checks (_sc|...) are recognised and refused with ErrNotMetric.
package statsd

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Type is a DogStatsD metric type.
type Type string

// The metric types.
const (
	Counter      Type = "c"
	Gauge        Type = "g"
	Timer        Type = "ms"
	Histogram    Type = "h"
	Distribution Type = "d"
	Set          Type = "s"
)

// Limits of one line.
const (
	// MaxNameLen is the longest metric name accepted.
	MaxNameLen = 200
	// MaxValues is the most values one line may carry (name:1:2:3|h).
	MaxValues = 64
)

// ErrNotMetric is returned for events and service checks, which carry no metric.
var ErrNotMetric = errors.New("statsd: event or service check, not a metric")

// Tag is one DogStatsD tag; Value is empty for a tag without a colon.
type Tag struct {
	Key, Value string
}

// Sample is one parsed line.
type Sample struct {
	Name string
	Type Type
	// Values are the numbers of every type but Set; Members are the raw values of a Set.
	Values  []float64
	Members []string
	// Rate is the sample rate, in (0, 1]; 1 when the line gives none.
	Rate float64
	Tags []Tag
}

// ParseLine parses one line (without its newline).
func ParseLine(line string) (Sample, error) {
	if strings.HasPrefix(line, "_e{") || strings.HasPrefix(line, "_sc|") {
		return Sample{}, ErrNotMetric
	}
	head, rest, ok := strings.Cut(line, "|")
	if !ok {
		return Sample{}, fmt.Errorf("statsd: no type in %q", clip(line))
	}
	name, values, ok := strings.Cut(head, ":")
	if !ok || name == "" || len(name) > MaxNameLen {
		return Sample{}, fmt.Errorf("statsd: bad name in %q", clip(line))
	}
	typ, fields, _ := strings.Cut(rest, "|")
	s := Sample{Name: name, Type: Type(typ), Rate: 1}
	if err := s.setValues(values); err != nil {
		return Sample{}, err
	}
	if err := s.setFields(fields); err != nil {
		return Sample{}, err
	}
	return s, nil
}

// setValues parses the colon-separated values for the sample's type.
func (s *Sample) setValues(values string) error {
	parts := strings.Split(values, ":")
	if len(parts) > MaxValues {
		return fmt.Errorf("statsd: more than %d values", MaxValues)
	}
	switch s.Type {
	case Set:
		for _, p := range parts {
			if p == "" {
				return errors.New("statsd: empty set member")
			}
		}
		s.Members = parts
		return nil
	case Counter, Gauge, Timer, Histogram, Distribution:
	default:
		return fmt.Errorf("statsd: unknown type %q", clip(string(s.Type)))
	}
	for _, p := range parts {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("statsd: bad value %q", clip(p))
		}
		s.Values = append(s.Values, v)
	}
	return nil
}

// setFields parses the fields after the type: the sample rate and the tags.
func (s *Sample) setFields(fields string) error {
	for fields != "" {
		var f string
		f, fields, _ = strings.Cut(fields, "|")
		switch {
		case strings.HasPrefix(f, "@"):
			r, err := strconv.ParseFloat(f[1:], 64)
			if err != nil || !(r > 0 && r <= 1) {
				return fmt.Errorf("statsd: bad sample rate %q", clip(f))
			}
			s.Rate = r
		case strings.HasPrefix(f, "#"):
			s.Tags = parseTags(f[1:])
		}
	}
	return nil
}

// parseTags splits "k:v,k2,k3:v:w" into tags; empty ones are skipped.
func parseTags(list string) []Tag {
	var tags []Tag
	for _, t := range strings.Split(list, ",") {
		if t == "" {
			continue
		}
		k, v, _ := strings.Cut(t, ":")
		tags = append(tags, Tag{Key: k, Value: v})
	}
	return tags
}

// ParsePacket parses every line of a datagram and passes each sample, or the error of a line
// that does not parse, to each. Empty lines are skipped.
func ParsePacket(b []byte, each func(Sample, error)) {
	for len(b) > 0 {
		var line []byte
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			line, b = b, nil
		} else {
			line, b = b[:i], b[i+1:]
		}
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		if len(line) == 0 {
			continue
		}
		each(ParseLine(string(line)))
	}
}

// clip shortens what an error message quotes.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
