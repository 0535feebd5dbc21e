package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
)

// maxInputBytes limits the body of one console operation call.
const maxInputBytes = 64 << 10

// buttons are the write operations the console's buttons call: ending a game session and
// setting a fleet's capacity. Event streams never run them.
var buttons = []string{"TerminateGameSession", "UpdateFleetCapacity"}

// readable reports whether the console may read op: a GameLift read operation (readOnly) or
// one of Config.Extensions.
func (c *Console) readable(op string) bool {
	return readOnly(op) || slices.Contains(c.cfg.Extensions, op)
}

// callable reports whether POST /console/api may call op: what it may read, and the
// operations of its buttons.
func (c *Console) callable(op string) bool {
	return c.readable(op) || slices.Contains(buttons, op)
}

// readOnly reports whether op is a GameLift operation that only reads (Describe*, List*,
// Search*, and GetGameSessionLogUrl). Operations that hand out credentials
// (GetComputeAccess, GetInstanceAccess, GetComputeAuthToken) and every write are not.
func readOnly(op string) bool {
	for _, p := range []string{"Describe", "List", "Search"} {
		if strings.HasPrefix(op, p) && len(op) > len(p) {
			return true
		}
	}
	return op == "GetGameSessionLogUrl"
}

// answer is the raw answer of one operation call.
type answer struct {
	Status int
	Body   []byte
}

// call runs a GameLift operation through the API handler with an awsJson1_1 body.
func (c *Console) call(ctx context.Context, op string, input []byte) answer {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/", bytes.NewReader(input))
	if err != nil {
		return answer{http.StatusBadRequest, jsonError("InvalidRequestException", err.Error())}
	}
	target := "GameLift." + op
	if strings.Contains(op, ".") {
		target = op // an extension, e.g. Hoist.ListServerProcesses
	}
	req.Header.Set("X-Amz-Target", target)
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	c.cfg.API.ServeHTTP(rec, req)
	if rec.status >= 500 {
		c.cfg.Logger.Warn("console: operation failed", "operation", op, "status", rec.status, "answer", rec.body.String())
	}
	return answer{rec.status, rec.body.Bytes()}
}

// serveAPI answers POST /console/api/<op> with the operation's own answer.
func (c *Console) serveAPI(w http.ResponseWriter, r *http.Request, op string) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		writeJSONError(w, http.StatusMethodNotAllowed, "InvalidRequestException", "call console operations with POST")
		return
	}
	if !c.authorize(w, r) {
		return
	}
	if !c.callable(op) {
		writeJSONError(w, http.StatusForbidden, "AccessDeniedException", "the console does not call "+op)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxInputBytes+1))
	if err != nil || len(body) > maxInputBytes {
		writeJSONError(w, http.StatusBadRequest, "InvalidRequestException", "the input is unreadable or larger than 64 KiB")
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	a := c.call(r.Context(), op, body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(a.Status)
	w.Write(a.Body)
}

// jsonError is GameLift's JSON error body.
func jsonError(code, msg string) []byte {
	b, _ := json.Marshal(map[string]string{"__type": code, "message": msg})
	return b
}

// recorder keeps the answer of an in-process API call.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	wrote  bool
}

// Header returns the answer's headers.
func (r *recorder) Header() http.Header { return r.header }

// WriteHeader keeps the first status.
func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

// Write keeps the body.
func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	return r.body.Write(b)
}
