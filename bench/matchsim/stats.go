package matchsim

import (
	"math"
	"slices"
	"time"
)

// Summary is a distribution's size, mean and percentiles (nearest rank), in the unit its
// field name or context gives.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	Min  float64 `json:"min"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// summarize computes a Summary; it sorts xs in place.
func summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{}
	}
	slices.Sort(xs)
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return Summary{N: len(xs), Mean: sum / float64(len(xs)), Min: xs[0],
		P50: rank(xs, 0.50), P90: rank(xs, 0.90), P99: rank(xs, 0.99), Max: xs[len(xs)-1]}
}

// rank is the nearest-rank q-quantile of sorted xs.
func rank(xs []float64, q float64) float64 {
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

// durations converts durations to floats in unit.
func durations(ds []time.Duration, unit time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d) / float64(unit)
	}
	return out
}

// fmtDur formats a duration with about three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return trimFloat(d.Seconds(), "s")
	case d >= time.Millisecond:
		return trimFloat(float64(d)/float64(time.Millisecond), "ms")
	case d >= time.Microsecond:
		return trimFloat(float64(d)/float64(time.Microsecond), "µs")
	}
	return trimFloat(float64(d), "ns")
}

// trimFloat formats x with three significant digits (more before the point) and a unit.
func trimFloat(x float64, unit string) string {
	switch {
	case x >= 100:
		return formatF(x, 0) + unit
	case x >= 10:
		return formatF(x, 1) + unit
	}
	return formatF(x, 2) + unit
}
