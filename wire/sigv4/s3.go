package sigv4

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/api"
)

// Payload-hash values (X-Amz-Content-Sha256) of S3 requests whose body is not one SHA-256
// digest (Amazon S3 API Reference, "Signature Calculations for the Authorization Header:
// Transferring Payload in Multiple Chunks (Chunked Upload)" and "Signature calculations for
// trailing headers (chunked uploads)").
const (
	// StreamingSigned: an aws-chunked body, each chunk signed, chained from the seed signature.
	StreamingSigned = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	// StreamingSignedTrailer: signed chunks followed by trailing headers (checksums) with
	// their own signature.
	StreamingSignedTrailer = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	// StreamingUnsignedTrailer: an aws-chunked body whose chunks are not signed, followed by
	// trailing checksums; clients use it over TLS only.
	StreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	// UnsignedPayload: the body is not covered by the signature.
	UnsignedPayload = unsignedPayload
)

// S3Service is the signing name of S3.
const S3Service = "s3"

// S3Error is an authentication or payload failure of an S3 request, named with S3's error code
// (AccessDenied, SignatureDoesNotMatch, ...). VerifyS3 returns it, and so does a Payload's Read.
type S3Error struct {
	// Code is S3's error code, e.g. "SignatureDoesNotMatch".
	Code string
	// Message is the human-readable text.
	Message string
}

func (e *S3Error) Error() string { return e.Code + ": " + e.Message }

// s3Errorf returns an *S3Error.
func s3Errorf(code, format string, args ...any) *S3Error {
	if len(args) == 0 {
		return &S3Error{Code: code, Message: format}
	}
	return &S3Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// s3SignatureMismatch is S3's answer to a signature that does not match.
func s3SignatureMismatch() *S3Error {
	return s3Errorf("SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

// S3Identity is who signed a verified S3 request.
type S3Identity struct {
	Identity
	// SessionToken is X-Amz-Security-Token (header or query parameter), "" when absent. The
	// caller compares it with the token of the access key.
	SessionToken string
	// PayloadHash is the X-Amz-Content-Sha256 the request was signed with.
	PayloadHash string
}

// VerifyS3 checks the signature of an S3 request whose body has not been read, by S3's rules:
//
//   - the canonical URI is the path URI-encoded once (not double-encoded, not normalized);
//   - the credential scope must name the service "s3";
//   - X-Amz-Content-Sha256 is required with the Authorization header (a presigned request
//     without it is UNSIGNED-PAYLOAD); its value may be a hex digest, UNSIGNED-PAYLOAD, or one
//     of the aws-chunked streaming forms (StreamingSigned, StreamingSignedTrailer,
//     StreamingUnsignedTrailer).
//
// secret returns the secret key of an access key ID; an *S3Error it returns (InvalidAccessKeyId,
// ExpiredToken, ...) is passed on as it is. VerifyS3 checks the headers and the seed signature
// now; the returned Payload checks the body as it is read (chunk signatures, the payload hash,
// the decoded length) and fails its Read with an *S3Error, so a caller must read it to io.EOF
// before trusting what it read.
func (v *Verifier) VerifyS3(r *http.Request, secret func(accessKeyID string) (string, error)) (*S3Identity, *Payload, error) {
	s := getScratch()
	defer putScratch(s)
	s.s3 = true
	a, aerr := parseRequest(r, s)
	if aerr != nil {
		return nil, nil, s3AuthError(aerr, s)
	}
	if err := v.checkS3Scope(a); err != nil {
		return nil, nil, err
	}
	payloadHash, err := s3PayloadHash(a)
	if err != nil {
		return nil, nil, err
	}
	// The credentials first: an expired session token is ExpiredToken whatever the date says.
	key, kerr := v.s3Key(a, secret)
	if kerr != nil {
		return nil, nil, kerr
	}
	if aerr := v.checkTime(a); aerr != nil {
		if a.presigned {
			return nil, nil, s3Errorf("AccessDenied", "Request has expired")
		}
		return nil, nil, s3Errorf("RequestTimeTooSkewed", "The difference between the request time and the current time is too large.")
	}
	s.buildTail(r, a)
	got := s.sign(r.Method, s.path, payloadHash, a, &key)
	want, ok := decodeSignature(a.signature)
	if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return nil, nil, s3SignatureMismatch()
	}
	id := &S3Identity{Identity: Identity{AccessKeyID: a.accessKeyID, Region: a.region, Service: a.service, Time: a.time},
		SessionToken: sessionToken(r, s), PayloadHash: payloadHash}
	p, err := newPayload(r, payloadHash, chain{key: key, amzDate: a.amzDate, scope: a.scope, prev: strings.ToLower(a.signature)})
	if err != nil {
		return nil, nil, err
	}
	return id, p, nil
}

// s3AuthError turns a parse failure into S3's error: no signature at all is AccessDenied, a
// malformed header AuthorizationHeaderMalformed, malformed query parameters
// AuthorizationQueryParametersError.
func s3AuthError(e *api.Error, s *scratch) *S3Error {
	switch {
	case e.Code == api.MissingAuthenticationTokenException:
		return s3Errorf("AccessDenied", "Anonymous access is not allowed: sign the request with the upload credentials.")
	case s.auth.presigned:
		return s3Errorf("AuthorizationQueryParametersError", "%s", e.Message)
	}
	return s3Errorf("AuthorizationHeaderMalformed", "%s", e.Message)
}

// checkS3Scope checks that the credential scope names S3 and the request's date.
func (v *Verifier) checkS3Scope(a *authInfo) *S3Error {
	if a.service != S3Service {
		return s3Errorf("AuthorizationHeaderMalformed",
			"The authorization header is malformed; incorrect service '%s'. This endpoint belongs to '%s'.", a.service, S3Service)
	}
	if a.scopeDate != a.amzDate[:8] {
		return s3Errorf("AuthorizationHeaderMalformed",
			"The authorization header is malformed; Invalid credential date. Date is not the same as X-Amz-Date.")
	}
	return nil
}

// s3Key looks the secret up and returns the signing key, from the cache when it is there.
func (v *Verifier) s3Key(a *authInfo, secret func(string) (string, error)) ([32]byte, error) {
	sec, err := secret(a.accessKeyID)
	if err != nil {
		var s3e *S3Error
		if errors.As(err, &s3e) {
			return [32]byte{}, s3e
		}
		return [32]byte{}, err
	}
	ck := cacheKey{sec, a.scopeDate, a.region, a.service}
	key, cached := v.keys.get(ck)
	if !cached {
		key = deriveKey(ck)
		v.keys.put(ck, key)
	}
	return key, nil
}

// s3PayloadHash returns the payload hash an S3 request is signed with.
func s3PayloadHash(a *authInfo) (string, *S3Error) {
	if !a.hasPayload {
		if a.presigned {
			return unsignedPayload, nil
		}
		return "", s3Errorf("InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
	}
	switch h := a.payloadHash; {
	case h == unsignedPayload, h == StreamingSigned, h == StreamingSignedTrailer, h == StreamingUnsignedTrailer:
		return h, nil
	case len(h) == 64 && isHex(h):
		return strings.ToLower(h), nil
	}
	return "", s3Errorf("InvalidArgument",
		"x-amz-content-sha256 must be UNSIGNED-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD, STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER, STREAMING-UNSIGNED-PAYLOAD-TRAILER or a valid sha256 value.")
}

// sessionToken returns X-Amz-Security-Token from the headers or the query string.
func sessionToken(r *http.Request, s *scratch) string {
	if t, ok := firstHeader(r.Header, "X-Amz-Security-Token"); ok {
		return t
	}
	t, _ := s.param("X-Amz-Security-Token")
	return t
}

// appendS3URI appends S3's canonical URI of an escaped path: the path decoded, then every byte
// but the unreserved ones and '/' percent-encoded once.
func appendS3URI(b []byte, path string) []byte {
	for i := 0; i < len(path); i++ {
		c := path[i]
		if c == '%' && i+2 < len(path) {
			hi, ok1 := fromHex(path[i+1])
			lo, ok2 := fromHex(path[i+2])
			if ok1 && ok2 {
				c, i = hi<<4|lo, i+2
			}
		}
		if c == '/' || unreserved(c) {
			b = append(b, c)
		} else {
			b = appendEscaped(b, c)
		}
	}
	return b
}

// Payload is the body of a verified S3 request: it reads the object's bytes, decoding
// aws-chunked encoding, and checks them against the signature as it goes. Read returns an
// *S3Error when the body turns out not to match (then everything read so far must be
// discarded), and io.EOF only when the whole body checked out.
type Payload struct {
	r       io.Reader
	chunked *chunkReader // nil unless aws-chunked
	sum     hash.Hash    // SHA-256 of the body, when a hex payload hash was signed
	want    string
	n, size int64 // bytes read; the expected decoded length (-1 when unknown)
	err     error
}

// newPayload returns the reader for a body signed with payloadHash.
func newPayload(r *http.Request, payloadHash string, c chain) (*Payload, *S3Error) {
	body := r.Body
	if body == nil {
		body = http.NoBody
	}
	p := &Payload{r: body, size: r.ContentLength}
	switch payloadHash {
	case unsignedPayload:
	case StreamingSigned, StreamingSignedTrailer, StreamingUnsignedTrailer:
		size, err := decodedLength(r)
		if err != nil {
			return nil, err
		}
		p.size = size
		p.chunked = newChunkReader(body, payloadHash, c)
		p.r = p.chunked
	default:
		p.sum, p.want = sha256.New(), payloadHash
	}
	return p, nil
}

// decodedLength reads X-Amz-Decoded-Content-Length, which S3 requires with aws-chunked bodies.
func decodedLength(r *http.Request) (int64, *S3Error) {
	v := r.Header.Get("X-Amz-Decoded-Content-Length")
	if v == "" {
		return 0, s3Errorf("MissingContentLength", "You must provide the Content-Length HTTP header (x-amz-decoded-content-length for aws-chunked bodies).")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, s3Errorf("InvalidArgument", "x-amz-decoded-content-length is not a valid length: '%s'.", v)
	}
	return n, nil
}

// Size returns the length of the object the body carries (Content-Length, or
// X-Amz-Decoded-Content-Length for aws-chunked bodies); -1 when the client did not say.
func (p *Payload) Size() int64 { return p.size }

// Trailer returns the trailing headers of an aws-chunked body (e.g. x-amz-checksum-crc32),
// with canonical names; it is complete once Read has returned io.EOF.
func (p *Payload) Trailer() http.Header {
	if p.chunked == nil {
		return nil
	}
	return p.chunked.trailer
}

// Read reads the object's bytes.
func (p *Payload) Read(b []byte) (int, error) {
	if p.err != nil {
		return 0, p.err
	}
	n, err := p.r.Read(b)
	p.n += int64(n)
	if p.sum != nil {
		p.sum.Write(b[:n])
	}
	if p.size >= 0 && p.n > p.size {
		err = s3Errorf("IncompleteBody", "The body is longer than the declared length %d.", p.size)
	}
	if errors.Is(err, io.EOF) {
		err = p.finish()
	} else if errors.Is(err, io.ErrUnexpectedEOF) {
		err = s3Errorf("IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
	}
	p.err = err
	return n, err
}

// finish checks the whole body once its end is reached.
func (p *Payload) finish() error {
	if p.size >= 0 && p.n != p.size {
		return s3Errorf("IncompleteBody", "You did not provide the number of bytes specified by the Content-Length HTTP header.")
	}
	if p.sum != nil && hex.EncodeToString(p.sum.Sum(nil)) != p.want {
		return s3Errorf("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
	}
	return io.EOF
}
