// Package sigv4 verifies AWS Signature Version 4 (AWS4-HMAC-SHA256) on incoming requests, the
// way an AWS JSON-protocol service does: from the Authorization header, or from presigned
// query-string parameters. It is written from the public specification (AWS General
// Reference, "Signature Version 4 signing process") and answers with the errors AWS clients
// know (MissingAuthenticationTokenException, IncompleteSignatureException,
// UnrecognizedClientException, InvalidSignatureException).
//
// Decisions where the specification leaves room:
//
//   - The canonical URI is the path as sent, each byte outside the unreserved set and '/'
//     percent-encoded once more (double encoding, as for every service but S3). Some SDKs
//     (Go v2) sign the path as it is, others (botocore, JavaScript) first remove dot and empty
//     segments; when that normalization changes the path, both forms are tried.
//   - Query parameters are sorted by decoded name, then decoded value, as the SDKs do.
//   - X-Amz-Content-Sha256, when present, is the payload hash; a hex digest must match the
//     body. UNSIGNED-PAYLOAD is accepted only when the body is empty: GameLift operations carry
//     their input in the body, and an unsigned body could be changed in transit. A presigned
//     request without the header is checked against the hash of its (empty) body and, failing
//     that, against UNSIGNED-PAYLOAD.
//   - The region in the credential scope is not checked; it is reported in the Identity.
//   - A presigned request without X-Amz-Expires is held to MaxSkew, like a signed header.
//   - X-Amz-Security-Token is signed like any other header or parameter but not checked:
//     Hoist's keys have no session tokens.
//
// S3 requests (the build uploads) go through VerifyS3 instead, which follows S3's rules: the
// path is encoded once, the body is streamed rather than read first, and X-Amz-Content-Sha256
// may be UNSIGNED-PAYLOAD with a body or announce an aws-chunked body (chunks signed one by
// one, optionally followed by trailing checksums, or unsigned with trailing checksums). Its
// errors carry S3's error codes (S3Error), and it reports the session token for the caller to
// check. The Verify path for GameLift is unchanged.
package sigv4

import (
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
)

// Defaults for the zero values of Verifier's fields.
const (
	// DefaultMaxSkew is how far a request's date may be from the clock, as AWS allows.
	DefaultMaxSkew = 15 * time.Minute
	// DefaultService is the signing name of GameLift.
	DefaultService = "gamelift"
	// maxPresignExpiry is the longest X-Amz-Expires accepted: one week, as in AWS.
	maxPresignExpiry = 7 * 24 * time.Hour
)

// Verifier checks SigV4 signatures. Set its fields before the first Verify and do not copy it
// afterwards (it holds a cache of derived signing keys). It is safe for concurrent use.
type Verifier struct {
	// Keys returns the secret access key of an access key ID; ok is false for an unknown ID.
	// A nil Keys knows no key.
	Keys func(accessKeyID string) (secret string, ok bool)
	// Clock is the time the request date is checked against; nil means clock.Real{}.
	Clock clock.Clock
	// MaxSkew is how far the request date may be from Clock's time; zero means
	// DefaultMaxSkew.
	MaxSkew time.Duration
	// Service is the signing name the credential scope must name; "" means DefaultService.
	Service string
	// AlsoServices are further signing names accepted (e.g. "sns" for the SNS API served on
	// the same listener with the same keys).
	AlsoServices []string

	keys keyCache
}

// Identity is who signed a verified request, and when.
type Identity struct {
	// AccessKeyID is the key the request was signed with.
	AccessKeyID string
	// Region is the region of the credential scope (not checked).
	Region string
	// Service is the signing name of the credential scope.
	Service string
	// Time is the signing time (X-Amz-Date, or the Date header).
	Time time.Time
}

// Verify checks the signature of r, whose body has been read into body. It returns who signed
// the request, or the error to send to the client. r's body is not read.
func (v *Verifier) Verify(r *http.Request, body []byte) (*Identity, *api.Error) {
	s := getScratch()
	defer putScratch(s)
	a, err := parseRequest(r, s)
	if err != nil {
		return nil, err
	}
	if err := v.checkScope(a); err != nil {
		return nil, err
	}
	if err := v.checkTime(a); err != nil {
		return nil, err
	}
	secret, ok := "", false
	if v.Keys != nil {
		secret, ok = v.Keys(a.accessKeyID)
	}
	if !ok {
		return nil, api.Errorf(api.UnrecognizedClientException, "The security token included in the request is invalid.")
	}
	ck := cacheKey{secret, a.scopeDate, a.region, a.service}
	key, cached := v.keys.get(ck)
	if !cached {
		key = deriveKey(ck)
	}
	if err := checkSignature(r, body, a, &key, s); err != nil {
		return nil, err
	}
	if !cached {
		v.keys.put(ck, key)
	}
	return &Identity{AccessKeyID: a.accessKeyID, Region: a.region, Service: a.service, Time: a.time}, nil
}

// checkScope checks the credential scope against the service and the request date.
func (v *Verifier) checkScope(a *authInfo) *api.Error {
	service := v.Service
	if service == "" {
		service = DefaultService
	}
	if a.service != service && !slices.Contains(v.AlsoServices, a.service) {
		return api.Errorf(api.InvalidSignatureException, "Credential should be scoped to correct service: '%s'. ", service)
	}
	if a.scopeDate != a.amzDate[:8] {
		return api.Errorf(api.InvalidSignatureException,
			"Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '%s' != '%s', from '%s'.",
			a.scopeDate, a.amzDate[:8], a.amzDate)
	}
	return nil
}

// checkTime checks the request date against the clock: within MaxSkew either way, and for a
// presigned request with X-Amz-Expires, not past its expiry.
func (v *Verifier) checkTime(a *authInfo) *api.Error {
	var now time.Time
	if v.Clock != nil {
		now = v.Clock.Now()
	} else {
		now = time.Now()
	}
	now = now.UTC()
	skew := v.MaxSkew
	if skew <= 0 {
		skew = DefaultMaxSkew
	}
	if a.time.After(now.Add(skew)) {
		return api.Errorf(api.InvalidSignatureException, "Signature not yet current: %s is still later than %s (%s + %s)",
			a.amzDate, now.Add(skew).Format(basicISO8601), now.Format(basicISO8601), minutes(skew))
	}
	if a.expires > 0 {
		if end := a.time.Add(a.expires); !now.Before(end) {
			return api.Errorf(api.InvalidSignatureException, "Signature expired: %s is now earlier than %s (%s + %d seconds)",
				end.Format(basicISO8601), now.Format(basicISO8601), a.amzDate, int64(a.expires/time.Second))
		}
		return nil
	}
	if a.time.Before(now.Add(-skew)) {
		return api.Errorf(api.InvalidSignatureException, "Signature expired: %s is now earlier than %s (%s - %s)",
			a.amzDate, now.Add(-skew).Format(basicISO8601), now.Format(basicISO8601), minutes(skew))
	}
	return nil
}

// minutes formats a skew as AWS does in its messages ("15 min.").
func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + " min."
	}
	return d.String()
}
