// Package cbor is the Smithy RPC v2 CBOR wire codec: it decodes request bodies into the
// generated api input types and encodes outputs and errors the way aws-sdk-go-v2 gamelift
// ≥ v1.53 expects (shared/reference/wire-protocol.md §3, §4.2): strings as text strings,
// integers as CBOR integers, timestamps as tag 1, structures as definite-length maps keyed by
// member name, absent members left out.
//
// The codec knows nothing about HTTP routing or about GameLift's domain; httpapi imports it.
package cbor

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	fxcbor "github.com/fxamacker/cbor/v2"

	"github.com/hoist-gg/hoist/api"
)

// ContentType is the content type of RPC v2 CBOR requests and responses.
const ContentType = "application/cbor"

// ProtocolHeader is the header that RPC v2 CBOR requests and responses carry, with
// ProtocolValue as its value.
const (
	ProtocolHeader = "Smithy-Protocol"
	ProtocolValue  = "rpc-v2-cbor"
)

// Limits on what one request body may hold. GameLift's deepest input nests well under 16
// levels and its largest lists hold hundreds of items; the limits keep a hostile body from
// making the decoder allocate far more than the body's own size.
const (
	MaxDepth     = 24
	MaxContainer = 16384  // elements of one array, pairs of one map
	MaxItems     = 200000 // data items in one body
)

var (
	decMode fxcbor.DecMode
	encMode fxcbor.EncMode
)

func init() {
	var err error
	decMode, err = fxcbor.DecOptions{
		DupMapKey:          fxcbor.DupMapKeyQuiet,
		MaxNestedLevels:    MaxDepth,
		MaxArrayElements:   MaxContainer,
		MaxMapPairs:        MaxContainer,
		IndefLength:        fxcbor.IndefLengthAllowed,
		TagsMd:             fxcbor.TagsAllowed,
		UTF8:               fxcbor.UTF8RejectInvalid,
		FieldNameMatching:  fxcbor.FieldNameMatchingCaseSensitive,
		ByteStringToString: fxcbor.ByteStringToStringForbidden,
		NaN:                fxcbor.NaNDecodeAllowed,
		Inf:                fxcbor.InfDecodeAllowed,
	}.DecMode()
	if err != nil {
		panic("cbor: decode options: " + err.Error())
	}
	encMode, err = fxcbor.EncOptions{
		IndefLength: fxcbor.IndefLengthForbidden,
		Time:        fxcbor.TimeUnixDynamic,
		TimeTag:     fxcbor.EncTagRequired,
	}.EncMode()
	if err != nil {
		panic("cbor: encode options: " + err.Error())
	}
}

// DecodeInput decodes body into in, a pointer to a generated input structure. An empty body is
// the empty input; otherwise the body must be exactly one map (definite or indefinite length).
// Unknown keys are ignored and null members stay absent. Any problem, including a value of the
// wrong major type, an integer out of range, or a body beyond the limits above, is a
// SerializationException that names it.
func DecodeInput(body []byte, in any) *api.Error {
	if len(body) == 0 {
		return nil
	}
	if body[0]>>5 != majorMap {
		return api.Errorf(api.SerializationException, "the request body must be a CBOR map")
	}
	if err := checkItems(body, MaxItems); err != nil {
		return api.Errorf(api.SerializationException, "malformed CBOR: %s", err)
	}
	if err := decMode.Unmarshal(body, in); err != nil {
		return serializationError(err)
	}
	return nil
}

// serializationError turns a decoder error into a SerializationException.
func serializationError(err error) *api.Error {
	var typeErr *fxcbor.UnmarshalTypeError
	if errors.As(err, &typeErr) && typeErr.StructFieldName != "" {
		msg := fmt.Sprintf("member '%s': a CBOR %s cannot be decoded into %s",
			memberName(typeErr.StructFieldName), cborType(typeErr.CBORType), goType(typeErr.GoType))
		if strings.Contains(typeErr.Error(), "overflows") {
			msg += " (out of range)"
		}
		return &api.Error{Code: api.SerializationException, Message: msg}
	}
	msg := strings.TrimPrefix(err.Error(), "cbor: ")
	return api.Errorf(api.SerializationException, "malformed CBOR: %s", msg)
}

// memberName drops the Go type from the decoder's "pkg.Struct.Member" path. The decoder names
// the outermost member when the mismatch is nested deeper.
func memberName(field string) string {
	if i := strings.LastIndexByte(field, '.'); i >= 0 {
		return field[i+1:]
	}
	return field
}

// cborType names a CBOR type as the decoder reports it, except its "primitives" for major
// type 7 (floats and simple values).
func cborType(t string) string {
	if t == "primitives" {
		return "float or simple value"
	}
	return t
}

// goType names a Go type the way a client can read it: int32, string, RoutingStrategyType.
func goType(t string) string {
	t = strings.TrimLeft(t, "*[]")
	if i := strings.LastIndexByte(t, '.'); i >= 0 {
		return t[i+1:]
	}
	return t
}

// emptyMap is the encoding of an empty output.
var emptyMap = []byte{0xa0}

// EncodeOutput encodes out, a pointer to a generated output structure, as a definite-length map
// without absent members. A nil pointer (or nil) encodes as the empty map.
func EncodeOutput(out any) ([]byte, error) {
	if out == nil {
		return emptyMap, nil
	}
	if rv := reflect.ValueOf(out); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return emptyMap, nil
	}
	b, err := encMode.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("cbor: encode %T: %w", out, err)
	}
	return b, nil
}

// EncodeError encodes e as the map {"__type": code, "message": m, "Message": m}: typed errors
// in the Go SDK read "Message", its generic error reads "message".
func EncodeError(e *api.Error) []byte {
	b := make([]byte, 0, 40+len(e.Code)+2*len(e.Message))
	b = append(b, 0xa3)
	b = appendText(b, "__type")
	b = appendText(b, strings.ToValidUTF8(string(e.Code), "\uFFFD"))
	msg := strings.ToValidUTF8(e.Message, "\uFFFD")
	b = appendText(b, "message")
	b = appendText(b, msg)
	b = appendText(b, "Message")
	return appendText(b, msg)
}

// appendText appends s as a definite-length CBOR text string.
func appendText(b []byte, s string) []byte {
	b = appendHead(b, majorText, uint64(len(s)))
	return append(b, s...)
}

// appendHead appends the initial byte and argument of a data item.
func appendHead(b []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(b, m|byte(n))
	case n <= 0xff:
		return append(b, m|24, byte(n))
	case n <= 0xffff:
		return append(b, m|25, byte(n>>8), byte(n))
	case n <= 0xffffffff:
		return append(b, m|26, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return append(b, m|27, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
		byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}
