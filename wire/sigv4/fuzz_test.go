package sigv4

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

// FuzzAuthorization feeds arbitrary Authorization headers (and X-Amz-Date values) to Verify:
// it must not panic, and it must reject them with one of the signature errors.
func FuzzAuthorization(f *testing.F) {
	good := jsonRequest().clientRequest(f).Header.Get("Authorization")
	for _, seed := range []string{
		good, "", "AWS4-HMAC-SHA256", "AWS4-HMAC-SHA256 ,,,", "AWS4-HMAC-SHA256 Credential=////",
		"AWS4-HMAC-SHA256 Credential=a/20260601/r/gamelift/aws4_request, SignedHeaders=host;;, Signature=zz",
		"AWS4-HMAC-SHA256 Credential=a/b/c/d/e/f, SignedHeaders=HOST, Signature=" + good[len(good)-64:],
	} {
		f.Add(seed, "20260601T120000Z")
	}
	known := map[api.ErrorCode]bool{
		api.MissingAuthenticationTokenException: true, api.IncompleteSignatureException: true,
		api.UnrecognizedClientException: true, api.InvalidSignatureException: true,
	}
	f.Fuzz(func(t *testing.T, auth, date string) {
		v, _ := newVerifier()
		r, _ := http.NewRequest("POST", "http://127.0.0.1:9080/", nil)
		r.Header.Set("Authorization", auth)
		r.Header.Set("X-Amz-Date", date)
		r.Header.Set("X-Amz-Target", "GameLift.ListFleets")
		id, err := v.Verify(r, []byte("{}"))
		if err == nil {
			t.Fatalf("Verify accepted %q as %+v", auth, id)
		}
		if !known[err.Code] {
			t.Fatalf("Verify(%q) = %v; want a signature error", auth, err)
		}
	})
}

// FuzzPresignedQuery feeds arbitrary query strings, seeded with a real presigned one, to
// Verify: it must not panic, and it must accept only queries carrying the seed's signature
// (reordered or re-encoded, a query can stay valid; a new signature cannot be forged).
func FuzzPresignedQuery(f *testing.F) {
	r := presign(f, "http://127.0.0.1:9080/websocket?X-Amz-Expires=300", "", "")
	_, good, _ := strings.Cut(r.RequestURI, "?")
	goodSig := r.URL.Query().Get(qSignature)
	for _, seed := range []string{good, "", "X-Amz-Algorithm=", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=-1", "%", "a=%zz&&="} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, query string) {
		v, _ := newVerifier()
		r, _ := http.NewRequest("GET", "http://127.0.0.1:9080/websocket", nil)
		r.RequestURI = "/websocket?" + query
		id, err := v.Verify(r, nil)
		if err == nil && signatureOf(query) != goodSig {
			t.Fatalf("Verify accepted query %q as %+v", query, id)
		}
	})
}

// signatureOf returns the X-Amz-Signature parameter of a raw query.
func signatureOf(query string) string {
	s := &scratch{rawQuery: query}
	if s.parseQuery() != nil {
		return ""
	}
	sig, _ := s.param(qSignature)
	return sig
}
