package httpapi

import (
	"mime"
	"net/http"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/wire/awsjson"
	"github.com/hoist-gg/hoist/wire/cbor"
)

// protocol is one wire protocol: its codec and the headers its responses carry.
type protocol struct {
	contentType []string
	smithy      bool // responses carry smithy-protocol: rpc-v2-cbor
	decode      func(body []byte, in any) *api.Error
	encode      func(out any) ([]byte, error)
	encodeError func(e *api.Error) []byte
}

var (
	awsJSON = &protocol{
		contentType: []string{awsjson.ContentType},
		decode:      awsjson.DecodeInput,
		encode:      awsjson.EncodeOutput,
		encodeError: awsjson.EncodeError,
	}
	rpcCBOR = &protocol{
		contentType: []string{cbor.ContentType},
		smithy:      true,
		decode:      cbor.DecodeInput,
		encode:      cbor.EncodeOutput,
		encodeError: cbor.EncodeError,
	}
)

// Canonical header keys, set by direct map assignment to skip canonicalization per request.
const (
	headerContentType   = "Content-Type"
	headerContentLength = "Content-Length"
	headerRequestID     = "X-Amzn-Requestid"
	headerErrorType     = "X-Amzn-Errortype"
	headerSmithy        = "Smithy-Protocol"
	headerTarget        = "X-Amz-Target"
)

var (
	textPlain   = []string{"text/plain; charset=utf-8"}
	smithyValue = []string{cbor.ProtocolValue}
	allowPost   = []string{http.MethodPost}
)

const (
	cborPathMarker = "/service/GameLift/operation/"
	targetPrefix   = "GameLift."
	// expected tells a caller that reached neither protocol what Hoist serves.
	expected = "Hoist serves the Amazon GameLift API: send POST with X-Amz-Target: GameLift.<Operation> " +
		"and Content-Type: application/x-amz-json-1.1 (awsJson1_1), or POST " +
		"<endpoint>/service/GameLift/operation/<Operation> with smithy-protocol: rpc-v2-cbor and " +
		"Content-Type: application/cbor (RPC v2 CBOR); GET /healthz checks liveness"
)

// route picks the protocol and the operation name of r, or returns the error to answer (in
// the returned protocol's form) when r is not a well-formed request of either protocol.
func route(r *http.Request) (*protocol, string, *api.Error) {
	if i := strings.LastIndex(r.URL.Path, cborPathMarker); i >= 0 {
		return rpcCBOR, r.URL.Path[i+len(cborPathMarker):], checkCBOR(r)
	}
	target := r.Header[headerTarget]
	if len(target) == 0 {
		return awsJSON, "", api.Errorf(api.UnknownOperationException, "%s %s is not a GameLift API request. %s",
			r.Method, r.URL.Path, expected)
	}
	name, ok := strings.CutPrefix(target[0], targetPrefix)
	if !ok || name == "" {
		return awsJSON, "", api.Errorf(api.UnknownOperationException,
			"X-Amz-Target %q does not name a GameLift operation; expected GameLift.<Operation>", target[0])
	}
	return awsJSON, name, checkJSON(r)
}

// checkCBOR checks the method and headers of an RPC v2 CBOR request.
func checkCBOR(r *http.Request) *api.Error {
	if r.Method != http.MethodPost {
		return methodError(r)
	}
	if v := r.Header[headerSmithy]; len(v) == 0 || v[0] != cbor.ProtocolValue {
		return api.Errorf(api.SerializationException,
			"RPC v2 CBOR requests must carry the header smithy-protocol: %s", cbor.ProtocolValue)
	}
	ct := r.Header[headerContentType]
	if len(ct) == 0 && r.ContentLength == 0 {
		return nil // a request without a body may omit its content type
	}
	if len(ct) == 0 || !mediaTypeIs(ct[0], cbor.ContentType) {
		return api.Errorf(api.SerializationException,
			"unsupported Content-Type %q for RPC v2 CBOR; expected %s", first(ct), cbor.ContentType)
	}
	return nil
}

// checkJSON checks the method and content type of an awsJson1_1 request.
func checkJSON(r *http.Request) *api.Error {
	if r.Method != http.MethodPost {
		return methodError(r)
	}
	ct := r.Header[headerContentType]
	if len(ct) > 0 && (mediaTypeIs(ct[0], awsjson.ContentType) || mediaTypeIs(ct[0], awsjson.ContentType10)) {
		return nil
	}
	return api.Errorf(api.SerializationException,
		"unsupported Content-Type %q for awsJson1_1; expected %s", first(ct), awsjson.ContentType)
}

func methodError(r *http.Request) *api.Error {
	return api.Errorf(api.UnknownOperationException,
		"GameLift operations are called with POST, not %s", r.Method)
}

// mediaTypeIs reports whether the Content-Type value v is the media type want, ignoring
// parameters and case.
func mediaTypeIs(v, want string) bool {
	if strings.EqualFold(v, want) {
		return true // the common case, without parsing
	}
	mt, _, err := mime.ParseMediaType(v)
	return err == nil && mt == want
}

func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}
