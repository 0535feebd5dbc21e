package sigv4

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/hoist-gg/hoist/api"
)

// scratch holds the per-request buffers; it is pooled so a verification allocates little.
type scratch struct {
	auth     authInfo
	path     string
	rawQuery string
	query    []queryPair
	tail     []byte // canonical request after the URI, up to the payload hash
	buf      []byte // canonical request
	sts      []byte // 64 bytes of HMAC pad, then the string to sign
	kbuf     []byte // header name being canonicalized
	bodyHex  [64]byte
	s3       bool // S3 rules: the canonical URI is the path encoded once (see VerifyS3)
}

var scratchPool = sync.Pool{New: func() any {
	return &scratch{tail: make([]byte, 0, 512), buf: make([]byte, 0, 1024), sts: make([]byte, 64, 256)}
}}

// maxPooledBuffer is the largest buffer kept in the pool; larger ones are left to the GC.
const maxPooledBuffer = 16 << 10

func getScratch() *scratch {
	s := scratchPool.Get().(*scratch)
	s.auth = authInfo{}
	s.s3 = false
	return s
}

func putScratch(s *scratch) {
	if cap(s.tail) > maxPooledBuffer || cap(s.buf) > maxPooledBuffer || cap(s.sts) > maxPooledBuffer {
		return
	}
	s.path, s.rawQuery = "", ""
	clear(s.query)
	s.query = s.query[:0]
	scratchPool.Put(s)
}

// invalidSignature is the error for a signature that does not match.
func invalidSignature() *api.Error {
	return api.Errorf(api.InvalidSignatureException, "The request signature we calculated does not match the signature you provided. "+
		"Check your AWS Secret Access Key and signing method. Consult the service documentation for details.")
}

// checkSignature computes the signature of r with key and compares it with the one sent. It
// tries each canonical URI and payload hash the request may have been signed with (see the
// package documentation); usually there is one of each.
func checkSignature(r *http.Request, body []byte, a *authInfo, key *[32]byte, s *scratch) *api.Error {
	hashes, n, err := payloadHashes(a, body, s)
	if err != nil {
		return err
	}
	want, ok := decodeSignature(a.signature)
	if !ok {
		return invalidSignature()
	}
	s.buildTail(r, a)
	paths := [2]string{s.path}
	np := 1
	if needsNormalizing(s.path) {
		paths[1], np = normalizePath(s.path), 2
	}
	for _, p := range paths[:np] {
		for _, h := range hashes[:n] {
			got := s.sign(r.Method, p, h, a, key)
			if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
				return nil
			}
		}
	}
	return invalidSignature()
}

// payloadHashes returns the payload hashes to try. The empty string stands for the hex
// SHA-256 of the body, held in s.bodyHex.
func payloadHashes(a *authInfo, body []byte, s *scratch) (hashes [2]string, n int, err *api.Error) {
	if !a.hasPayload {
		s.hashBody(body)
		if a.presigned && len(body) == 0 {
			return [2]string{"", unsignedPayload}, 2, nil
		}
		return [2]string{""}, 1, nil
	}
	switch h := a.payloadHash; {
	case h == unsignedPayload:
		if len(body) > 0 {
			return hashes, 0, api.Errorf(api.InvalidSignatureException, "UNSIGNED-PAYLOAD is accepted only for requests without a body; sign the body.")
		}
		return [2]string{h}, 1, nil
	case len(h) == 64 && isHex(h):
		s.hashBody(body)
		if !equalFoldHex(h, &s.bodyHex) {
			return hashes, 0, api.Errorf(api.InvalidSignatureException, "The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
		return [2]string{h}, 1, nil
	default:
		return hashes, 0, incomplete("x-amz-content-sha256 must be a hex SHA-256 digest or UNSIGNED-PAYLOAD, got '%s'.", h)
	}
}

// hashBody sets s.bodyHex to the hex SHA-256 of body.
func (s *scratch) hashBody(body []byte) {
	sum := sha256.Sum256(body)
	hex.Encode(s.bodyHex[:], sum[:])
}

// decodeSignature decodes a 64-digit hex signature.
func decodeSignature(sig string) (out [32]byte, ok bool) {
	if len(sig) != 64 {
		return out, false
	}
	for i := range out {
		hi, ok1 := fromHex(sig[2*i])
		lo, ok2 := fromHex(sig[2*i+1])
		if !ok1 || !ok2 {
			return out, false
		}
		out[i] = hi<<4 | lo
	}
	return out, true
}

// fromHex returns the value of a hex digit.
func fromHex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// equalFoldHex reports whether the hex digest h equals the lower-case hex digest d, ignoring
// case.
func equalFoldHex(h string, d *[64]byte) bool {
	for i := range d {
		c := h[i]
		if 'A' <= c && c <= 'F' {
			c += 'a' - 'A'
		}
		if c != d[i] {
			return false
		}
	}
	return true
}

// isHex reports whether s is all hex digits.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// buildTail writes the part of the canonical request that does not depend on the candidate
// URI and payload hash: "\n" query "\n" headers "\n" signed-headers "\n".
func (s *scratch) buildTail(r *http.Request, a *authInfo) {
	b := append(s.tail[:0], '\n')
	b = s.appendQuery(b, a.presigned)
	b = append(b, '\n')
	b = s.appendHeaders(b, r, a.signedHeaders)
	b = append(b, '\n')
	b = append(b, a.signedHeaders...)
	s.tail = append(b, '\n')
}

// sign returns the signature of the canonical request with the given URI and payload hash.
func (s *scratch) sign(method, path, payloadHash string, a *authInfo, key *[32]byte) [32]byte {
	b := append(s.buf[:0], method...)
	b = append(b, '\n')
	if s.s3 {
		b = appendS3URI(b, path)
	} else {
		b = appendURI(b, path)
	}
	b = append(b, s.tail...)
	if payloadHash == "" {
		b = append(b, s.bodyHex[:]...)
	} else {
		b = append(b, payloadHash...)
	}
	s.buf = b
	crHash := sha256.Sum256(b)

	t := append(s.sts[:64], algorithm+"\n"...)
	t = append(t, a.amzDate...)
	t = append(t, '\n')
	t = append(t, a.scope...)
	t = append(t, '\n')
	t = hex.AppendEncode(t, crHash[:])
	s.sts = t
	return hmacPadded(key, t)
}

// appendURI appends the canonical form of an escaped path: every byte but the unreserved
// ones and '/' percent-encoded (so '%' of the escaping becomes "%25").
func appendURI(b []byte, path string) []byte {
	for i := 0; i < len(path); i++ {
		if c := path[i]; c == '/' || unreserved(c) {
			b = append(b, c)
		} else {
			b = appendEscaped(b, c)
		}
	}
	return b
}

// unreserved reports whether c is an RFC 3986 unreserved character.
func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '_' || c == '.' || c == '~'
}

// appendEscaped appends %XX for c, upper-case hex.
func appendEscaped(b []byte, c byte) []byte {
	const digits = "0123456789ABCDEF"
	return append(b, '%', digits[c>>4], digits[c&15])
}

// appendEncoded appends s URI-encoded: every byte but the unreserved ones as %XX.
func appendEncoded(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; unreserved(c) {
			b = append(b, c)
		} else {
			b = appendEscaped(b, c)
		}
	}
	return b
}

// needsNormalizing reports whether path has empty, "." or ".." segments.
func needsNormalizing(path string) bool {
	return strings.Contains(path, "//") || strings.Contains(path, "/./") || strings.Contains(path, "/../") ||
		strings.HasSuffix(path, "/.") || strings.HasSuffix(path, "/..")
}

// normalizePath removes empty, "." and ".." segments (RFC 3986 section 5.2.4, with empty
// segments dropped as the SDKs that normalize do), keeping a trailing slash.
func normalizePath(path string) string {
	var segs []string
	for _, seg := range strings.Split(path, "/") {
		switch seg {
		case "", ".":
		case "..":
			if len(segs) > 0 {
				segs = segs[:len(segs)-1]
			}
		default:
			segs = append(segs, seg)
		}
	}
	out := "/" + strings.Join(segs, "/")
	if len(segs) > 0 && (strings.HasSuffix(path, "/") || strings.HasSuffix(path, "/.") || strings.HasSuffix(path, "/..")) {
		out += "/"
	}
	return out
}

// appendQuery appends the canonical query string: parameters sorted by name then value
// (decoded, as the SDKs sort), each URI-encoded; a presigned request's X-Amz-Signature left
// out.
func (s *scratch) appendQuery(b []byte, presigned bool) []byte {
	slices.SortFunc(s.query, func(x, y queryPair) int {
		if c := strings.Compare(x.key, y.key); c != 0 {
			return c
		}
		return strings.Compare(x.value, y.value)
	})
	first := true
	for _, p := range s.query {
		if presigned && p.key == qSignature {
			continue
		}
		if !first {
			b = append(b, '&')
		}
		first = false
		b = appendEncoded(b, p.key)
		b = append(b, '=')
		b = appendEncoded(b, p.value)
	}
	return b
}

// appendHeaders appends "name:value\n" for every signed header, in the order of the
// SignedHeaders list (which the specification requires to be sorted).
func (s *scratch) appendHeaders(b []byte, r *http.Request, signedHeaders string) []byte {
	for rest := signedHeaders; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, ";")
		b = append(b, name...)
		b = append(b, ':')
		b = s.appendHeaderValue(b, r, name)
		b = append(b, '\n')
	}
	return b
}

// appendHeaderValue appends the canonical value of the named header: its values trimmed,
// runs of spaces collapsed, joined by commas. Host comes from r.Host, and Content-Length
// from r.ContentLength when the header is not kept in r.Header.
func (s *scratch) appendHeaderValue(b []byte, r *http.Request, name string) []byte {
	if strings.EqualFold(name, "host") {
		host := r.Host
		if host == "" {
			host = r.URL.Host
		}
		return appendTrimmed(b, host)
	}
	values := s.lookup(r.Header, name)
	if values == nil && strings.EqualFold(name, "content-length") && r.ContentLength >= 0 {
		return strconv.AppendInt(b, r.ContentLength, 10)
	}
	for i, v := range values {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTrimmed(b, v)
	}
	return b
}

// lookup returns the values of a header named case-insensitively, without allocating when
// the header is stored under its canonical name (as net/http stores them).
func (s *scratch) lookup(h http.Header, name string) []string {
	k := s.kbuf[:0]
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if upper && 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		upper = c == '-'
		k = append(k, c)
	}
	s.kbuf = k
	if v, ok := h[string(k)]; ok {
		return v
	}
	for key, v := range h {
		if strings.EqualFold(key, name) {
			return v
		}
	}
	return nil
}

// appendTrimmed appends v without leading and trailing spaces and tabs, with each run of
// spaces inside collapsed to one.
func appendTrimmed(b []byte, v string) []byte {
	v = strings.Trim(v, " \t")
	for i := 0; i < len(v); i++ {
		if v[i] == ' ' && i > 0 && v[i-1] == ' ' {
			continue
		}
		b = append(b, v[i])
	}
	return b
}
