package sdkws

import (
	"context"
	"net/http"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// ServeHTTP is the SDK endpoint. It upgrades on any path, with or without a trailing slash
// (§1.3, §9.1), after reading the parameters and checking the credentials of §1.2-§1.3:
// a request that is not an upgrade gets 426, a missing pID 400, bad credentials 403 (§1.5),
// a pID that is live for another fleet or compute 409.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isUpgrade(r) {
		refuse(w, Errorf(http.StatusUpgradeRequired, "this is the GameLift Server SDK websocket endpoint"))
		return
	}
	req, e := h.connectRequest(r)
	if e != nil {
		refuse(w, e)
		return
	}
	if err := h.cfg.Backend.AuthenticateProcess(r.Context(), req); err != nil {
		refuse(w, h.authStatus(err))
		return
	}
	s := &socket{hub: h, proc: req.ProcessRef}
	var up func()
	if f := h.cfg.OnProcessConnected; f != nil {
		up = func() { f(req.ProcessRef) }
	}
	if run(h, &h.processes, req.ProcessID, s, w, r, h.sdkRoute, up) {
		if err := h.cfg.Backend.Disconnected(context.WithoutCancel(r.Context()), req.ProcessRef); err != nil {
			h.log.Error("sdkws: reporting a disconnect failed", "process", req.ProcessID, "err", err)
		}
	}
}

// connectRequest reads the upgrade URL's parameters (§1.3) and, in SigV4 mode, verifies the
// SDK's signature (§1.2).
func (h *Hub) connectRequest(r *http.Request) (ConnectRequest, *Error) {
	q := parseQuery(r.URL.RawQuery)
	req := ConnectRequest{
		ProcessRef: ProcessRef{
			FleetID:     q.get("FleetId"),
			ComputeName: q.get("ComputeId"),
			ProcessID:   q.get("pID"),
		},
		SdkVersion:       q.get("sdkVersion"),
		SdkLanguage:      q.get("sdkLanguage"),
		IdempotencyToken: q.get("IdempotencyToken"),
	}
	if req.ProcessID == "" {
		return req, Errorf(http.StatusBadRequest, "the pID query parameter is required")
	}
	if old := h.processes.owner(req.ProcessID); old != nil {
		if old.proc.FleetID != req.FleetID || old.proc.ComputeName != req.ComputeName {
			return req, Errorf(http.StatusConflict, "process %s is connected for another fleet or compute", req.ProcessID)
		}
		req.Reconnect = true
	}
	auth := q.get("Authorization")
	if auth != "SigV4" {
		if auth == "" {
			return req, Errorf(http.StatusForbidden, "no Authorization query parameter")
		}
		req.AuthToken = auth
		return req, nil
	}
	sig, e := verifySigV4(q, h.cfg.SigV4Keys, h.cfg.Clock.Now(), h.cfg.MaxSkew)
	if e != nil {
		return req, e
	}
	req.AccessKeyID, req.Region = sig.accessKeyID, sig.region
	return req, nil
}

// sdkRoute returns the handler of an SDK action (§3), or nil for an unknown one.
func (h *Hub) sdkRoute(action string) handler {
	if f := sdkHandlers[action]; f != nil {
		return f
	}
	if f := gameSessionHandlers[action]; f != nil {
		if h.cfg.GameSessions == nil {
			return notImplemented
		}
		return f
	}
	return nil
}

func notImplemented(_ context.Context, _ *socket, frame []byte) (any, error) {
	env, _ := message.Decode(frame)
	return nil, Errorf(http.StatusNotImplemented, "%s is not supported by this Hoist server", env.Action)
}

// sdkHandlers serve the process-lifecycle actions of §3 through Backend.
var sdkHandlers = map[string]handler{
	message.ActionActivateServerProcess: decode(func(ctx context.Context, s *socket, req message.ActivateServerProcess) (any, error) {
		return ack{}, s.hub.cfg.Backend.ActivateServerProcess(ctx, s.proc, req)
	}),
	message.ActionHeartbeatServerProcess: decode(func(ctx context.Context, s *socket, req message.HeartbeatServerProcess) (any, error) {
		return ack{}, s.hub.cfg.Backend.Heartbeat(ctx, s.proc, req.HealthStatus)
	}),
	message.ActionTerminateServerProcess: decode(func(ctx context.Context, s *socket, _ message.TerminateServerProcess) (any, error) {
		if err := s.hub.cfg.Backend.ProcessEnding(ctx, s.proc); err != nil {
			return nil, err
		}
		s.hub.processes.end(s.proc.ProcessID)
		return ack{}, nil
	}),
	message.ActionGetComputeCertificate: decode(func(ctx context.Context, s *socket, _ message.GetComputeCertificate) (message.GetComputeCertificateResult, error) {
		return s.hub.cfg.Backend.GetComputeCertificate(ctx, s.proc)
	}),
	message.ActionGetFleetRoleCredentials: decode(func(ctx context.Context, s *socket, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
		return s.hub.cfg.Backend.GetFleetRoleCredentials(ctx, s.proc, req)
	}),
}

// gameSessionHandlers serve the game- and player-session actions of §3 through
// GameSessionBackend.
var gameSessionHandlers = map[string]handler{
	message.ActionActivateGameSession: decode(func(ctx context.Context, s *socket, req message.ActivateGameSession) (any, error) {
		return ack{}, s.hub.cfg.GameSessions.ActivateGameSession(ctx, s.proc, req)
	}),
	message.ActionAcceptPlayerSession: decode(func(ctx context.Context, s *socket, req message.AcceptPlayerSession) (any, error) {
		return ack{}, s.hub.cfg.GameSessions.AcceptPlayerSession(ctx, s.proc, req)
	}),
	message.ActionRemovePlayerSession: decode(func(ctx context.Context, s *socket, req message.RemovePlayerSession) (any, error) {
		return ack{}, s.hub.cfg.GameSessions.RemovePlayerSession(ctx, s.proc, req)
	}),
	message.ActionUpdatePlayerSessionCreationPolicy: decode(func(ctx context.Context, s *socket, req message.UpdatePlayerSessionCreationPolicy) (any, error) {
		return ack{}, s.hub.cfg.GameSessions.UpdatePlayerSessionCreationPolicy(ctx, s.proc, req)
	}),
	message.ActionDescribePlayerSessions: decode(func(ctx context.Context, s *socket, req message.DescribePlayerSessions) (message.DescribePlayerSessionsResult, error) {
		return s.hub.cfg.GameSessions.DescribePlayerSessions(ctx, s.proc, req)
	}),
	message.ActionStartMatchBackfill: decode(func(ctx context.Context, s *socket, req message.StartMatchBackfill) (message.StartMatchBackfillResult, error) {
		return s.hub.cfg.GameSessions.StartMatchBackfill(ctx, s.proc, req)
	}),
	message.ActionStopMatchBackfill: decode(func(ctx context.Context, s *socket, req message.StopMatchBackfill) (any, error) {
		return ack{}, s.hub.cfg.GameSessions.StopMatchBackfill(ctx, s.proc, req)
	}),
}
