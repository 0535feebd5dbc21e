package sdkws

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// socket is one open websocket of either endpoint.
type socket struct {
	hub  *Hub
	ws   *websocket.Conn
	proc ProcessRef // SDK sockets
	comp ComputeRef // agent sockets
}

// handler answers one request frame: the reply payload (nil or an object) or an error.
type handler func(ctx context.Context, s *socket, frame []byte) (any, error)

// serve reads frames until the socket closes, handling each request in its own goroutine (at
// most MaxInFlight at a time), as the SDKs themselves do (§2.2). It returns when the socket is
// closed and every handler has finished.
func (s *socket) serve(ctx context.Context, route func(action string) handler) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, s.hub.cfg.MaxInFlight)
	for {
		typ, frame, err := s.ws.Read(ctx)
		if err != nil {
			break
		}
		if typ != websocket.MessageText {
			continue // the SDKs ignore non-text frames too (§1.4)
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			s.handle(ctx, frame, route)
		}()
	}
	cancel()
	for range cap(sem) {
		sem <- struct{}{}
	}
}

// handle decodes one frame, runs its handler and writes the reply. Malformed frames get an
// error reply; frames that carry a StatusCode are replies, which the service never asks for,
// and are ignored.
func (s *socket) handle(ctx context.Context, frame []byte, route func(string) handler) {
	env, err := message.Decode(frame)
	var payload any
	switch {
	case err != nil:
		err = Errorf(http.StatusBadRequest, "malformed frame: %v", err)
	case env.StatusCode != 0:
		return
	case env.Action == "":
		err = Errorf(http.StatusBadRequest, "frame has no Action")
	default:
		if h := route(env.Action); h != nil {
			payload, err = h(ctx, s, frame)
		} else {
			err = Errorf(http.StatusBadRequest, "unknown Action %q", env.Action)
		}
	}
	s.reply(ctx, env, payload, err)
}

// reply writes the answer to a request: same Action and RequestId, StatusCode 200 and the
// payload's fields, or the error's StatusCode and ErrorMessage (§2.2).
func (s *socket) reply(ctx context.Context, req message.Envelope, payload any, err error) {
	env := message.Envelope{Action: req.Action, RequestID: req.RequestID, StatusCode: message.StatusOK}
	if err != nil {
		env.StatusCode, env.ErrorMessage = s.hub.wireError(req.Action, err)
		payload = nil
	}
	frame, encErr := message.Encode(env, payload)
	if encErr != nil {
		s.hub.log.Error("sdkws: encoding a reply failed", "action", req.Action, "err", encErr)
		env.StatusCode, env.ErrorMessage = http.StatusInternalServerError, "Internal service error."
		frame, _ = message.Encode(env, nil)
	}
	if err := s.write(ctx, frame); err != nil && ctx.Err() == nil {
		s.hub.log.Debug("sdkws: writing a reply failed", "action", req.Action, "err", err)
	}
}

// wireError maps a Backend error to a StatusCode and ErrorMessage: an *Error keeps its own;
// anything else is logged and becomes a generic 500.
func (h *Hub) wireError(action string, err error) (int, string) {
	var e *Error
	if errors.As(err, &e) {
		return e.Status, e.Message
	}
	h.log.Error("sdkws: backend failed", "action", action, "err", err)
	return http.StatusInternalServerError, "Internal service error."
}

// write sends one text frame, giving up after WriteTimeout on the Hub's clock.
func (s *socket) write(ctx context.Context, frame []byte) error {
	ctx, cancel := clock.WithTimeout(ctx, s.hub.cfg.Clock, s.hub.cfg.WriteTimeout)
	defer cancel()
	return s.ws.Write(ctx, websocket.MessageText, frame)
}

// decode returns a handler that unmarshals the frame into T (field names as in §3, matched
// case-insensitively, unknown keys ignored) and calls f.
func decode[T any, R any](f func(ctx context.Context, s *socket, req T) (R, error)) handler {
	return func(ctx context.Context, s *socket, frame []byte) (any, error) {
		var req T
		if err := json.Unmarshal(frame, &req); err != nil {
			return nil, Errorf(http.StatusBadRequest, "malformed request: %v", err)
		}
		r, err := f(ctx, s, req)
		if err != nil {
			return nil, err
		}
		return r, nil
	}
}

// ack is the payload of a bare acknowledgement.
type ack struct{}
