package matchsim

import (
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// SVG layout, in pixels.
const (
	svgWidth   = 960
	svgPanelH  = 230
	svgLeft    = 80
	svgRight   = 150
	svgTop     = 40
	svgGap     = 70
	svgBins    = 200
	svgYTicks  = 4
	svgXTicks  = 8
	svgPlotW   = svgWidth - svgLeft - svgRight
	svgHeight  = svgTop + 2*svgPanelH + svgGap + 50
	svgTextCSS = `font-family="sans-serif" font-size="12"`
)

// series is one line of a panel: a value per time bin, NaN where the bin has none.
type series struct {
	name, color string
	ys          []float64
}

// panel is one plot: a title, a y unit and its series.
type panel struct {
	title, unit string
	series      []series
}

// WriteSVG plots a run over virtual time (to the last match or arrival): the time to match of the tickets matched in each
// time bin (p50, p99, max), and the first quality metric of the rule set (mean and max per
// bin), or the players per match when the rule set has no metric.
func WriteSVG(w io.Writer, res *Result) error {
	end := plotEnd(res)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", svgWidth, svgHeight, svgWidth, svgHeight)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-family="sans-serif" font-size="14">%s</text>`+"\n", svgLeft,
		html.EscapeString(fmt.Sprintf("hoist matchsim: rule set %q, %d tickets", res.RuleSet.Name, res.Tickets)))
	drawPanel(&b, waitPanel(res, end), svgTop, end)
	drawPanel(&b, qualityPanel(res, end), svgTop+svgPanelH+svgGap, end)
	fmt.Fprintf(&b, `<text x="%d" y="%d" %s text-anchor="middle">virtual time (s)</text>`+"\n", svgLeft+svgPlotW/2, svgHeight-8, svgTextCSS)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// plotEnd is the end of the time axis: the last match or arrival (a timeout tail has
// nothing to plot).
func plotEnd(res *Result) time.Duration {
	end := res.LastArrival
	if n := len(res.Matches); n > 0 {
		end = max(end, res.Matches[n-1].At)
	}
	return max(end, time.Millisecond)
}

// binOf is the time bin of virtual time at.
func binOf(at, end time.Duration) int {
	return min(int(float64(at)/float64(end)*svgBins), svgBins-1)
}

// waitPanel bins the times to match, in seconds, by the time of the matching step.
func waitPanel(res *Result, end time.Duration) panel {
	bins := make([][]float64, svgBins)
	for _, w := range res.Waits {
		i := binOf(w.At, end)
		bins[i] = append(bins[i], w.Wait.Seconds())
	}
	return panel{title: "time to match, tickets matched in each interval", unit: "s", series: []series{
		{"p50", "#1f77b4", reduceBins(bins, func(xs []float64) float64 { return rank(xs, 0.5) })},
		{"p99", "#ff7f0e", reduceBins(bins, func(xs []float64) float64 { return rank(xs, 0.99) })},
		{"max", "#d62728", reduceBins(bins, func(xs []float64) float64 { return xs[len(xs)-1] })},
	}}
}

// qualityPanel bins the first quality metric (else players per match) of the matches.
func qualityPanel(res *Result, end time.Duration) panel {
	title, unit := "players per match", "players"
	value := func(m MatchRecord) (float64, bool) { return float64(m.Players), true }
	if len(res.Metrics) > 0 {
		q := res.Metrics[0]
		title, unit = fmt.Sprintf("%s (%s): %s (%s), matches in each interval", q.Rule, q.RuleType, q.Name, q.Unit), q.Unit
		value = func(m MatchRecord) (float64, bool) { return m.Quality[0], m.ok[0] }
	}
	bins := make([][]float64, svgBins)
	for _, m := range res.Matches {
		if v, ok := value(m); ok {
			i := binOf(m.At, end)
			bins[i] = append(bins[i], v)
		}
	}
	return panel{title: title, unit: unit, series: []series{
		{"mean", "#2ca02c", reduceBins(bins, func(xs []float64) float64 { return summarize(xs).Mean })},
		{"max", "#9467bd", reduceBins(bins, func(xs []float64) float64 { return xs[len(xs)-1] })},
	}}
}

// reduceBins sorts each bin and reduces it to one value; empty bins give NaN.
func reduceBins(bins [][]float64, f func([]float64) float64) []float64 {
	out := make([]float64, len(bins))
	for i, xs := range bins {
		out[i] = math.NaN()
		if len(xs) > 0 {
			slices.Sort(xs)
			out[i] = f(xs)
		}
	}
	return out
}

// drawPanel draws a panel's frame, axes, series and legend with its top at y0.
func drawPanel(b *strings.Builder, p panel, y0 int, end time.Duration) {
	top := niceCeil(panelMax(p))
	fmt.Fprintf(b, `<text x="%d" y="%d" %s>%s</text>`+"\n", svgLeft, y0-8, svgTextCSS, html.EscapeString(p.title))
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", svgLeft, y0, svgPlotW, svgPanelH)
	for i := 0; i <= svgYTicks; i++ {
		v := top * float64(i) / svgYTicks
		y := y0 + svgPanelH - int(float64(svgPanelH)*float64(i)/svgYTicks)
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`+"\n", svgLeft, y, svgLeft+svgPlotW, y)
		fmt.Fprintf(b, `<text x="%d" y="%d" %s text-anchor="end">%s</text>`+"\n", svgLeft-6, y+4, svgTextCSS, formatF(v, 2))
	}
	fmt.Fprintf(b, `<text x="14" y="%d" %s transform="rotate(-90 14 %d)" text-anchor="middle">%s</text>`+"\n",
		y0+svgPanelH/2, svgTextCSS, y0+svgPanelH/2, html.EscapeString(p.unit))
	drawXTicks(b, y0+svgPanelH, end)
	for k, s := range p.series {
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.5" stroke-linecap="round"/>`+"\n", linePath(s.ys, y0, top), s.color)
		ly := y0 + 16 + 18*k
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>`+"\n", svgLeft+svgPlotW+12, ly-4, svgLeft+svgPlotW+32, ly-4, s.color)
		fmt.Fprintf(b, `<text x="%d" y="%d" %s>%s</text>`+"\n", svgLeft+svgPlotW+38, ly, svgTextCSS, s.name)
	}
}

// drawXTicks labels the time axis below a panel.
func drawXTicks(b *strings.Builder, y int, end time.Duration) {
	for i := 0; i <= svgXTicks; i++ {
		x := svgLeft + svgPlotW*i/svgXTicks
		t := end.Seconds() * float64(i) / svgXTicks
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#888"/>`+"\n", x, y, x, y+4)
		fmt.Fprintf(b, `<text x="%d" y="%d" %s text-anchor="middle">%s</text>`+"\n", x, y+18, svgTextCSS, formatF(t, 1))
	}
}

// panelMax is the largest value of a panel's series (0 for none).
func panelMax(p panel) float64 {
	m := 0.0
	for _, s := range p.series {
		for _, y := range s.ys {
			if !math.IsNaN(y) {
				m = max(m, y)
			}
		}
	}
	return m
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for v <= 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// linePath is an SVG path through the bins' values, broken at empty bins.
func linePath(ys []float64, y0 int, top float64) string {
	var b strings.Builder
	pen := false
	for i, v := range ys {
		if math.IsNaN(v) {
			pen = false
			continue
		}
		x := float64(svgLeft) + float64(svgPlotW)*(float64(i)+0.5)/float64(len(ys))
		y := float64(y0+svgPanelH) - float64(svgPanelH)*v/top
		if pen {
			fmt.Fprintf(&b, "L%.1f %.1f ", x, y)
		} else {
			fmt.Fprintf(&b, "M%.1f %.1f l0 0 ", x, y) // a lone point shows as a dot
		}
		pen = true
	}
	return strings.TrimSpace(b.String())
}
