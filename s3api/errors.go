package s3api

import (
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"

	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/wire/sigv4"
)

// Error is an S3 error: its code and message go into the XML error document.
type Error struct {
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf returns an *Error with a formatted message.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// errorStatus is the HTTP status of each S3 error code this endpoint sends (Amazon S3 API
// Reference, "Error responses", list of error codes). TestErrorTable checks that every code used
// is here.
var errorStatus = map[string]int{
	"AccessDenied":                      http.StatusForbidden,
	"AuthorizationHeaderMalformed":      http.StatusBadRequest,
	"AuthorizationQueryParametersError": http.StatusBadRequest,
	"BadDigest":                         http.StatusBadRequest,
	"EntityTooSmall":                    http.StatusBadRequest,
	"ExpiredToken":                      http.StatusBadRequest,
	"IncompleteBody":                    http.StatusBadRequest,
	"InternalError":                     http.StatusInternalServerError,
	"InvalidAccessKeyId":                http.StatusForbidden,
	"InvalidArgument":                   http.StatusBadRequest,
	"InvalidDigest":                     http.StatusBadRequest,
	"InvalidPart":                       http.StatusBadRequest,
	"InvalidPartOrder":                  http.StatusBadRequest,
	"InvalidRequest":                    http.StatusBadRequest,
	"InvalidToken":                      http.StatusBadRequest,
	"MalformedXML":                      http.StatusBadRequest,
	"MissingContentLength":              http.StatusLengthRequired,
	"NoSuchBucket":                      http.StatusNotFound,
	"NoSuchKey":                         http.StatusNotFound,
	"NoSuchUpload":                      http.StatusNotFound,
	"NotImplemented":                    http.StatusNotImplemented,
	"RequestTimeTooSkewed":              http.StatusForbidden,
	"ServiceUnavailable":                http.StatusServiceUnavailable,
	"SignatureDoesNotMatch":             http.StatusForbidden,
	"XAmzContentSHA256Mismatch":         http.StatusBadRequest,
}

// errorDocument is S3's XML error body.
type errorDocument struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`
}

// asS3Error turns any error into the S3 error to send: S3 errors and signature errors keep
// their code, an unavailable store (uploads are kept in it) is ServiceUnavailable, which S3
// clients retry with backoff, and anything else is an InternalError with a generic message.
func asS3Error(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var se *sigv4.S3Error
	if errors.As(err, &se) {
		return &Error{Code: se.Code, Message: se.Message}
	}
	if errors.Is(err, store.ErrUnavailable) {
		return &Error{Code: "ServiceUnavailable", Message: "The store is unavailable. Please try again."}
	}
	return &Error{Code: "InternalError", Message: "We encountered an internal error. Please try again."}
}

// fail sends err as S3's XML error document (headers only for HEAD).
func (q *request) fail(err error) {
	e := asS3Error(err)
	status, ok := errorStatus[e.Code]
	if !ok {
		status = http.StatusBadRequest
	}
	if q.body != nil {
		// Tell the client not to keep sending a body nobody will read.
		q.w.Header().Set("Connection", "close")
	}
	if q.r.Method == http.MethodHead {
		q.w.WriteHeader(status)
		return
	}
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.WriteHeader(status)
	doc := errorDocument{Code: e.Code, Message: e.Message, Resource: q.r.URL.Path, RequestID: q.id}
	q.w.Write([]byte(xml.Header))
	xml.NewEncoder(q.w).Encode(doc)
}

// reply sends v as an XML document with status 200.
func (q *request) reply(v any) {
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.WriteHeader(http.StatusOK)
	q.w.Write([]byte(xml.Header))
	xml.NewEncoder(q.w).Encode(v)
}

// KnownError reports whether code is in the endpoint's table of S3 error codes.
func KnownError(code string) bool {
	_, ok := errorStatus[code]
	return ok
}
