// Package httpapi is Hoist's GameLift API front: one http.Handler that accepts both wire
// protocols (awsJson1_1 and Smithy RPC v2 CBOR), authenticates, decodes into the generated
// input types, validates, calls the operation's handler and encodes the answer or the error.
//
// Routing (shared/reference/wire-protocol.md §1-§3):
//
//	POST <any prefix>/service/GameLift/operation/<Op>  with smithy-protocol: rpc-v2-cbor -> CBOR
//	POST <any path> with X-Amz-Target: GameLift.<Op>                                   -> JSON
//	GET  /healthz                                                                      -> "ok"
//
// Anything else gets a 400 in the JSON error form that says what Hoist expected. Only cmd/
// wires this package; it imports the api, the codecs and nothing of the domain.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// DefaultMaxBodyBytes is the request body limit when Config.MaxBodyBytes is 0. It leaves room
// for CreateScript's 5 MB ZipBlob, base64-encoded in JSON.
const DefaultMaxBodyBytes = 16 << 20

// Config configures the handler New returns.
type Config struct {
	// Handlers holds the operation handlers; nil or a nil field answers NotImplementedException.
	Handlers *api.Handlers
	// Authenticate checks a request and its full body before anything is decoded. A non-nil
	// *api.Error is sent as it is. Nil accepts every request.
	Authenticate func(r *http.Request, body []byte) *api.Error
	// Logger receives internal errors and panics in full. Nil discards.
	Logger *slog.Logger
	// MaxBodyBytes limits request bodies; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Extensions are Hoist operations outside GameLift's model, served over awsJson1_1 under
	// their own X-Amz-Target (see Extension).
	Extensions []Extension
	// Unavailable reports errors that mean a dependency (the store) cannot be reached: they
	// are answered ServiceUnavailableException (503), which clients retry, instead of
	// InternalServiceException. Nil: none.
	Unavailable func(error) bool
	// Observe, when set, is called after each request that named an operation of the table
	// (or an Extension) with the operation, the error code answered ("" for success) and the
	// time taken. It runs on the request's goroutine and must be cheap.
	Observe func(op, code string, d time.Duration)
}

// operation is one row of the operation table with its handler bound.
type operation struct {
	name        string
	newInput    func() any
	call        api.HandlerFunc
	implemented bool
}

// server is the http.Handler New returns.
type server struct {
	ops     map[string]*operation
	auth    func(r *http.Request, body []byte) *api.Error
	log     *slog.Logger
	maxBody int64
	ids     *idGenerator
	// extTargets holds the X-Amz-Target of every Extension.
	extTargets map[string]bool
	// unavailable is Config.Unavailable, never nil.
	unavailable func(error) bool
	// observe is Config.Observe.
	observe func(op, code string, d time.Duration)
}

// New returns the API handler. Every operation of api.Operations is bound to cfg.Handlers once,
// here; serving a request builds no maps and no closures.
func New(cfg Config) http.Handler {
	s := &server{
		ops:     make(map[string]*operation, len(api.Operations)),
		auth:    cfg.Authenticate,
		log:     cfg.Logger,
		maxBody: cfg.MaxBodyBytes,
		ids:     newIDGenerator(),

		extTargets:  map[string]bool{},
		unavailable: cfg.Unavailable,
		observe:     cfg.Observe,
	}
	if s.unavailable == nil {
		s.unavailable = func(error) bool { return false }
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.maxBody <= 0 {
		s.maxBody = DefaultMaxBodyBytes
	}
	for i := range api.Operations {
		op := &api.Operations[i]
		fn, ok := op.Bind(cfg.Handlers)
		s.ops[op.Name] = &operation{name: op.Name, newInput: op.NewInput, call: fn, implemented: ok}
	}
	s.addExtensions(cfg.Extensions)
	return s
}

type requestIDKey struct{}

// RequestID returns the ID of the API request ctx belongs to (the x-amzn-RequestId the client
// receives), or "" outside one.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// ServeHTTP answers one request; see the package documentation for the routes.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var start time.Time
	logging := s.log.Enabled(r.Context(), slog.LevelDebug)
	if s.observe != nil || logging {
		start = time.Now()
	}
	id := s.ids.next()
	w.Header()[headerRequestID] = []string{id}
	if r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header()[headerContentType] = textPlain
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("ok"))
		return
	}
	p, op, rerr := s.serve(w, r, id)
	if rerr != nil {
		s.writeError(w, p, rerr)
	}
	if s.observe != nil && op != "" {
		code := ""
		if rerr != nil {
			code = string(rerr.Code)
		}
		s.observe(op, code, time.Since(start))
	}
	if logging {
		s.logRequest(r, id, op, rerr, time.Since(start))
	}
}

// serve routes, authenticates and answers a request. It returns the protocol, the name of
// the operation called ("" when the request named none of the table's) and the error to
// answer, nil when an answer was written.
func (s *server) serve(w http.ResponseWriter, r *http.Request, id string) (*protocol, string, *api.Error) {
	p, name, rerr := route(r)
	if rerr != nil {
		if target := s.extensionTarget(r); target != "" {
			p, name, rerr = awsJSON, target, checkJSON(r)
		}
	}
	if rerr != nil {
		if r.Method != http.MethodPost {
			w.Header()["Allow"] = allowPost
		}
		return p, "", rerr
	}
	body, rerr := s.readBody(r)
	if rerr == nil && s.auth != nil {
		rerr = s.auth(r, body)
	}
	op := s.ops[name]
	switch {
	case rerr != nil && op != nil:
		return p, op.name, rerr
	case rerr != nil:
		return p, "", rerr
	case op == nil:
		return p, "", api.Errorf(api.UnknownOperationException, "GameLift has no operation named %q", name)
	case !op.implemented:
		// Said before decoding and validation, so that any input learns it first.
		return p, op.name, api.NotImplemented(op.name)
	}
	ctx := context.WithValue(r.Context(), requestIDKey{}, id)
	out, err := s.invoke(ctx, p, op, body)
	if err != nil {
		return p, op.name, s.clientError(ctx, op.name, err)
	}
	s.writeOutput(w, p, op.name, out, id)
	return p, op.name, nil
}

// invoke decodes and validates the input and calls the handler. A panic in the handler
// becomes an error.
func (s *server) invoke(ctx context.Context, p *protocol, op *operation, body []byte) (out any, err error) {
	in := op.newInput()
	if derr := p.decode(body, in); derr != nil {
		return nil, derr
	}
	if verr := api.Validate(in); verr != nil {
		return nil, verr
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			out, err = nil, &handlerPanic{value: v, stack: stack()}
		}
	}()
	return op.call(ctx, in)
}
