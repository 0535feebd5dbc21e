package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a whole bench run: its settings and one Row per measured run.
type Report struct {
	Operation   string `json:"operation"`
	Endpoint    string `json:"endpoint,omitempty"`
	Concurrency int    `json:"concurrency"`
	GOMAXPROCS  int    `json:"gomaxprocs"`
	Signed      bool   `json:"signed"`
	Rows        []Row  `json:"rows"`
}

// Row is one measured run in the report. Latencies are in microseconds. The VsBare ratios
// compare with the bare row of the same protocol and mode (1 for the bare row itself, 0 when
// there is none).
type Row struct {
	Target         string    `json:"target"`
	Protocol       Protocol  `json:"protocol"`
	Mode           string    `json:"mode"`
	OfferedRPS     float64   `json:"offered_rps,omitempty"`
	Requests       uint64    `json:"requests"`
	Errors         uint64    `json:"errors"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	RPS            float64   `json:"throughput_rps"`
	Latency        LatencyUS `json:"latency_us"`
	VsBareRPS      float64   `json:"vs_bare_throughput"`
	VsBareP99      float64   `json:"vs_bare_p99"`
	ErrorSamples   []string  `json:"error_samples,omitempty"`
}

// LatencyUS holds latency percentiles in microseconds.
type LatencyUS struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99_9"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// newRow summarises a result.
func newRow(r *Result) Row {
	h := &r.Latency
	return Row{
		Target: r.Target, Protocol: r.Protocol, Mode: r.Mode, OfferedRPS: r.OfferedRate,
		Requests: r.Requests, Errors: r.Errors, ElapsedSeconds: r.Elapsed.Seconds(),
		RPS: r.Throughput(), ErrorSamples: r.ErrorSamples,
		Latency: LatencyUS{
			P50: micros(h.Quantile(0.5)), P90: micros(h.Quantile(0.9)), P99: micros(h.Quantile(0.99)),
			P999: micros(h.Quantile(0.999)), Max: micros(h.Max()), Mean: micros(h.Mean()),
		},
	}
}

// NewReport builds a report from results and fills in the ratios to the bare baseline.
func NewReport(op, endpoint string, concurrency int, signed bool, results []*Result) *Report {
	rep := &Report{Operation: op, Endpoint: endpoint, Concurrency: concurrency,
		GOMAXPROCS: runtime.GOMAXPROCS(0), Signed: signed}
	for _, r := range results {
		rep.Rows = append(rep.Rows, newRow(r))
	}
	for i := range rep.Rows {
		row := &rep.Rows[i]
		for _, b := range rep.Rows {
			if b.Target == TargetBare && b.Protocol == row.Protocol && b.Mode == row.Mode {
				row.VsBareRPS = ratio(row.RPS, b.RPS)
				row.VsBareP99 = ratio(row.Latency.P99, b.Latency.P99)
			}
		}
	}
	return rep
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Errors returns the total error count over all rows.
func (rep *Report) Errors() uint64 {
	var n uint64
	for _, r := range rep.Rows {
		n += r.Errors
	}
	return n
}

// WriteJSON writes the report as indented JSON.
func (rep *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// WriteTable writes the report as an aligned text table, followed by the error samples.
func (rep *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "\n%s  concurrency=%d  GOMAXPROCS=%d  signed=%v\n\n",
		rep.Operation, rep.Concurrency, rep.GOMAXPROCS, rep.Signed)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "target\tprotocol\tmode\trequests\terrors\treq/s\tp50\tp90\tp99\tp99.9\tmax\tvs bare req/s\tvs bare p99\t")
	for _, r := range rep.Rows {
		l := r.Latency
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.0f\t%s\t%s\t%s\t%s\t%s\t%.3f\t%.2f\t\n",
			r.Target, r.Protocol, r.Mode, r.Requests, r.Errors, r.RPS,
			fmtUS(l.P50), fmtUS(l.P90), fmtUS(l.P99), fmtUS(l.P999), fmtUS(l.Max), r.VsBareRPS, r.VsBareP99)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rep.writeErrors(w)
	return nil
}

func (rep *Report) writeErrors(w io.Writer) {
	n := rep.Errors()
	if n == 0 {
		return
	}
	fmt.Fprintf(w, "\n!!! %d REQUESTS FAILED — these numbers do not measure successful work !!!\n", n)
	for _, r := range rep.Rows {
		for _, s := range r.ErrorSamples {
			fmt.Fprintf(w, "  %s/%s/%s: %s\n", r.Target, r.Protocol, r.Mode, s)
		}
	}
}

// fmtUS prints a latency given in microseconds in a readable unit.
func fmtUS(us float64) string {
	switch {
	case us < 1000:
		return fmt.Sprintf("%.0fµs", us)
	case us < 1e6:
		return fmt.Sprintf("%.2fms", us/1e3)
	default:
		return fmt.Sprintf("%.2fs", us/1e6)
	}
}
