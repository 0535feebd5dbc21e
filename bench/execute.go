package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// target is a server to measure: one URL, or the nodes of a cluster (clients spread over
// them).
type target struct{ name, urls string }

// execute runs the setup call, starts the bare baseline, and measures every protocol against
// every target, bare first. Progress lines go to progress.
func execute(ctx context.Context, c *config, progress io.Writer) (*Report, error) {
	tr := NewTransport(c.concurrency, c.timeout)
	defer tr.CloseIdleConnections()
	input, err := c.expandInput(ctx, tr)
	if err != nil {
		return nil, err
	}
	bareURL, stop, err := startBare()
	if err != nil {
		return nil, fmt.Errorf("bench: bare baseline: %w", err)
	}
	defer stop()
	targets := []target{{TargetBare, bareURL}}
	if !c.baselineOnly {
		targets = append(targets, target{TargetHoist, c.endpoint})
	}
	templates := make(map[target]map[Protocol][]*Template)
	var all []*Template
	for _, tg := range targets {
		templates[tg] = make(map[Protocol][]*Template)
		for _, p := range c.protocols {
			body, err := EncodeBody(p, []byte(input))
			if err != nil {
				return nil, fmt.Errorf("bench: --input: %w", err)
			}
			for _, u := range strings.Split(tg.urls, ",") {
				t, err := NewTemplate(u, p, c.op, body, &c.creds, time.Now())
				if err != nil {
					return nil, fmt.Errorf("bench: %w", err)
				}
				templates[tg][p] = append(templates[tg][p], t)
				all = append(all, t)
			}
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go resignLoop(runCtx, all)
	var results []*Result
	for _, p := range c.protocols {
		for _, tg := range targets {
			results = append(results, c.measure(ctx, tr, tg.name, templates[tg][p], p, progress)...)
		}
	}
	return NewReport(c.op, c.endpoint, c.concurrency, c.creds.AccessKeyID != "", results), nil
}

// expandInput runs the --setup call, if any, and fills the --input template from its output.
func (c *config) expandInput(ctx context.Context, rt http.RoundTripper) (string, error) {
	if c.setupOp == "" {
		return c.input, nil
	}
	first, _, _ := strings.Cut(c.endpoint, ",")
	doc, err := runSetup(ctx, &http.Client{Transport: rt}, first, c.setupOp, c.setupInput, &c.creds)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	in, err := Expand(c.input, doc)
	if err != nil {
		return "", fmt.Errorf("bench: --input: %w", err)
	}
	return in, nil
}

// resignLoop re-signs every template every resignEvery until ctx is done, so that runs
// longer than the server's 15-minute signature window keep working.
func resignLoop(ctx context.Context, ts []*Template) {
	tick := time.NewTicker(resignEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			for _, t := range ts {
				_ = t.Sign(now) // signing only fails on bad credentials, which signed before
			}
		}
	}
}

// measure warms one target up and runs the configured load modes against it.
func (c *config) measure(ctx context.Context, rt http.RoundTripper, name string, ts []*Template, p Protocol, progress io.Writer) []*Result {
	if c.warmup > 0 && ctx.Err() == nil {
		fmt.Fprintf(progress, "%s/%s: warming up for %v\n", name, p, c.warmup)
		RunSpread(ctx, rt, ts, p, Load{Concurrency: c.concurrency, Duration: c.warmup})
	}
	var out []*Result
	run := func(mode string, rate float64) *Result {
		l := Load{Concurrency: c.concurrency, Duration: c.duration, Requests: c.requests, Rate: rate}
		fmt.Fprintf(progress, "%s/%s: measuring %s (%s)\n", name, p, mode, describe(l))
		r := RunSpread(ctx, rt, ts, p, l)
		r.Target, r.Mode = name, mode
		out = append(out, r)
		return r
	}
	switch {
	case c.rate > 0:
		run(fmt.Sprintf("%g/s", c.rate), c.rate)
	case c.halfLoad:
		if half := run("max", 0).Throughput() / 2; half > 0 && ctx.Err() == nil {
			run("half", half)
		}
	default:
		run("max", 0)
	}
	return out
}

// describe says how long a run is bounded.
func describe(l Load) string {
	s := fmt.Sprintf("%v", l.Duration)
	if l.Requests > 0 {
		s = fmt.Sprintf("%d requests", l.Requests)
	}
	if l.Rate > 0 {
		s += fmt.Sprintf(" at %.0f/s", l.Rate)
	}
	return s
}
