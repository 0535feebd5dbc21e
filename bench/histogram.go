package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram layout: values below 2*histSub are counted exactly; above that, each power-of-two
// range [2^k, 2^(k+1)) is split into histSub equal-width buckets, so a bucket is never wider
// than 1/histSub of its lower bound (1.6 % relative error for histSub = 64).
const (
	histSubBits = 6
	histSub     = 1 << histSubBits
	histLinear  = 2 * histSub
	// histBuckets covers every non-negative int64: the largest shift is 63-histSubBits-1.
	histBuckets = histLinear + (63-histSubBits-1)*histSub
)

// Histogram records durations in fixed memory (about 30 KiB, whatever the count) with a
// relative error of at most 1/64 per recorded value. The zero value is an empty histogram
// ready to use. A Histogram is not safe for concurrent use: give each goroutine its own and
// Merge them afterwards.
type Histogram struct {
	counts [histBuckets]uint64
	n      uint64
	sum    float64
	min    int64
	max    int64
}

// bucketOf returns the bucket index of a non-negative value.
func bucketOf(v int64) int {
	if v < histLinear {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - histSubBits - 1
	return histLinear + (shift-1)*histSub + int(v>>shift) - histSub
}

// bucketRange returns the smallest and largest value that fall into bucket i.
func bucketRange(i int) (lo, hi int64) {
	if i < histLinear {
		return int64(i), int64(i)
	}
	shift := (i-histLinear)/histSub + 1
	m := int64((i-histLinear)%histSub + histSub)
	lo = m << shift
	return lo, lo + (int64(1) << shift) - 1
}

// Record adds one duration; negative durations count as zero.
func (h *Histogram) Record(d time.Duration) {
	v := max(int64(d), 0)
	h.counts[bucketOf(v)]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.n++
	h.sum += float64(v)
}

// Merge adds every value recorded in o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.n += o.n
	h.sum += o.sum
}

// Count returns how many values were recorded.
func (h *Histogram) Count() uint64 { return h.n }

// Min returns the smallest recorded value exactly (0 when empty).
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max returns the largest recorded value exactly (0 when empty).
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean returns the exact mean of the recorded values (0 when empty).
func (h *Histogram) Mean() time.Duration {
	if h.n == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.n))
}

// Quantile returns the value at quantile q (0 < q <= 1; 0.99 is p99): the smallest recorded
// value v such that at least q of all values are <= v, up to the bucket resolution. It reports
// the middle of the bucket that holds that value, clamped to the exact Min and Max, and 0 when
// the histogram is empty.
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bucketRange(i)
			mid := lo + (hi-lo)/2
			return time.Duration(min(max(mid, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}
