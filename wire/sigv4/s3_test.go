package sigv4

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hoist-gg/hoist/internal/clock"
)

// The example of the Amazon S3 API Reference, "Signature Calculations for the Authorization
// Header: Transferring Payload in Multiple Chunks (Chunked Upload)": a 66560-byte object of
// 'a's in chunks of 65536, 1024 and 0 bytes.
const (
	exampleAKID   = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	exampleSeed   = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
)

var exampleChunkSigs = []string{
	"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648",
	"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497",
	"b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9",
}

var exampleTime = time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC)

func exampleSecretOf(id string) (string, error) {
	if id == exampleAKID {
		return exampleSecret, nil
	}
	return "", &S3Error{Code: "InvalidAccessKeyId", Message: "unknown"}
}

// exampleRequest builds the documented request with the given body.
func exampleRequest(body []byte, seed string) *http.Request {
	r := httptest.NewRequest("PUT", "http://s3.amazonaws.com/examplebucket/chunkObject.txt", bytes.NewReader(body))
	r.Header.Set("X-Amz-Date", "20130524T000000Z")
	r.Header.Set("X-Amz-Storage-Class", "REDUCED_REDUNDANCY")
	r.Header.Set("X-Amz-Content-Sha256", StreamingSigned)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "66560")
	r.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+exampleAKID+"/20130524/us-east-1/s3/aws4_request,"+
		"SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,"+
		"Signature="+seed)
	r.ContentLength = 66824 // as documented, even when a test tampers with the body
	return r
}

// exampleBody is the documented aws-chunked body; chunk i's data is data[i].
func exampleBody(data [][]byte) []byte {
	var b bytes.Buffer
	for i, d := range data {
		fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(d), exampleChunkSigs[i])
		b.Write(d)
		b.WriteString("\r\n")
	}
	return b.Bytes()
}

func exampleData() [][]byte {
	return [][]byte{bytes.Repeat([]byte("a"), 65536), bytes.Repeat([]byte("a"), 1024), nil}
}

func s3Verifier(at time.Time) *Verifier {
	return &Verifier{Clock: clock.NewFake(at), Service: S3Service}
}

// readAll reads a payload to its end and returns the S3 error code it failed with ("" if none).
func readAll(t *testing.T, p *Payload) ([]byte, string) {
	t.Helper()
	got, err := io.ReadAll(p)
	var s3e *S3Error
	if errors.As(err, &s3e) {
		return got, s3e.Code
	}
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return got, ""
}

func TestS3ChunkedExampleFromTheDocumentation(t *testing.T) {
	body := exampleBody(exampleData())
	if len(body) != 66824 {
		t.Fatalf("example body is %d bytes, the documentation says 66824", len(body))
	}
	id, p, err := s3Verifier(exampleTime).VerifyS3(exampleRequest(body, exampleSeed), exampleSecretOf)
	if err != nil {
		t.Fatalf("VerifyS3: %v", err)
	}
	if id.AccessKeyID != exampleAKID || id.PayloadHash != StreamingSigned || p.Size() != 66560 {
		t.Errorf("identity %+v, size %d", id, p.Size())
	}
	got, code := readAll(t, p)
	if code != "" || !bytes.Equal(got, bytes.Repeat([]byte("a"), 66560)) {
		t.Errorf("read %d bytes, error %q; want 66560 'a's", len(got), code)
	}
}

func TestS3ChunkedTampering(t *testing.T) {
	cases := map[string]func(b []byte) []byte{
		"changed data":   func(b []byte) []byte { b[200] = 'b'; return b },
		"last chunk cut": func(b []byte) []byte { return b[:len(b)-90] },
		"chunks swapped": func(b []byte) []byte {
			d := exampleData()
			return exampleBody([][]byte{d[1], d[0], nil})
		},
		"bad size": func(b []byte) []byte { return append([]byte("zz"), b[5:]...) },
	}
	for name, tamper := range cases {
		t.Run(name, func(t *testing.T) {
			body := tamper(exampleBody(exampleData()))
			_, p, err := s3Verifier(exampleTime).VerifyS3(exampleRequest(body, exampleSeed), exampleSecretOf)
			if err != nil {
				t.Fatalf("VerifyS3: %v", err)
			}
			if _, code := readAll(t, p); code == "" {
				t.Errorf("tampered body read without error")
			}
		})
	}
}

func TestS3HeaderErrors(t *testing.T) {
	body := exampleBody(exampleData())
	badSeed := strings.Replace(exampleSeed, "4f", "5f", 1)
	cases := []struct {
		name string
		r    *http.Request
		at   time.Time
		code string
	}{
		{"wrong seed signature", exampleRequest(body, badSeed), exampleTime, "SignatureDoesNotMatch"},
		{"request too old", exampleRequest(body, exampleSeed), exampleTime.Add(16 * time.Minute), "RequestTimeTooSkewed"},
		{"unknown key", func() *http.Request {
			r := exampleRequest(body, exampleSeed)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), exampleAKID, "AKIAOTHER", 1))
			return r
		}(), exampleTime, "InvalidAccessKeyId"},
		{"no payload hash", func() *http.Request {
			r := exampleRequest(body, exampleSeed)
			r.Header.Del("X-Amz-Content-Sha256")
			return r
		}(), exampleTime, "InvalidRequest"},
		{"gamelift scope", func() *http.Request {
			r := exampleRequest(body, exampleSeed)
			r.Header.Set("Authorization", strings.Replace(r.Header.Get("Authorization"), "/s3/", "/gamelift/", 1))
			return r
		}(), exampleTime, "AuthorizationHeaderMalformed"},
		{"not signed", httptest.NewRequest("PUT", "/b/k", nil), exampleTime, "AccessDenied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := s3Verifier(c.at).VerifyS3(c.r, exampleSecretOf)
			var s3e *S3Error
			if !errors.As(err, &s3e) || s3e.Code != c.code {
				t.Errorf("err = %v, want %s", err, c.code)
			}
		})
	}
}

// trailerBody is an aws-chunked body with a trailer, signed (when seed is not "") from seed
// with key, as the trailing-headers page of the S3 API Reference describes.
func trailerBody(key []byte, scope, seed string, data [][]byte, trailer string) []byte {
	mac := func(s string) string {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(s))
		return hex.EncodeToString(m.Sum(nil))
	}
	hexHash := func(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }
	var b bytes.Buffer
	prev := seed
	for _, d := range append(data, nil) {
		if seed == "" {
			fmt.Fprintf(&b, "%x\r\n", len(d))
		} else {
			prev = mac("AWS4-HMAC-SHA256-PAYLOAD\n20130524T000000Z\n" + scope + "\n" + prev + "\n" + hexHash(nil) + "\n" + hexHash(d))
			fmt.Fprintf(&b, "%x;chunk-signature=%s\r\n", len(d), prev)
		}
		if len(d) > 0 {
			b.Write(d)
			b.WriteString("\r\n")
		}
	}
	b.WriteString(trailer + "\r\n")
	if seed != "" {
		sig := mac("AWS4-HMAC-SHA256-TRAILER\n20130524T000000Z\n" + scope + "\n" + prev + "\n" + hexHash([]byte(trailer+"\n")))
		b.WriteString("x-amz-trailer-signature:" + sig + "\r\n")
	}
	b.WriteString("\r\n")
	return b.Bytes()
}

// signTrailerRequest signs a trailer request's headers and returns it with its seed signature.
func signTrailerRequest(t *testing.T, payloadHash string, bodyFor func(seed string) []byte) *http.Request {
	t.Helper()
	r, _ := http.NewRequest("PUT", "http://127.0.0.1:9081/hoist-builds/build-1.zip", nil)
	r.Header.Set("Content-Encoding", "aws-chunked")
	r.Header.Set("X-Amz-Decoded-Content-Length", "70000")
	r.Header.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: exampleAKID, SecretAccessKey: exampleSecret}
	if err := signer.SignHTTP(context.Background(), creds, r, payloadHash, "s3", "us-east-1", exampleTime); err != nil {
		t.Fatal(err)
	}
	seed := r.Header.Get("Authorization")[strings.LastIndex(r.Header.Get("Authorization"), "=")+1:]
	body := bodyFor(seed)
	server := httptest.NewRequest("PUT", "http://127.0.0.1:9081/hoist-builds/build-1.zip", bytes.NewReader(body))
	server.Header = r.Header.Clone()
	server.ContentLength = int64(len(body))
	return server
}

func TestS3Trailers(t *testing.T) {
	key := deriveKey(cacheKey{exampleSecret, "20130524", "us-east-1", "s3"})
	scope := "20130524/us-east-1/s3/aws4_request"
	data := [][]byte{bytes.Repeat([]byte("x"), 65536), bytes.Repeat([]byte("y"), 70000-65536)}
	const trailer = "x-amz-checksum-crc32:AAAAAA=="
	cases := []struct {
		name, hash string
		body       func(seed string) []byte
		code       string
	}{
		{"signed", StreamingSignedTrailer, func(seed string) []byte { return trailerBody(key[:], scope, seed, data, trailer) }, ""},
		{"signed, trailer changed", StreamingSignedTrailer, func(seed string) []byte {
			return bytes.Replace(trailerBody(key[:], scope, seed, data, trailer), []byte("AAAAAA=="), []byte("AAAAAB=="), 1)
		}, "SignatureDoesNotMatch"},
		{"unsigned", StreamingUnsignedTrailer, func(string) []byte { return trailerBody(nil, "", "", data, trailer) }, ""},
		{"unsigned, short", StreamingUnsignedTrailer, func(string) []byte {
			return trailerBody(nil, "", "", [][]byte{data[0]}, trailer)
		}, "IncompleteBody"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, p, err := s3Verifier(exampleTime).VerifyS3(signTrailerRequest(t, c.hash, c.body), exampleSecretOf)
			if err != nil {
				t.Fatalf("VerifyS3: %v", err)
			}
			got, code := readAll(t, p)
			if code != c.code {
				t.Fatalf("error %q, want %q", code, c.code)
			}
			if c.code == "" && (len(got) != 70000 || p.Trailer().Get("x-amz-checksum-crc32") != "AAAAAA==") {
				t.Errorf("read %d bytes, trailer %v", len(got), p.Trailer())
			}
		})
	}
}

// sdkS3Request signs a PUT of body to path as the Go SDK signs S3 requests (path not escaped
// again), with payloadHash, and returns the request as a server receives it.
func sdkS3Request(t *testing.T, path string, body []byte, payloadHash, token string) *http.Request {
	t.Helper()
	r, _ := http.NewRequest("PUT", "http://127.0.0.1:9081"+path, bytes.NewReader(body))
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	creds := aws.Credentials{AccessKeyID: exampleAKID, SecretAccessKey: exampleSecret, SessionToken: token}
	if err := signer.SignHTTP(context.Background(), creds, r, payloadHash, "s3", "us-west-2", exampleTime); err != nil {
		t.Fatal(err)
	}
	server := httptest.NewRequest("PUT", r.URL.RequestURI(), bytes.NewReader(body))
	server.Host, server.Header, server.ContentLength = r.Host, r.Header.Clone(), int64(len(body))
	return server
}

func TestS3PayloadHashAndPath(t *testing.T) {
	body := []byte("PK\x05\x06 not really a zip")
	cases := []struct {
		name, path, hash string
		body             []byte
		code             string
	}{
		{"hex hash", "/hoist-builds/build-1.zip", hexSHA256(body), body, ""},
		{"escaped key", "/hoist-builds/dir/a%20b%2Bc~%21.zip", hexSHA256(body), body, ""},
		{"unsigned payload with a body", "/hoist-builds/k", UnsignedPayload, body, ""},
		{"hash mismatch", "/hoist-builds/k", hexSHA256([]byte("other")), body, "XAmzContentSHA256Mismatch"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id, p, err := s3Verifier(exampleTime).VerifyS3(sdkS3Request(t, c.path, c.body, c.hash, "tok"), exampleSecretOf)
			if err != nil {
				t.Fatalf("VerifyS3: %v", err)
			}
			if id.SessionToken != "tok" {
				t.Errorf("SessionToken = %q", id.SessionToken)
			}
			got, code := readAll(t, p)
			if code != c.code || (code == "" && !bytes.Equal(got, body)) {
				t.Errorf("read %q, error %q; want error %q", got, code, c.code)
			}
		})
	}
}

func TestS3ShortBody(t *testing.T) {
	body := []byte("0123456789")
	r := sdkS3Request(t, "/b/k", body, hexSHA256(body), "")
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body[:4]), iotestErrReader{io.ErrUnexpectedEOF}))
	_, p, err := s3Verifier(exampleTime).VerifyS3(r, exampleSecretOf)
	if err != nil {
		t.Fatal(err)
	}
	if _, code := readAll(t, p); code != "IncompleteBody" {
		t.Errorf("error %q, want IncompleteBody", code)
	}
	if strconv.Itoa(int(p.Size())) != "10" {
		t.Errorf("Size = %d", p.Size())
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }
