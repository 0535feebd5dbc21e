package sdkws

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"strings"
	"time"
)

// query holds the parameters of an upgrade URL, keyed by lower-cased name.
type query map[string]string

// parseQuery splits a raw query string leniently (protocol §1.3, §9.1): the Go SDK
// percent-encodes values, the C++ and C# SDKs concatenate them raw, so each name and value is
// unescaped when it is valid percent-encoding and kept as sent otherwise. Names are matched
// case-insensitively; the first occurrence of a name wins.
func parseQuery(raw string) query {
	q := make(query, 12)
	for raw != "" {
		var part string
		part, raw, _ = strings.Cut(raw, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k = strings.ToLower(unescape(k))
		if _, dup := q[k]; !dup {
			q[k] = unescape(v)
		}
	}
	return q
}

func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// get returns the parameter named name (any case).
func (q query) get(name string) string { return q[strings.ToLower(name)] }

// sigV4 is the SDK's own SigV4 variant (protocol §1.2), checked by verifySigV4.
type sigV4 struct {
	accessKeyID, date, region, service string
	time                               time.Time
	signature                          []byte
}

const sigV4Algorithm = "AWS4-HMAC-SHA256"

// parseSigV4 reads X-Amz-Algorithm, X-Amz-Credential, X-Amz-Date and X-Amz-Signature.
func parseSigV4(q query) (*sigV4, *Error) {
	if alg := q.get("X-Amz-Algorithm"); alg != "" && alg != sigV4Algorithm {
		return nil, Errorf(403, "unsupported X-Amz-Algorithm %q", alg)
	}
	parts := strings.Split(q.get("X-Amz-Credential"), "/")
	if len(parts) != 5 || parts[0] == "" || parts[4] != "aws4_request" {
		return nil, Errorf(403, "malformed X-Amz-Credential")
	}
	s := &sigV4{accessKeyID: parts[0], date: parts[1], region: parts[2], service: parts[3]}
	if s.service != "gamelift" {
		return nil, Errorf(403, "credential scope names service %q, want gamelift", s.service)
	}
	t, err := time.Parse("20060102T150405Z", q.get("X-Amz-Date"))
	if err != nil || t.Format("20060102") != s.date {
		return nil, Errorf(403, "malformed X-Amz-Date or scope date")
	}
	s.time = t
	s.signature, err = hex.DecodeString(q.get("X-Amz-Signature"))
	if err != nil || len(s.signature) != sha256.Size {
		return nil, Errorf(403, "malformed X-Amz-Signature")
	}
	return s, nil
}

// verifySigV4 checks the SDK's SigV4 variant (protocol §1.2; not standard SigV4): the
// "canonical request" is ComputeId, FleetId and pID, sorted by name, names and values
// URL-encoded, joined k=v&k=v&k=v. The Go SDK encodes with url.QueryEscape and the C++ SDK
// with a strict RFC 3986 encoder; both forms are accepted. now is the service's time; the
// signing time may differ from it by maxSkew.
func verifySigV4(q query, keys func(string) (string, bool), now time.Time, maxSkew time.Duration) (*sigV4, *Error) {
	s, err := parseSigV4(q)
	if err != nil {
		return nil, err
	}
	if d := now.Sub(s.time); d > maxSkew || d < -maxSkew {
		return nil, Errorf(403, "signature date %s is too far from the service time", s.time.Format(time.RFC3339))
	}
	secret, ok := "", false
	if keys != nil {
		secret, ok = keys(s.accessKeyID)
	}
	if !ok {
		return nil, Errorf(403, "unknown access key ID")
	}
	key := signingKey(secret, s.date, s.region, s.service)
	dt := q.get("X-Amz-Date")
	for _, enc := range []func(string) string{url.QueryEscape, rfc3986Escape} {
		if hmac.Equal(s.signature, signSDKQuery(key, dt, s, q, enc)) {
			return s, nil
		}
	}
	return nil, Errorf(403, "signature does not match")
}

// signSDKQuery computes the signature of §1.2 steps 1-4 with one value encoder.
func signSDKQuery(key []byte, datetime string, s *sigV4, q query, enc func(string) string) []byte {
	canonical := "ComputeId=" + enc(q.get("ComputeId")) +
		"&FleetId=" + enc(q.get("FleetId")) +
		"&pID=" + enc(q.get("pID"))
	sum := sha256.Sum256([]byte(canonical))
	toSign := sigV4Algorithm + "\n" + datetime + "\n" +
		s.date + "/" + s.region + "/" + s.service + "/aws4_request\n" + hex.EncodeToString(sum[:])
	return hmacSHA256(key, toSign)
}

// signingKey is the standard SigV4 key chain.
func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// rfc3986Escape percent-encodes every byte outside the RFC 3986 unreserved set.
func rfc3986Escape(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}
