package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// maxErrorSamples is how many error descriptions a run keeps to print.
const maxErrorSamples = 3

// Load describes one measured run of one template.
type Load struct {
	Concurrency int           // number of clients (goroutines), each with at most one request in flight
	Duration    time.Duration // how long to issue requests; used when Requests is 0
	Requests    int64         // total requests to issue; 0 means run for Duration
	Rate        float64       // requests per second for an open-loop run; 0 means closed loop
}

// Result is the outcome of one run.
type Result struct {
	Target       string        // "bare" or "hoist"
	Protocol     Protocol      // wire protocol used
	Mode         string        // "max" (closed loop) or the open-loop rate, e.g. "half" or "2000/s"
	OfferedRate  float64       // requests per second asked for in an open-loop run, else 0
	Requests     uint64        // responses received (successes and errors)
	Errors       uint64        // transport errors and responses other than 200
	Elapsed      time.Duration // from the first request to the last response
	Latency      Histogram     // latency of successful requests
	ErrorSamples []string      // the first few errors, for the report
}

// Throughput returns successful requests per second.
func (r *Result) Throughput() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests-r.Errors) / r.Elapsed.Seconds()
}

// NewTransport returns the client transport used for every target: HTTP/1.1 keep-alive with
// enough idle connections for concurrency clients, no compression, no proxy.
func NewTransport(concurrency int, timeout time.Duration) *http.Transport {
	return &http.Transport{
		DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost:   concurrency,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ResponseHeaderTimeout: timeout,
	}
}

// worker is one client's private tally; tallies are merged after the run.
type worker struct {
	hist    Histogram
	n, errs uint64
	samples []string
}

// send issues one request and records its latency measured from start, which in an open-loop
// run is the time the pacer released the request, not the time a client got round to it.
func (w *worker) send(ctx context.Context, rt http.RoundTripper, t *Template, p Protocol, start time.Time) {
	resp, err := rt.RoundTrip(t.Request(ctx))
	if err != nil {
		if ctx.Err() == nil {
			w.fail(err.Error())
		}
		return
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		w.fail(fmt.Sprintf("HTTP %d: %s", resp.StatusCode, strings.TrimSpace(string(b))))
		return
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	switch {
	case err != nil:
		w.fail("reading body: " + err.Error())
	case p == ProtocolCBOR && resp.Header.Get("Smithy-Protocol") != "rpc-v2-cbor":
		w.fail("HTTP 200 without the smithy-protocol: rpc-v2-cbor response header")
	default:
		w.n++
		w.hist.Record(time.Since(start))
	}
}

func (w *worker) fail(msg string) {
	w.n++
	w.errs++
	if len(w.samples) < maxErrorSamples {
		w.samples = append(w.samples, msg)
	}
}

// Run drives template t with load l and returns the merged result. It returns early, with
// what was measured so far, when ctx is cancelled.
func Run(ctx context.Context, rt http.RoundTripper, t *Template, p Protocol, l Load) *Result {
	return RunSpread(ctx, rt, []*Template{t}, p, l)
}

// RunSpread is Run with the clients spread over several templates (the same request to
// several server nodes): client i sends ts[i % len(ts)].
func RunSpread(ctx context.Context, rt http.RoundTripper, ts []*Template, p Protocol, l Load) *Result {
	l.Concurrency = max(l.Concurrency, 1)
	workers := make([]worker, l.Concurrency)
	var next func() (time.Time, bool)
	if l.Rate > 0 {
		ch := make(chan time.Time, paceBuffer(l))
		go pace(ctx, clock.Real{}, l.Rate, l.Requests, l.Duration, ch)
		next = func() (time.Time, bool) { at, ok := <-ch; return at, ok }
	} else {
		next = closedLoop(ctx, l)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			w, t := &workers[i], ts[i%len(ts)]
			for at, ok := next(); ok; at, ok = next() {
				w.send(ctx, rt, t, p, at)
			}
		})
	}
	wg.Wait()
	res := &Result{Protocol: p, Elapsed: time.Since(start), OfferedRate: l.Rate}
	for i := range workers {
		w := &workers[i]
		res.Requests += w.n
		res.Errors += w.errs
		res.Latency.Merge(&w.hist)
		for _, s := range w.samples {
			if len(res.ErrorSamples) < maxErrorSamples {
				res.ErrorSamples = append(res.ErrorSamples, s)
			}
		}
	}
	return res
}

// paceBuffer sizes the open-loop queue to hold about a second of requests, so the pacer does
// not stall (and stop counting queueing delay) unless the server falls far behind.
func paceBuffer(l Load) int {
	return int(min(max(l.Rate, float64(l.Concurrency)), 1<<16))
}

// closedLoop returns the "may I send another request, and when does it start" function of a
// closed-loop run: each client sends its next request as soon as the previous one is done,
// until Requests have been issued or Duration has passed.
func closedLoop(ctx context.Context, l Load) func() (time.Time, bool) {
	var issued atomic.Int64
	deadline := time.Now().Add(l.Duration)
	return func() (time.Time, bool) {
		if ctx.Err() != nil {
			return time.Time{}, false
		}
		now := time.Now()
		if l.Requests > 0 {
			return now, issued.Add(1) <= l.Requests
		}
		return now, now.Before(deadline)
	}
}

// pace is the open-loop scheduler. Request i is due at start + i/rate, whether or not earlier
// requests have finished; pace sends its release time on out once it is due. The release time
// is the due time, or the time pace actually woke up if its own timer fired late, so timer
// jitter of the load generator is not blamed on the server, while time a released request
// spends waiting for a free client (a busy or overloaded server) still counts. A late request
// is not rescheduled: the schedule catches up in a burst. pace stops after n requests (n > 0),
// when the next request would be due dur or more after the first, or when ctx is done, and
// then closes out.
func pace(ctx context.Context, clk clock.Clock, rate float64, n int64, dur time.Duration, out chan<- time.Time) {
	defer close(out)
	start := clk.Now()
	for i := int64(0); n <= 0 || i < n; i++ {
		offset := time.Duration(float64(i) * float64(time.Second) / rate)
		if n <= 0 && offset >= dur {
			return
		}
		at := start.Add(offset)
		if d := at.Sub(clk.Now()); d > 0 {
			select {
			case <-clk.After(d):
			case <-ctx.Done():
				return
			}
		}
		if now := clk.Now(); now.After(at) {
			at = now
		}
		select {
		case out <- at:
		case <-ctx.Done():
			return
		}
	}
}
