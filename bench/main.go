package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/internal/cli"
)

// Target names used in reports.
const (
	TargetBare  = "bare"  // the in-process bare net/http handler
	TargetHoist = "hoist" // the server at --endpoint
)

// resignEvery is how often long runs re-sign their templates; the server accepts a signature
// for 15 minutes.
const resignEvery = 5 * time.Minute

// ErrRequestsFailed is returned by Main, after the report is written, when any request failed.
var ErrRequestsFailed = errors.New("bench: some requests failed; see the report")

// config holds the parsed command line.
type config struct {
	endpoint     string
	baselineOnly bool
	op, input    string
	protocols    []Protocol
	concurrency  int
	duration     time.Duration
	requests     int64
	warmup       time.Duration
	rate         float64 // fixed open-loop rate, or 0
	halfLoad     bool    // --rate half: max first, then half of the measured max
	timeout      time.Duration
	creds        Credentials
	setupOp      string
	setupInput   string
	jsonOut      bool
}

// Main runs the load tool with command-line arguments args (without the program or
// subcommand name) and writes the report to stdout. It returns nil after -h, and
// ErrRequestsFailed after writing the report when any request failed.
func Main(ctx context.Context, args []string, stdout io.Writer) error {
	cfg, err := parseFlags(args, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	progress := stdout
	if cfg.jsonOut {
		progress = io.Discard
	}
	rep, err := execute(ctx, cfg, progress)
	if err != nil {
		return err
	}
	if cfg.jsonOut {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteTable(stdout)
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("bench: interrupted, results are partial: %w", ctx.Err())
	}
	if rep.Errors() > 0 {
		return ErrRequestsFailed
	}
	return nil
}

func parseFlags(args []string, out io.Writer) (*config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(out)
	c := &config{}
	var protocol, rate string
	fs.StringVar(&c.endpoint, "endpoint", "", "base URL of a running hoist server, e.g. http://127.0.0.1:9080, or several nodes' URLs separated by commas (clients are spread over them) (required unless --baseline-only)")
	fs.BoolVar(&c.baselineOnly, "baseline-only", false, "measure only the in-process bare net/http handler")
	fs.StringVar(&c.op, "op", "DescribeAlias", "GameLift operation to drive")
	fs.StringVar(&c.input, "input", "{}", "operation input as JSON text; {{Path.To.Value}} is replaced from the --setup output")
	fs.StringVar(&protocol, "protocol", "both", "wire protocol: json, cbor or both")
	fs.IntVar(&c.concurrency, "concurrency", 2*runtime.GOMAXPROCS(0), "concurrent clients, each with one request in flight")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "measuring time per run (ignored with --requests)")
	fs.Int64Var(&c.requests, "requests", 0, "requests per run instead of --duration")
	fs.DurationVar(&c.warmup, "warmup", time.Second, "closed-loop warm-up before each target's runs (not measured)")
	fs.StringVar(&rate, "rate", "", `open-loop rate in requests/s; "half" runs at max first, then at half the measured max`)
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "response header timeout per request")
	fs.StringVar(&c.creds.AccessKeyID, "access-key-id", "", "SigV4 access key ID (default $AWS_ACCESS_KEY_ID; none: unsigned)")
	fs.StringVar(&c.creds.SecretAccessKey, "secret-access-key", "", "SigV4 secret key (default $AWS_SECRET_ACCESS_KEY)")
	fs.StringVar(&c.creds.Region, "region", "", "SigV4 region (default $AWS_REGION, else us-west-2)")
	fs.StringVar(&c.setupOp, "setup", "", "operation to call once (over JSON) before measuring, e.g. CreateAlias")
	fs.StringVar(&c.setupInput, "setup-input", "{}", "input of the --setup operation as JSON text")
	fs.BoolVar(&c.jsonOut, "json", false, "print the report as JSON")
	if err := cli.Parse(fs, args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("bench: unexpected arguments %q", fs.Args())
	}
	if err := c.finish(protocol, rate); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	return c, nil
}

// finish validates the flags and fills in defaults from the environment.
func (c *config) finish(protocol, rate string) error {
	switch protocol {
	case "json", "cbor":
		c.protocols = []Protocol{Protocol(protocol)}
	case "both":
		c.protocols = []Protocol{ProtocolJSON, ProtocolCBOR}
	default:
		return fmt.Errorf("--protocol %q: want json, cbor or both", protocol)
	}
	if err := c.parseRate(rate); err != nil {
		return err
	}
	switch {
	case c.endpoint == "" && !c.baselineOnly:
		return errors.New("--endpoint is required (or use --baseline-only)")
	case c.setupOp != "" && c.endpoint == "":
		return errors.New("--setup needs --endpoint")
	case c.concurrency < 1:
		return errors.New("--concurrency must be at least 1")
	case c.requests < 0 || (c.requests == 0 && c.duration <= 0):
		return errors.New("need a positive --duration or --requests")
	case c.warmup < 0:
		return errors.New("--warmup must not be negative")
	}
	c.creds.AccessKeyID = firstNonEmpty(c.creds.AccessKeyID, os.Getenv("AWS_ACCESS_KEY_ID"))
	c.creds.SecretAccessKey = firstNonEmpty(c.creds.SecretAccessKey, os.Getenv("AWS_SECRET_ACCESS_KEY"))
	c.creds.Region = firstNonEmpty(c.creds.Region, os.Getenv("AWS_REGION"), "us-west-2")
	return nil
}

func (c *config) parseRate(rate string) error {
	switch rate {
	case "":
		return nil
	case "half":
		c.halfLoad = true
		return nil
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(rate, "/s"), 64)
	if err != nil || r <= 0 {
		return fmt.Errorf("--rate %q: want a positive number of requests/s or \"half\"", rate)
	}
	c.rate = r
	return nil
}

// firstNonEmpty returns the first non-empty string.
func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// startBare starts the bare baseline server on 127.0.0.1:0 and returns its URL and a stop
// function.
func startBare() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: BareHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// BareHandler is the baseline: it reads the request body fully and answers 200 with a fixed
// small body, {} for JSON or an empty CBOR map (with the smithy-protocol header) for CBOR.
func BareHandler() http.Handler {
	var (
		jsonBody = []byte("{}")
		cborBody = []byte{0xa0}
		jsonCT   = []string{"application/x-amz-json-1.1"}
		cborCT   = []string{"application/cbor"}
		smithy   = []string{"rpc-v2-cbor"}
	)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		if r.Header.Get("Smithy-Protocol") != "" {
			h["Content-Type"] = cborCT
			h["Smithy-Protocol"] = smithy
			_, _ = w.Write(cborBody)
			return
		}
		h["Content-Type"] = jsonCT
		_, _ = w.Write(jsonBody)
	})
}
