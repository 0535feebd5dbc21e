package sigv4

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
)

const (
	algorithm    = "AWS4-HMAC-SHA256"
	terminator   = "aws4_request"
	basicISO8601 = "20060102T150405Z"
	// unsignedPayload is the payload hash of a request that does not sign its body.
	unsignedPayload = "UNSIGNED-PAYLOAD"
)

// Query parameters of a presigned request.
const (
	qAlgorithm     = "X-Amz-Algorithm"
	qCredential    = "X-Amz-Credential"
	qDate          = "X-Amz-Date"
	qExpires       = "X-Amz-Expires"
	qSignedHeaders = "X-Amz-SignedHeaders"
	qSignature     = "X-Amz-Signature"
	qContentSHA256 = "X-Amz-Content-Sha256"
)

// authInfo is what a request says about its signature. Its strings point into the request.
type authInfo struct {
	presigned     bool
	accessKeyID   string
	scope         string // date/region/service/aws4_request
	scopeDate     string
	region        string
	service       string
	signedHeaders string
	signature     string
	amzDate       string // the signing time as signed, basic ISO 8601
	time          time.Time
	expires       time.Duration // X-Amz-Expires of a presigned request; 0 when absent
	payloadHash   string        // X-Amz-Content-Sha256; "" when absent
	hasPayload    bool          // X-Amz-Content-Sha256 was present
}

// queryPair is one decoded query parameter.
type queryPair struct{ key, value string }

// incomplete returns an IncompleteSignatureException.
func incomplete(format string, args ...any) *api.Error {
	return api.Errorf(api.IncompleteSignatureException, format, args...)
}

// parseRequest reads the request target into s and the signature parameters into s.auth,
// from the Authorization header or the query string.
func parseRequest(r *http.Request, s *scratch) (*authInfo, *api.Error) {
	s.path, s.rawQuery = requestTarget(r)
	if err := s.parseQuery(); err != nil {
		return nil, err
	}
	a := &s.auth
	auth := r.Header["Authorization"]
	_, presigned := s.param(qAlgorithm)
	switch {
	case len(auth) > 0 && auth[0] != "" && presigned:
		return nil, incomplete("Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified")
	case len(auth) > 0 && auth[0] != "":
		return a, parseAuthorization(auth[0], r.Header, a)
	case presigned:
		return a, parsePresigned(s, r.Header, a)
	}
	return nil, api.Errorf(api.MissingAuthenticationTokenException, "Missing Authentication Token")
}

// requestTarget returns the path and raw query as the client sent them: from RequestURI on a
// server request (so a middleware that rewrites r.URL does not break the signature), else
// from r.URL.
func requestTarget(r *http.Request) (path, query string) {
	if strings.HasPrefix(r.RequestURI, "/") {
		path, query, _ = strings.Cut(r.RequestURI, "?")
	} else {
		path, query = r.URL.EscapedPath(), r.URL.RawQuery
	}
	if path == "" {
		path = "/"
	}
	return path, query
}

// parseQuery decodes s.rawQuery into s.query, in the order sent.
func (s *scratch) parseQuery() *api.Error {
	s.query = s.query[:0]
	for rest := s.rawQuery; rest != ""; {
		var part string
		part, rest, _ = strings.Cut(rest, "&")
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return incomplete("The query string is not properly encoded: %q", part)
		}
		s.query = append(s.query, queryPair{key, value})
	}
	return nil
}

// param returns the first value of the query parameter key.
func (s *scratch) param(key string) (string, bool) {
	for _, p := range s.query {
		if p.key == key {
			return p.value, true
		}
	}
	return "", false
}

// parseAuthorization parses an Authorization header value and the date and payload-hash
// headers that go with it.
func parseAuthorization(h string, hdr http.Header, a *authInfo) *api.Error {
	alg, rest, _ := strings.Cut(h, " ")
	if alg != algorithm {
		return incomplete("Authorization header must use the '%s' algorithm, got '%s'. Authorization=%s", algorithm, alg, h)
	}
	var cred string
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, ",")
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			cred = v
		case "SignedHeaders":
			a.signedHeaders = v
		case "Signature":
			a.signature = v
		}
	}
	if msg := missingParams(cred, a.signedHeaders, a.signature); msg != "" {
		return incomplete("%sAuthorization=%s", msg, h)
	}
	if err := parseCredential(cred, a); err != nil {
		return err
	}
	if err := requireHost(a.signedHeaders); err != nil {
		return err
	}
	if err := headerDate(hdr, a); err != nil {
		return err
	}
	a.payloadHash, a.hasPayload = firstHeader(hdr, "X-Amz-Content-Sha256")
	return nil
}

// missingParams names the Authorization parameters that are empty, as AWS does.
func missingParams(cred, signedHeaders, signature string) string {
	msg := ""
	for _, p := range [...]struct{ name, value string }{
		{"Credential", cred}, {"Signature", signature}, {"SignedHeaders", signedHeaders},
	} {
		if p.value == "" {
			msg += "Authorization header requires '" + p.name + "' parameter. "
		}
	}
	return msg
}

// firstHeader returns the first value of the header with the canonical name key.
func firstHeader(h http.Header, key string) (string, bool) {
	if v := h[key]; len(v) > 0 {
		return v[0], true
	}
	return "", false
}

// headerDate reads the signing time from X-Amz-Date, or failing that from Date.
func headerDate(h http.Header, a *authInfo) *api.Error {
	if d, ok := firstHeader(h, "X-Amz-Date"); ok {
		return parseAmzDate(d, a)
	}
	d, ok := firstHeader(h, "Date")
	if !ok {
		return incomplete("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.")
	}
	t, err := http.ParseTime(d)
	if err != nil {
		return incomplete("Date must be in RFC 1123 format. Got '%s'.", d)
	}
	a.time = t.UTC()
	a.amzDate = a.time.Format(basicISO8601)
	return nil
}

// parseAmzDate sets the signing time from a basic ISO 8601 date.
func parseAmzDate(d string, a *authInfo) *api.Error {
	t, err := time.Parse(basicISO8601, d)
	if err != nil || len(d) != len(basicISO8601) {
		return incomplete("Date must be in ISO-8601 'basic format'. Got '%s'. See http://en.wikipedia.org/wiki/ISO_8601", d)
	}
	a.time, a.amzDate = t, d
	return nil
}

// parseCredential splits AKID/yyyymmdd/region/service/aws4_request.
func parseCredential(c string, a *authInfo) *api.Error {
	akid, scope, ok1 := strings.Cut(c, "/")
	date, rest, ok2 := strings.Cut(scope, "/")
	region, rest, ok3 := strings.Cut(rest, "/")
	service, term, ok4 := strings.Cut(rest, "/")
	if !(ok1 && ok2 && ok3 && ok4) || strings.Contains(term, "/") ||
		akid == "" || date == "" || region == "" || service == "" {
		return incomplete("Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '%s'", c)
	}
	if term != terminator {
		return incomplete("Credential should be scoped with a valid terminator: '%s', not '%s'.", terminator, term)
	}
	if !isDigits(date, 8) {
		return incomplete("Credential date must be in the form yyyyMMdd, got '%s'", date)
	}
	a.accessKeyID, a.scope, a.scopeDate, a.region, a.service = akid, scope, date, region, service
	return nil
}

// isDigits reports whether s is n ASCII digits.
func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := 0; i < n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// requireHost checks that host is a signed header.
func requireHost(signedHeaders string) *api.Error {
	for rest := signedHeaders; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, ";")
		if strings.EqualFold(name, "host") {
			return nil
		}
	}
	return incomplete("'Host' must be a signed header. SignedHeaders=%s", signedHeaders)
}

// parsePresigned reads the X-Amz-* query parameters of a presigned request.
func parsePresigned(s *scratch, hdr http.Header, a *authInfo) *api.Error {
	a.presigned = true
	alg, _ := s.param(qAlgorithm)
	cred, _ := s.param(qCredential)
	date, _ := s.param(qDate)
	a.signedHeaders, _ = s.param(qSignedHeaders)
	a.signature, _ = s.param(qSignature)
	if cred == "" || date == "" || a.signedHeaders == "" || a.signature == "" {
		return incomplete("AWS query-string parameters must include '%s', '%s', '%s', '%s', '%s'. Re-examine the query-string parameters.",
			qAlgorithm, qCredential, qSignature, qDate, qSignedHeaders)
	}
	if alg != algorithm {
		return incomplete("X-Amz-Algorithm must be '%s', got '%s'.", algorithm, alg)
	}
	if err := parseCredential(cred, a); err != nil {
		return err
	}
	if err := requireHost(a.signedHeaders); err != nil {
		return err
	}
	if err := parseAmzDate(date, a); err != nil {
		return err
	}
	if err := parseExpires(s, a); err != nil {
		return err
	}
	if a.payloadHash, a.hasPayload = firstHeader(hdr, "X-Amz-Content-Sha256"); !a.hasPayload {
		a.payloadHash, a.hasPayload = s.param(qContentSHA256)
	}
	return nil
}

// parseExpires reads X-Amz-Expires, which is optional.
func parseExpires(s *scratch, a *authInfo) *api.Error {
	e, ok := s.param(qExpires)
	if !ok {
		return nil
	}
	n, err := strconv.ParseInt(e, 10, 64)
	if err != nil || n <= 0 || n > int64(maxPresignExpiry/time.Second) {
		return incomplete("X-Amz-Expires must be a whole number of seconds from 1 to %d, got '%s'.", int64(maxPresignExpiry/time.Second), e)
	}
	a.expires = time.Duration(n) * time.Second
	return nil
}
