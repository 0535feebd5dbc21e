// Package awsjson is the awsJson1_1 wire codec: it decodes request bodies into the generated
// api input types and encodes outputs and errors the way AWS CLI, boto3 and the older AWS SDKs
// expect (shared/reference/wire-protocol.md §2, §4.2, §5).
//
// The codec knows nothing about HTTP routing or about GameLift's domain; httpapi imports it.
package awsjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/hoist-gg/hoist/api"
)

// ContentType is the content type of awsJson1_1 requests and responses.
const ContentType = "application/x-amz-json-1.1"

// ContentType10 is the awsJson1_0 content type, which Hoist accepts on requests as well.
const ContentType10 = "application/x-amz-json-1.0"

// DecodeInput decodes body into in, a pointer to a generated input structure. An empty body is
// the empty input. The top level must be a JSON object; unknown members are ignored and null
// members stay absent. Any problem is a SerializationException that names it.
func DecodeInput(body []byte, in any) *api.Error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 {
		return nil
	}
	if trimmed[0] != '{' {
		return api.Errorf(api.SerializationException, "the request body must be a JSON object")
	}
	if err := json.Unmarshal(body, in); err != nil {
		return serializationError(err)
	}
	return nil
}

// serializationError turns an encoding/json error into a SerializationException.
func serializationError(err error) *api.Error {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return api.Errorf(api.SerializationException, "member '%s' cannot be decoded from a JSON %s", typeErr.Field, typeErr.Value)
	case errors.As(err, &typeErr):
		return api.Errorf(api.SerializationException, "a JSON %s cannot be decoded into %s", typeErr.Value, typeErr.Type)
	case errors.As(err, &syntaxErr):
		return api.Errorf(api.SerializationException, "malformed JSON at offset %d: %s", syntaxErr.Offset, syntaxErr.Error())
	}
	// Errors from UnmarshalJSON methods (timestamps) and truncated input land here.
	msg := strings.TrimPrefix(err.Error(), "json: ")
	return api.Errorf(api.SerializationException, "cannot decode the request body: %s", msg)
}

// EncodeOutput encodes out, a pointer to a generated output structure. A nil pointer (or nil)
// encodes as the empty object {}.
func EncodeOutput(out any) ([]byte, error) {
	if isNil(out) {
		return []byte("{}"), nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("awsjson: encode %T: %w", out, err)
	}
	return b, nil
}

// EncodeError encodes e as the body every JSON client understands:
// {"__type": code, "message": m, "Message": m}.
func EncodeError(e *api.Error) []byte {
	b := make([]byte, 0, 48+len(e.Code)+2*len(e.Message))
	b = append(b, `{"__type":`...)
	b = appendString(b, string(e.Code))
	b = append(b, `,"message":`...)
	msg := appendString(nil, e.Message)
	b = append(b, msg...)
	b = append(b, `,"Message":`...)
	b = append(b, msg...)
	return append(b, '}')
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return append(b, `""`...)
	}
	return append(b, q...)
}

// isNil reports whether v is nil or a nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	return rv.Kind() == reflect.Pointer && rv.IsNil()
}
