package api

import "fmt"

// ErrorCode names an error as clients see it: the `__type` of an error response. The modeled
// GameLift exceptions are generated (zz_errors.go); the others below are the generic AWS
// front-end errors and Hoist's own NotImplementedException.
type ErrorCode string

// Errors that are not in the GameLift model but that AWS clients know from every JSON-protocol
// service, plus the one Hoist adds.
const (
	// SerializationException: the body could not be decoded into the operation's input.
	SerializationException ErrorCode = "SerializationException"
	// UnknownOperationException: the request names no GameLift operation.
	UnknownOperationException ErrorCode = "UnknownOperationException"
	// UnrecognizedClientException: the access key ID is not known.
	UnrecognizedClientException ErrorCode = "UnrecognizedClientException"
	// InvalidSignatureException: the signature does not match, or the request date is stale.
	InvalidSignatureException ErrorCode = "InvalidSignatureException"
	// IncompleteSignatureException: the Authorization header is malformed.
	IncompleteSignatureException ErrorCode = "IncompleteSignatureException"
	// MissingAuthenticationTokenException: the request is not signed at all.
	MissingAuthenticationTokenException ErrorCode = "MissingAuthenticationTokenException"
	// NotImplementedException: Hoist knows the operation but does not implement it yet. The
	// message names the operation. It is a client error (HTTP 400) so clients do not retry it.
	NotImplementedException ErrorCode = "NotImplementedException"
	// ServiceUnavailableException: Hoist cannot reach what it depends on (its store) right now.
	// HTTP 503, which every AWS SDK and the CLI retry with backoff.
	ServiceUnavailableException ErrorCode = "ServiceUnavailableException"
)

// errorInfo is one row of the error table.
type errorInfo struct {
	status int  // HTTP status code
	fault  bool // true for server faults
}

// unmodeledErrors complete the generated modeledErrors; TestErrorTable checks both together.
var unmodeledErrors = map[ErrorCode]errorInfo{
	SerializationException:              {400, false},
	UnknownOperationException:           {400, false},
	UnrecognizedClientException:         {400, false},
	InvalidSignatureException:           {400, false},
	IncompleteSignatureException:        {400, false},
	MissingAuthenticationTokenException: {400, false},
	NotImplementedException:             {400, false},
	ServiceUnavailableException:         {503, true},
}

func (c ErrorCode) info() errorInfo {
	if i, ok := modeledErrors[c]; ok {
		return i
	}
	if i, ok := unmodeledErrors[c]; ok {
		return i
	}
	return errorInfo{500, true}
}

// Status is the HTTP status code an error of this code is sent with.
func (c ErrorCode) Status() int { return c.info().status }

// Fault reports whether the code is a server fault rather than a client error.
func (c ErrorCode) Fault() bool { return c.info().fault }

// Known reports whether c is in the error table.
func (c ErrorCode) Known() bool {
	_, m := modeledErrors[c]
	_, u := unmodeledErrors[c]
	return m || u
}

// Error is an error a client receives: its code and message go on the wire as they are.
// Handlers return *Error for every outcome the API models; any other error becomes an
// InternalServiceException with a generic message (and is logged in full).
type Error struct {
	Code    ErrorCode
	Message string
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code ErrorCode, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// NotImplemented is the uniform answer of an operation Hoist does not implement yet.
func NotImplemented(op string) *Error {
	return Errorf(NotImplementedException, "Hoist does not implement GameLift.%s yet", op)
}
