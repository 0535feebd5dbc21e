package sigv4

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
)

const (
	testAKID   = "AKIAHOISTTEST0000001"
	testSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testRegion = "us-west-2"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newVerifier returns a verifier that knows testAKID, on a fake clock at t0.
func newVerifier() (*Verifier, *clock.Fake) {
	c := clock.NewFake(t0)
	return &Verifier{
		Keys: func(id string) (string, bool) {
			if id == testAKID {
				return testSecret, true
			}
			return "", false
		},
		Clock: c,
	}, c
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// reqSpec describes a request to sign with the SDK.
type reqSpec struct {
	method  string
	url     string
	headers [][2]string // added in order; a name may repeat
	body    []byte
	// signing parameters; zero values mean the test defaults
	akid, secret, service, region string
	at                            time.Time
	payloadHash                   string
	// noLength leaves Content-Length unsigned, as botocore does (the Go SDK signs it).
	noLength bool
}

// jsonRequest is a typical awsJson1_1 request as the AWS CLI sends it.
func jsonRequest() reqSpec {
	return reqSpec{
		method: "POST", url: "http://127.0.0.1:9080/",
		headers:  [][2]string{{"Content-Type", "application/x-amz-json-1.1"}, {"X-Amz-Target", "GameLift.DescribeAlias"}},
		body:     []byte(`{"AliasId":"alias-0123"}`),
		noLength: true,
	}
}

// cborRequest is a typical rpcv2Cbor request as the Go SDK v2 sends it.
func cborRequest(path string) reqSpec {
	return reqSpec{
		method: "POST", url: "http://localhost:9080" + path,
		headers: [][2]string{
			{"Accept", "application/cbor"},
			{"Amz-Sdk-Invocation-Id", "8b3a6c4e-2f1d-4b6a-9c1e-0d2f3a4b5c6d"},
			{"Amz-Sdk-Request", "attempt=1; max=3"},
			{"Content-Type", "application/cbor"},
			{"Smithy-Protocol", "rpc-v2-cbor"},
		},
		body: []byte{0xa1, 0x67, 'A', 'l', 'i', 'a', 's', 'I', 'd', 0x65, 'a', 'l', 'i', 'a', 's'},
	}
}

// clientRequest builds the request the client would send, signed by the SDK.
func (sp reqSpec) clientRequest(t testing.TB) *http.Request {
	t.Helper()
	r, err := http.NewRequest(sp.method, sp.url, bytes.NewReader(sp.body))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range sp.headers {
		r.Header.Add(h[0], h[1])
	}
	akid, secret, service, region, at, ph := sp.signing()
	creds := aws.Credentials{AccessKeyID: akid, SecretAccessKey: secret}
	length := r.ContentLength
	if sp.noLength {
		r.ContentLength = 0
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, ph, service, region, at); err != nil {
		t.Fatal(err)
	}
	r.ContentLength = length
	return r
}

// signing returns the signing parameters with defaults filled in.
func (sp reqSpec) signing() (akid, secret, service, region string, at time.Time, payloadHash string) {
	akid, secret, service, region, at, payloadHash = sp.akid, sp.secret, sp.service, sp.region, sp.at, sp.payloadHash
	if akid == "" {
		akid = testAKID
	}
	if secret == "" {
		secret = testSecret
	}
	if service == "" {
		service = "gamelift"
	}
	if region == "" {
		region = testRegion
	}
	if at.IsZero() {
		at = t0
	}
	if payloadHash == "" {
		payloadHash = hexSHA256(sp.body)
	}
	return
}

// serverRequest is the signed request as a server reads it off the wire.
func (sp reqSpec) serverRequest(t testing.TB) *http.Request {
	t.Helper()
	return toServer(t, sp.clientRequest(t))
}

// toServer writes r in HTTP/1.1 wire form and reads it back as net/http's server does.
func toServer(t testing.TB, r *http.Request) *http.Request {
	t.Helper()
	var wire bytes.Buffer
	if err := r.Write(&wire); err != nil {
		t.Fatal(err)
	}
	sr, err := http.ReadRequest(bufio.NewReader(&wire))
	if err != nil {
		t.Fatal(err)
	}
	return sr
}

// wantOK fails the test unless v verifies r.
func wantOK(t *testing.T, v *Verifier, r *http.Request, body []byte) *Identity {
	t.Helper()
	id, err := v.Verify(r, body)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return id
}

// wantErr fails the test unless v rejects r with code and a message containing substr.
func wantErr(t *testing.T, v *Verifier, r *http.Request, body []byte, code api.ErrorCode, substr string) {
	t.Helper()
	id, err := v.Verify(r, body)
	if err == nil {
		t.Fatalf("Verify accepted the request (identity %+v); want %s", id, code)
	}
	if err.Code != code || !strings.Contains(err.Message, substr) {
		t.Fatalf("Verify = %v; want %s containing %q", err, code, substr)
	}
}

func TestSDKSignedRequestsVerify(t *testing.T) {
	withQuery := cborRequest("/service/GameLift/operation/ListFleets?b=2&a=1&a=0&sp=x%20y&plus=p+q&tilde=~&slash=%2F")
	spaces := jsonRequest()
	spaces.headers = append(spaces.headers, [2]string{"X-Custom", "  a   b  c "}, [2]string{"X-Multi", "one"}, [2]string{"X-Multi", " two  three"})
	cases := map[string]reqSpec{
		"json":            jsonRequest(),
		"cbor":            cborRequest("/service/GameLift/operation/DescribeAlias"),
		"cbor prefix":     cborRequest("/prefix/service/GameLift/operation/X"),
		"escaped path":    cborRequest("/pre%20fix/a%2Fb/service/GameLift/operation/DescribeAlias"),
		"query":           withQuery,
		"spaces & multi":  spaces,
		"empty body json": {method: "POST", url: "http://h/", headers: [][2]string{{"X-Amz-Target", "GameLift.ListAliases"}}},
	}
	for name, sp := range cases {
		t.Run(name, func(t *testing.T) {
			v, _ := newVerifier()
			id := wantOK(t, v, sp.serverRequest(t), sp.body)
			want := Identity{AccessKeyID: testAKID, Region: testRegion, Service: "gamelift", Time: t0}
			if *id != want {
				t.Errorf("identity = %+v; want %+v", *id, want)
			}
			// The request as the client holds it (no RequestURI) verifies too.
			wantOK(t, v, sp.clientRequest(t), sp.body)
		})
	}
}

func TestSignedHeadersAreTheTypicalOnes(t *testing.T) {
	for name, c := range map[string]struct {
		sp   reqSpec
		want string
	}{
		"json": {jsonRequest(), "SignedHeaders=content-type;host;x-amz-date;x-amz-target,"},
		"cbor": {cborRequest("/service/GameLift/operation/DescribeAlias"),
			"SignedHeaders=accept;amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;smithy-protocol;x-amz-date,"},
	} {
		if got := c.sp.clientRequest(t).Header.Get("Authorization"); !strings.Contains(got, c.want) {
			t.Errorf("%s: Authorization = %q; want it to contain %q", name, got, c.want)
		}
	}
}

func TestTampering(t *testing.T) {
	cases := map[string]func(r *http.Request, body []byte) []byte{
		"signed header": func(r *http.Request, b []byte) []byte { r.Header.Set("X-Amz-Target", "GameLift.DeleteAlias"); return b },
		"body":          func(r *http.Request, b []byte) []byte { return []byte(`{"AliasId":"alias-9999"}`) },
		"path": func(r *http.Request, b []byte) []byte {
			r.RequestURI, r.URL.Path = "/other", "/other"
			return b
		},
		"query": func(r *http.Request, b []byte) []byte {
			r.RequestURI, r.URL.RawQuery = "/?x=1", "x=1"
			return b
		},
		"host":   func(r *http.Request, b []byte) []byte { r.Host = "evil.example"; return b },
		"method": func(r *http.Request, b []byte) []byte { r.Method = "PUT"; return b },
		"signature": func(r *http.Request, b []byte) []byte {
			h := r.Header.Get("Authorization")
			r.Header.Set("Authorization", h[:len(h)-1]+flipHex(h[len(h)-1]))
			return b
		},
		"signature not hex": func(r *http.Request, b []byte) []byte {
			h := r.Header.Get("Authorization")
			r.Header.Set("Authorization", h[:len(h)-1]+"g")
			return b
		},
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			v, _ := newVerifier()
			sp := jsonRequest()
			r := sp.serverRequest(t)
			wantOK(t, v, r, sp.body) // untampered, it passes
			body := tamper(r, sp.body)
			wantErr(t, v, r, body, api.InvalidSignatureException, "The request signature we calculated does not match")
		})
	}
}

func flipHex(c byte) string {
	if c == '0' {
		return "1"
	}
	return "0"
}

func TestCredentialErrors(t *testing.T) {
	v, _ := newVerifier()
	sp := jsonRequest()
	sp.secret = "not-the-secret"
	wantErr(t, v, sp.serverRequest(t), sp.body, api.InvalidSignatureException, "Check your AWS Secret Access Key")

	sp = jsonRequest()
	sp.akid = "AKIAUNKNOWN"
	wantErr(t, v, sp.serverRequest(t), sp.body, api.UnrecognizedClientException, "The security token included in the request is invalid.")

	sp = jsonRequest()
	sp.service = "s3"
	wantErr(t, v, sp.serverRequest(t), sp.body, api.InvalidSignatureException, "Credential should be scoped to correct service: 'gamelift'")

	v.Service = "s3"
	wantOK(t, v, sp.serverRequest(t), sp.body)

	none := Verifier{Clock: v.Clock} // no Keys: nothing is known
	wantErr(t, &none, jsonRequest().serverRequest(t), sp.body, api.UnrecognizedClientException, "")
}

func TestClockSkew(t *testing.T) {
	sp := jsonRequest()
	for name, c := range map[string]struct {
		move    time.Duration
		ok      bool
		message string
	}{
		"just inside past":    {15 * time.Minute, true, ""},
		"stale":               {15*time.Minute + time.Second, false, "Signature expired: 20260601T120000Z is now earlier than 20260601T120001Z (20260601T121501Z - 15 min.)"},
		"just inside future":  {-15 * time.Minute, true, ""},
		"future":              {-15*time.Minute - time.Second, false, "Signature not yet current: 20260601T120000Z is still later than 20260601T115959Z (20260601T114459Z + 15 min.)"},
		"long ago in the day": {6 * time.Hour, false, "Signature expired"},
	} {
		t.Run(name, func(t *testing.T) {
			v, _ := newVerifier()
			v.Clock = clock.NewFake(t0.Add(c.move))
			r := sp.serverRequest(t)
			if c.ok {
				wantOK(t, v, r, sp.body)
			} else {
				wantErr(t, v, r, sp.body, api.InvalidSignatureException, c.message)
			}
		})
	}
}

func TestMaxSkewSetting(t *testing.T) {
	v, c := newVerifier()
	v.MaxSkew = time.Minute
	sp := jsonRequest()
	c.Advance(2 * time.Minute)
	wantErr(t, v, sp.serverRequest(t), sp.body, api.InvalidSignatureException, "(20260601T120200Z - 1 min.)")
}

func TestScopeDateMustMatchRequestDate(t *testing.T) {
	v, _ := newVerifier()
	sp := jsonRequest()
	r := sp.serverRequest(t)
	r.Header.Set("X-Amz-Date", "20260602T000500Z")
	v.Clock = clock.NewFake(time.Date(2026, 6, 2, 0, 5, 0, 0, time.UTC))
	wantErr(t, v, r, sp.body, api.InvalidSignatureException,
		"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '20260601' != '20260602', from '20260602T000500Z'.")
}

func TestMalformedAuthorization(t *testing.T) {
	good := jsonRequest().clientRequest(t).Header.Get("Authorization")
	cred := "Credential=" + testAKID + "/20260601/us-west-2/gamelift/aws4_request"
	cases := []struct{ auth, message string }{
		{"foo", "must use the 'AWS4-HMAC-SHA256' algorithm"},
		{"AWS4-HMAC-SHA256", "requires 'Credential' parameter. Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter."},
		{"AWS4-HMAC-SHA256 " + cred, "requires 'Signature' parameter"},
		{"AWS4-HMAC-SHA256 " + cred + ", Signature=00", "requires 'SignedHeaders' parameter"},
		{"AWS4-HMAC-SHA256 Credential=AKID/20260601/us-west-2/gamelift, SignedHeaders=host, Signature=00", "exactly 5 slash-delimited elements"},
		{"AWS4-HMAC-SHA256 Credential=AKID/20260601/us-west-2/gamelift/aws4_request/x, SignedHeaders=host, Signature=00", "exactly 5 slash-delimited elements"},
		{"AWS4-HMAC-SHA256 Credential=/20260601/us-west-2/gamelift/aws4_request, SignedHeaders=host, Signature=00", "exactly 5 slash-delimited elements"},
		{"AWS4-HMAC-SHA256 Credential=AKID/20260601/us-west-2/gamelift/aws5_request, SignedHeaders=host, Signature=00", "valid terminator: 'aws4_request', not 'aws5_request'"},
		{"AWS4-HMAC-SHA256 Credential=AKID/2026061/us-west-2/gamelift/aws4_request, SignedHeaders=host, Signature=00", "Credential date must be in the form yyyyMMdd"},
		{strings.Replace(good, "host;", "", 1), "'Host' must be a signed header"},
	}
	for _, c := range cases {
		v, _ := newVerifier()
		r := jsonRequest().serverRequest(t)
		r.Header.Set("Authorization", c.auth)
		wantErr(t, v, r, nil, api.IncompleteSignatureException, c.message)
	}
}

func TestMissingOrBadDate(t *testing.T) {
	v, _ := newVerifier()
	sp := jsonRequest()
	r := sp.serverRequest(t)
	r.Header.Del("X-Amz-Date")
	wantErr(t, v, r, sp.body, api.IncompleteSignatureException, "requires existence of either a 'X-Amz-Date' or a 'Date' header")
	r.Header.Set("X-Amz-Date", "2026-06-01T12:00:00Z")
	wantErr(t, v, r, sp.body, api.IncompleteSignatureException, "ISO-8601 'basic format'")
	r.Header.Del("X-Amz-Date")
	r.Header.Set("Date", "yesterday")
	wantErr(t, v, r, sp.body, api.IncompleteSignatureException, "RFC 1123")
}

func TestNoAuthentication(t *testing.T) {
	v, _ := newVerifier()
	r, _ := http.NewRequest("POST", "http://h/", nil)
	wantErr(t, v, r, nil, api.MissingAuthenticationTokenException, "Missing Authentication Token")
	r.Header.Set("Authorization", "")
	wantErr(t, v, r, nil, api.MissingAuthenticationTokenException, "Missing Authentication Token")
}

func TestContentSHA256Header(t *testing.T) {
	v, _ := newVerifier()
	sp := jsonRequest()
	sp.headers = append(sp.headers, [2]string{"X-Amz-Content-Sha256", hexSHA256(sp.body)})
	wantOK(t, v, sp.serverRequest(t), sp.body)

	upper := jsonRequest()
	upper.payloadHash = strings.ToUpper(hexSHA256(upper.body))
	upper.headers = append(upper.headers, [2]string{"X-Amz-Content-Sha256", upper.payloadHash})
	wantOK(t, v, upper.serverRequest(t), upper.body)

	wantErr(t, v, sp.serverRequest(t), []byte("{}"), api.InvalidSignatureException, "'x-amz-content-sha256' header does not match")

	unsigned := jsonRequest()
	unsigned.payloadHash = unsignedPayload
	unsigned.headers = append(unsigned.headers, [2]string{"X-Amz-Content-Sha256", unsignedPayload})
	wantErr(t, v, unsigned.serverRequest(t), unsigned.body, api.InvalidSignatureException, "UNSIGNED-PAYLOAD is accepted only for requests without a body")
	unsigned.body = nil
	wantOK(t, v, unsigned.serverRequest(t), nil)

	bad := jsonRequest()
	bad.payloadHash = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	bad.headers = append(bad.headers, [2]string{"X-Amz-Content-Sha256", bad.payloadHash})
	wantErr(t, v, bad.serverRequest(t), bad.body, api.IncompleteSignatureException, "must be a hex SHA-256 digest or UNSIGNED-PAYLOAD")
}

func TestNormalizedPathIsAccepted(t *testing.T) {
	// botocore and the JavaScript SDK sign the path with dot and empty segments removed.
	v, _ := newVerifier()
	sp := cborRequest("/prefix/service/GameLift/operation/DescribeAlias")
	r := sp.serverRequest(t)
	raw := "/prefix//service/./x/../GameLift/operation/DescribeAlias"
	r.RequestURI, r.URL.Path = raw, raw
	wantOK(t, v, r, sp.body)
	raw = "/prefix//service/GameLift/operation/DescribeAliases"
	r.RequestURI, r.URL.Path = raw, raw
	wantErr(t, v, r, sp.body, api.InvalidSignatureException, "does not match")
}

func TestPresigned(t *testing.T) {
	for name, c := range map[string]struct {
		query       string
		token       string
		payloadHash string
		advance     time.Duration
		wantErr     string
	}{
		"ok":                 {query: "?X-Amz-Expires=300&ComputeName=c-1", advance: 299 * time.Second},
		"expired":            {query: "?X-Amz-Expires=300", advance: 300 * time.Second, wantErr: "Signature expired: 20260601T120500Z is now earlier than 20260601T120500Z (20260601T120000Z + 300 seconds)"},
		"no expiry, in skew": {advance: 15 * time.Minute},
		"no expiry, stale":   {advance: 16 * time.Minute, wantErr: "Signature expired"},
		"session token":      {query: "?X-Amz-Expires=60", token: "FwoGZXIvYXdzEXAMPLETOKEN+/=="},
		"unsigned payload":   {query: "?X-Amz-Expires=60", payloadHash: unsignedPayload},
	} {
		t.Run(name, func(t *testing.T) {
			v, clk := newVerifier()
			r := presign(t, "http://127.0.0.1:9080/websocket"+c.query, c.token, c.payloadHash)
			clk.Advance(c.advance)
			if c.wantErr == "" {
				wantOK(t, v, r, nil)
			} else {
				wantErr(t, v, r, nil, api.InvalidSignatureException, c.wantErr)
			}
		})
	}
}

func TestPresignedFailures(t *testing.T) {
	v, _ := newVerifier()
	r := presign(t, "http://127.0.0.1:9080/websocket?X-Amz-Expires=300&ComputeName=c-1", "", "")
	wantOK(t, v, r, nil)

	tampered := toServer(t, r)
	tampered.RequestURI = strings.Replace(r.RequestURI, "c-1", "c-2", 1)
	wantErr(t, v, tampered, nil, api.InvalidSignatureException, "does not match")

	both := toServer(t, r)
	both.Header.Set("Authorization", "AWS4-HMAC-SHA256 x")
	wantErr(t, v, both, nil, api.IncompleteSignatureException, "Only one auth mechanism allowed")

	for param, msg := range map[string]string{
		"X-Amz-Signature": "must include", "X-Amz-Credential": "must include",
		"X-Amz-Date": "must include", "X-Amz-SignedHeaders": "must include",
	} {
		bad := toServer(t, r)
		q := bad.URL.Query()
		q.Del(param)
		bad.RequestURI = "/websocket?" + q.Encode()
		wantErr(t, v, bad, nil, api.IncompleteSignatureException, msg)
	}
	for param, value := range map[string]string{"X-Amz-Expires": "604801", "X-Amz-Algorithm": "AWS4-HMAC-SHA1"} {
		bad := toServer(t, r)
		q := bad.URL.Query()
		q.Set(param, value)
		bad.RequestURI = "/websocket?" + q.Encode()
		wantErr(t, v, bad, nil, api.IncompleteSignatureException, param)
	}
	badEsc := toServer(t, r)
	badEsc.RequestURI += "&x=%zz"
	wantErr(t, v, badEsc, nil, api.IncompleteSignatureException, "not properly encoded")
}

// presign returns a GET of rawURL presigned by the SDK at t0, as the server reads it.
func presign(t testing.TB, rawURL, token, payloadHash string) *http.Request {
	t.Helper()
	r, err := http.NewRequest("GET", rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if payloadHash == "" {
		payloadHash = hexSHA256(nil)
	}
	creds := aws.Credentials{AccessKeyID: testAKID, SecretAccessKey: testSecret, SessionToken: token}
	uri, hdr, err := v4.NewSigner().PresignHTTP(context.Background(), creds, r, payloadHash, "gamelift", testRegion, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(uri, "X-Amz-Signature=") || (token != "" && !strings.Contains(uri, "X-Amz-Security-Token=")) {
		t.Fatalf("presigned URL %q lacks the expected parameters", uri)
	}
	signed, err := http.NewRequest("GET", uri, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range hdr {
		if !strings.EqualFold(k, "host") {
			signed.Header[k] = vs
		}
	}
	return toServer(t, signed)
}
