package sigv4

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

func TestAppendTrimmed(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "",
		"a":                "a",
		"  a   b  c ":      "a b c",
		"\ta  b\t":         "a b",
		"attempt=1; max=3": "attempt=1; max=3",
		"a\t\tb":           "a\t\tb", // only spaces collapse
	} {
		if got := string(appendTrimmed(nil, in)); got != want {
			t.Errorf("appendTrimmed(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestAppendURI(t *testing.T) {
	for in, want := range map[string]string{
		"/": "/",
		"/service/GameLift/operation/DescribeAlias": "/service/GameLift/operation/DescribeAlias",
		"/a%20b/c%2Fd": "/a%2520b/c%252Fd",
		"/a b~_.-":     "/a%20b~_.-",
		"/é:@":         "/%C3%A9%3A%40",
	} {
		if got := string(appendURI(nil, in)); got != want {
			t.Errorf("appendURI(%q) = %q; want %q", in, got, want)
		}
	}
}

func TestNormalizePath(t *testing.T) {
	for in, want := range map[string]string{
		"/a//b":         "/a/b",
		"/a/./b/":       "/a/b/",
		"/a/b/../c":     "/a/c",
		"/../a":         "/a",
		"/a/b/..":       "/a/",
		"/a/.":          "/a/",
		"//":            "/",
		"/a/%2E%2E/b/.": "/a/%2E%2E/b/",
	} {
		if !needsNormalizing(in) {
			t.Errorf("needsNormalizing(%q) = false", in)
		}
		if got := normalizePath(in); got != want {
			t.Errorf("normalizePath(%q) = %q; want %q", in, got, want)
		}
	}
	for _, p := range []string{"/", "/a/b", "/a/b/", "/a.b/..c/.d"} {
		if needsNormalizing(p) {
			t.Errorf("needsNormalizing(%q) = true", p)
		}
	}
}

func TestCanonicalQuery(t *testing.T) {
	s := &scratch{rawQuery: "b=2&a=1&a=0&&sp=x+y&e=&f&X-Amz-Signature=ab&k%2F=%7E%2a"}
	if err := s.parseQuery(); err != nil {
		t.Fatal(err)
	}
	const want = "X-Amz-Signature=ab&a=0&a=1&b=2&e=&f=&k%2F=~%2A&sp=x%20y"
	if got := string(s.appendQuery(nil, false)); got != want {
		t.Errorf("canonical query = %q; want %q", got, want)
	}
	if got := string(s.appendQuery(nil, true)); got != strings.TrimPrefix(want, "X-Amz-Signature=ab&") {
		t.Errorf("presigned canonical query = %q", got)
	}
}

func TestHMACPadded(t *testing.T) {
	var key [32]byte
	for i := range key {
		key[i] = byte(i * 7)
	}
	for _, msg := range []string{"", "abc", strings.Repeat("x", 200)} {
		m := hmac.New(sha256.New, key[:])
		m.Write([]byte(msg))
		want := m.Sum(nil)
		got := hmacPadded(&key, append(make([]byte, 64), msg...))
		if !hmac.Equal(got[:], want) {
			t.Errorf("hmacPadded(%q) = %x; want %x", msg, got, want)
		}
	}
}

func TestDeriveKeyExample(t *testing.T) {
	// The signing-key example of the AWS General Reference (SigV4, "derive a signing key").
	k := deriveKey(cacheKey{"wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "20120215", "us-east-1", "iam"})
	const want = "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d"
	if got := hex.EncodeToString(k[:]); got != want {
		t.Errorf("deriveKey = %s; want %s", got, want)
	}
}

// referenceSign is a plain string-building SigV4 signer written straight from the
// specification, used to sign what the SDK cannot (a Date header instead of X-Amz-Date).
func referenceSign(method, path, canonicalHeaders, signedHeaders, amzDate string, body []byte) string {
	cr := strings.Join([]string{method, path, "", canonicalHeaders, signedHeaders, hexSHA256(body)}, "\n")
	scope := amzDate[:8] + "/" + testRegion + "/gamelift/aws4_request"
	sts := strings.Join([]string{algorithm, amzDate, scope, hexSHA256([]byte(cr))}, "\n")
	mac := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	key := mac(mac(mac(mac([]byte("AWS4"+testSecret), amzDate[:8]), testRegion), "gamelift"), "aws4_request")
	return "AWS4-HMAC-SHA256 Credential=" + testAKID + "/" + scope + ", SignedHeaders=" + signedHeaders +
		", Signature=" + hex.EncodeToString(mac(key, sts))
}

func TestDateHeader(t *testing.T) {
	v, _ := newVerifier()
	body := []byte("{}")
	date := t0.Add(-time.Minute).Format(http.TimeFormat)
	r, _ := http.NewRequest("POST", "http://h:1/", nil)
	r.Header.Set("Date", date)
	r.Header.Set("X-Amz-Target", "GameLift.ListFleets")
	r.Header.Set("Authorization", referenceSign("POST", "/",
		"date:"+date+"\nhost:h:1\nx-amz-target:GameLift.ListFleets\n", "date;host;x-amz-target", "20260601T115900Z", body))
	id := wantOK(t, v, r, body)
	if !id.Time.Equal(t0.Add(-time.Minute)) {
		t.Errorf("identity time = %v", id.Time)
	}
	r.Header.Set("Date", t0.Add(-2*time.Minute).Format(http.TimeFormat)) // same day, other time
	wantErr(t, v, r, body, api.InvalidSignatureException, "does not match")
}

func TestKeyCache(t *testing.T) {
	v, _ := newVerifier()
	bad := jsonRequest()
	bad.secret = "wrong"
	wantErr(t, v, bad.serverRequest(t), bad.body, api.InvalidSignatureException, "")
	if n := v.keys.len(); n != 0 {
		t.Fatalf("a failed verification cached %d keys", n)
	}
	for i := range maxCachedKeys + 10 {
		sp := jsonRequest()
		sp.region = fmt.Sprintf("region-%d", i)
		wantOK(t, v, sp.serverRequest(t), sp.body)
		wantOK(t, v, sp.serverRequest(t), sp.body) // now from the cache
	}
	if n := v.keys.len(); n != maxCachedKeys {
		t.Fatalf("cache holds %d keys; want %d", n, maxCachedKeys)
	}
	// A cached key is used only for its own secret.
	wantErr(t, v, bad.serverRequest(t), bad.body, api.InvalidSignatureException, "")
}

func TestConcurrentVerify(t *testing.T) {
	v, _ := newVerifier()
	specs := []reqSpec{jsonRequest(), cborRequest("/service/GameLift/operation/DescribeAlias")}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		sp := specs[g%2]
		sp.region = fmt.Sprintf("r%d", g%3)
		r := sp.serverRequest(t)
		wg.Go(func() {
			for range 200 {
				if _, err := v.Verify(r, sp.body); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
