package bench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/fxamacker/cbor/v2"
)

// Protocol is a GameLift control-plane wire protocol.
type Protocol string

// The two wire protocols a GameLift client speaks.
const (
	ProtocolJSON Protocol = "json" // awsJson1_1: POST / with X-Amz-Target
	ProtocolCBOR Protocol = "cbor" // Smithy RPC v2 CBOR: POST /service/GameLift/operation/<Op>
)

// Credentials sign requests with SigV4 (signing name "gamelift"). An empty AccessKeyID means
// requests are sent unsigned.
type Credentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Region          string
}

// signingName is the SigV4 service name of GameLift.
const signingName = "gamelift"

// EncodeBody turns the JSON text of an operation input into the request body of protocol p:
// the JSON text itself (compacted) for awsJson1_1, or the same value as one definite-length
// CBOR map for RPC v2 CBOR. JSON integers become CBOR integers and other numbers float64.
// Timestamps (CBOR tag 1) and blobs (byte strings) are not produced.
func EncodeBody(p Protocol, input []byte) ([]byte, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(input))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("input is not JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, fmt.Errorf("input must be a JSON object")
	}
	switch p {
	case ProtocolJSON:
		var buf bytes.Buffer
		if err := json.Compact(&buf, input); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	case ProtocolCBOR:
		return cborMode.Marshal(jsonToCBOR(v))
	}
	return nil, fmt.Errorf("unknown protocol %q", p)
}

// cborMode sorts map keys so that the same input always encodes to the same bytes.
var cborMode = func() cbor.EncMode {
	m, err := cbor.EncOptions{Sort: cbor.SortCoreDeterministic}.EncMode()
	if err != nil {
		panic(err)
	}
	return m
}()

// jsonToCBOR converts decoded JSON (with json.Number) into values CBOR encodes as the Smithy
// RPC v2 CBOR protocol expects: integers as CBOR integers, other numbers as float64.
func jsonToCBOR(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonToCBOR(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = jsonToCBOR(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Template is one prepared request (target, protocol, operation, body), signed once and
// replayed by every client. Request is safe for concurrent use, also while Sign runs.
type Template struct {
	url    *url.URL
	body   []byte
	creds  *Credentials
	header atomic.Pointer[http.Header]
}

// NewTemplate prepares a request for operation op against the server at baseURL, with the
// given encoded body, and signs it (at now) if creds has an access key.
func NewTemplate(baseURL string, p Protocol, op string, body []byte, creds *Credentials, now time.Time) (*Template, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("endpoint %q: want an http:// or https:// URL", baseURL)
	}
	u = &url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	h := http.Header{}
	switch p {
	case ProtocolJSON:
		if u.Path == "" {
			u.Path = "/"
		}
		h.Set("X-Amz-Target", "GameLift."+op)
		h.Set("Content-Type", "application/x-amz-json-1.1")
	case ProtocolCBOR:
		u.Path = strings.TrimSuffix(u.Path, "/") + "/service/GameLift/operation/" + op
		h.Set("Smithy-Protocol", "rpc-v2-cbor")
		h.Set("Content-Type", "application/cbor")
		h.Set("Accept", "application/cbor")
	default:
		return nil, fmt.Errorf("unknown protocol %q", p)
	}
	h.Set("User-Agent", "hoist-bench")
	t := &Template{url: u, body: body, creds: creds}
	t.header.Store(&h)
	return t, t.Sign(now)
}

// Sign (re)computes the SigV4 signature with signing time now. A signature stays valid for 15
// minutes on the server, so long runs call Sign again every few minutes.
func (t *Template) Sign(now time.Time) error {
	if t.creds == nil || t.creds.AccessKeyID == "" {
		return nil
	}
	h := t.header.Load().Clone()
	h.Del("Authorization")
	h.Del("X-Amz-Date")
	h.Del("X-Amz-Security-Token")
	r := t.build(context.Background(), h)
	sum := sha256.Sum256(t.body)
	c := aws.Credentials{AccessKeyID: t.creds.AccessKeyID, SecretAccessKey: t.creds.SecretAccessKey,
		SessionToken: t.creds.SessionToken}
	err := v4.NewSigner().SignHTTP(context.Background(), c, r, hex.EncodeToString(sum[:]),
		signingName, t.creds.Region, now.UTC())
	if err != nil {
		return fmt.Errorf("sign: %w", err)
	}
	t.header.Store(&h)
	return nil
}

// Request returns a fresh request carrying the template's bytes. Its Header map is shared
// between requests and must not be modified.
func (t *Template) Request(ctx context.Context) *http.Request {
	return t.build(ctx, *t.header.Load())
}

// Body returns the encoded request body; callers must not modify it.
func (t *Template) Body() []byte { return t.body }

// URL returns the request URL.
func (t *Template) URL() string { return t.url.String() }

func (t *Template) build(ctx context.Context, h http.Header) *http.Request {
	r := &http.Request{
		Method:        http.MethodPost,
		URL:           t.url,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(t.body)),
		ContentLength: int64(len(t.body)),
		Host:          t.url.Host,
	}
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(t.body)), nil }
	return r.WithContext(ctx)
}
