package bench

import (
	"math"
	"testing"
	"time"
)

func TestHistogramSmallValuesAreExact(t *testing.T) {
	var h Histogram
	for v := 100; v >= 1; v-- {
		h.Record(time.Duration(v))
	}
	cases := map[float64]time.Duration{0.01: 1, 0.5: 50, 0.9: 90, 0.99: 99, 1: 100}
	for q, want := range cases {
		if got := h.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if h.Count() != 100 || h.Min() != 1 || h.Max() != 100 {
		t.Errorf("count/min/max = %d/%v/%v, want 100/1ns/100ns", h.Count(), h.Min(), h.Max())
	}
	if h.Mean() != 50 { // 50.5 truncated
		t.Errorf("Mean = %v, want 50ns", h.Mean())
	}
}

func TestHistogramPercentilesWithinResolution(t *testing.T) {
	var h Histogram
	for i := 1; i <= 10000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	cases := map[float64]time.Duration{
		0.5: 5000 * time.Microsecond, 0.9: 9000 * time.Microsecond,
		0.99: 9900 * time.Microsecond, 0.999: 9990 * time.Microsecond,
	}
	for q, want := range cases {
		got := h.Quantile(q)
		if rel := math.Abs(float64(got-want)) / float64(want); rel > 1.0/histSub {
			t.Errorf("Quantile(%v) = %v, want %v within 1/%d (off by %.4f)", q, got, want, histSub, rel)
		}
	}
	if h.Max() != 10*time.Millisecond || h.Quantile(1) != 10*time.Millisecond {
		t.Errorf("Max = %v, Quantile(1) = %v, want exactly 10ms", h.Max(), h.Quantile(1))
	}
}

func TestHistogramBucketsCoverEveryValue(t *testing.T) {
	values := []int64{0, 1, 127, 128, 129, 255, 256, 1000, 123456789, 1 << 40, math.MaxInt64}
	for v := int64(1); v < 1<<20; v = v*3 + 1 {
		values = append(values, v)
	}
	for _, v := range values {
		i := bucketOf(v)
		if i < 0 || i >= histBuckets {
			t.Fatalf("bucketOf(%d) = %d, out of range", v, i)
		}
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Errorf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if spread := float64(hi - lo); lo > 0 && spread/float64(lo) > 1.0/histSub {
			t.Errorf("bucket %d [%d, %d] is wider than 1/%d of its start", i, lo, hi, histSub)
		}
	}
}

func TestHistogramMergeEqualsSingle(t *testing.T) {
	var a, b, all Histogram
	for i := 0; i < 5000; i++ {
		d := time.Duration(i*i) * time.Nanosecond
		all.Record(d)
		if i%2 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(&Histogram{})
	if m != all {
		t.Fatalf("merged histogram differs from one that recorded everything")
	}
}

func TestHistogramEmpty(t *testing.T) {
	var h Histogram
	if h.Quantile(0.99) != 0 || h.Max() != 0 || h.Mean() != 0 || h.Count() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	h.Record(-time.Second)
	if h.Quantile(0.5) != 0 || h.Count() != 1 {
		t.Fatal("a negative duration should count as zero")
	}
}
