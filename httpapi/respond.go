package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// internalMessage is all a client learns about an unexpected failure; the log has the rest.
const internalMessage = "An internal error occurred. Hoist logged it under this request's ID."

// unavailableMessage is the message of every ServiceUnavailableException.
const unavailableMessage = "Hoist cannot reach its store right now; retry the request later."

// handlerPanic is the error a panicking handler turns into.
type handlerPanic struct {
	value any
	stack []byte
}

func (p *handlerPanic) Error() string { return fmt.Sprintf("handler panicked: %v", p.value) }

func stack() []byte { return debug.Stack() }

// readBody reads the whole request body, up to the configured limit.
func (s *server) readBody(r *http.Request) ([]byte, *api.Error) {
	n := r.ContentLength
	if n > s.maxBody {
		return nil, s.tooLarge()
	}
	if n == 0 || r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	if n > 0 {
		body := make([]byte, n)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, api.Errorf(api.SerializationException, "cannot read the request body: %v", err)
		}
		return body, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, s.maxBody+1))
	if err != nil {
		return nil, api.Errorf(api.SerializationException, "cannot read the request body: %v", err)
	}
	if int64(len(body)) > s.maxBody {
		return nil, s.tooLarge()
	}
	return body, nil
}

func (s *server) tooLarge() *api.Error {
	return api.Errorf(api.SerializationException, "the request body exceeds the limit of %d bytes", s.maxBody)
}

// clientError returns the error the client receives for err: an *api.Error as it is, an
// unreachable dependency as ServiceUnavailableException, anything else as an
// InternalServiceException with a generic message, logged in full.
func (s *server) clientError(ctx context.Context, op string, err error) *api.Error {
	var ae *api.Error
	if errors.As(err, &ae) {
		return ae
	}
	attrs := []slog.Attr{slog.String("request_id", RequestID(ctx)), slog.String("operation", op),
		slog.String("error", err.Error())}
	if s.unavailable(err) {
		s.log.LogAttrs(ctx, slog.LevelWarn, "store unavailable; answered ServiceUnavailableException", attrs...)
		return &api.Error{Code: api.ServiceUnavailableException, Message: unavailableMessage}
	}
	if p, ok := err.(*handlerPanic); ok {
		attrs = append(attrs, slog.String("stack", string(p.stack)))
	}
	s.log.LogAttrs(ctx, slog.LevelError, "internal error", attrs...)
	return &api.Error{Code: api.InternalServiceException, Message: internalMessage}
}

// writeOutput encodes a handler's output; an output that cannot be encoded is an internal error.
func (s *server) writeOutput(w http.ResponseWriter, p *protocol, op string, out any, id string) {
	body, err := p.encode(out)
	if err != nil {
		ctx := context.WithValue(context.Background(), requestIDKey{}, id)
		s.writeError(w, p, s.clientError(ctx, op, err))
		return
	}
	s.write(w, p, http.StatusOK, body)
}

// writeError sends e in p's error form, with X-Amzn-ErrorType and the status of e's code.
func (s *server) writeError(w http.ResponseWriter, p *protocol, e *api.Error) {
	w.Header()[headerErrorType] = []string{string(e.Code)}
	s.write(w, p, e.Code.Status(), p.encodeError(e))
}

// write sends a response with p's content type and protocol header.
func (s *server) write(w http.ResponseWriter, p *protocol, status int, body []byte) {
	h := w.Header()
	h[headerContentType] = p.contentType
	if p.smithy {
		h[headerSmithy] = smithyValue
	}
	h[headerContentLength] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// logRequest writes the request log line, at debug level (`--log-level debug`): the
// operation, the HTTP status and error code answered, the latency, the request ID and the
// access key ID the request was signed with.
func (s *server) logRequest(r *http.Request, id, op string, rerr *api.Error, d time.Duration) {
	status, code := http.StatusOK, ""
	if rerr != nil {
		status, code = rerr.Code.Status(), string(rerr.Code)
	}
	s.log.LogAttrs(r.Context(), slog.LevelDebug, "request", slog.String("operation", op), slog.Int("status", status),
		slog.String("error", code), slog.Duration("latency", d), slog.String("request_id", id),
		slog.String("caller", callerKey(r.Header.Get("Authorization"))))
}

// callerKey is the access key ID of a SigV4 Authorization header ("" when there is none).
func callerKey(auth string) string {
	_, cred, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	key, _, _ := strings.Cut(cred, "/")
	return key
}
