package sdkws

import (
	"context"
	"net/http"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// AgentHandler returns the agent endpoint (§7.3): an upgrade on any path with the query
// parameters FleetId, ComputeName and Authorization (the compute auth token). Without
// Config.Agent it answers 404.
func (h *Hub) AgentHandler() http.Handler { return http.HandlerFunc(h.serveAgent) }

func (h *Hub) serveAgent(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Agent == nil {
		http.NotFound(w, r)
		return
	}
	if !isUpgrade(r) {
		refuse(w, Errorf(http.StatusUpgradeRequired, "this is the GameLift Agent websocket endpoint"))
		return
	}
	q := parseQuery(r.URL.RawQuery)
	ref := ComputeRef{FleetID: q.get("FleetId"), ComputeName: q.get("ComputeName")}
	if ref.FleetID == "" || ref.ComputeName == "" {
		refuse(w, Errorf(http.StatusBadRequest, "the FleetId and ComputeName query parameters are required"))
		return
	}
	if err := h.cfg.Agent.AuthenticateAgent(r.Context(), ref, q.get("Authorization")); err != nil {
		refuse(w, h.authStatus(err))
		return
	}
	s := &socket{hub: h, comp: ref}
	var up func()
	if f := h.cfg.OnAgentConnected; f != nil {
		up = func() { f(ref) }
	}
	if run(h, &h.agents, ref, s, w, r, agentRoute, up) {
		if err := h.cfg.Agent.AgentDisconnected(context.WithoutCancel(r.Context()), ref); err != nil {
			h.log.Error("sdkws: reporting an agent disconnect failed", "compute", ref.ComputeName, "err", err)
		}
	}
}

func agentRoute(action string) handler { return agentHandlers[action] }

// agentHandlers serve the agent's requests of §7.3 through AgentBackend. Every reply carries a
// StatusCode: the agent's error mapper requires one.
var agentHandlers = map[string]handler{
	message.ActionSendHeartbeat: decode(func(ctx context.Context, s *socket, req message.SendHeartbeat) (message.SendHeartbeatResult, error) {
		return s.hub.cfg.Agent.AgentHeartbeat(ctx, s.comp, req)
	}),
	message.ActionDescribeRuntimeConfiguration: decode(func(ctx context.Context, s *socket, _ message.DescribeRuntimeConfiguration) (message.RuntimeConfiguration, error) {
		return s.hub.cfg.Agent.AgentRuntimeConfiguration(ctx, s.comp)
	}),
	message.ActionNotifyServerProcessTermination: decode(func(ctx context.Context, s *socket, req message.NotifyServerProcessTermination) (any, error) {
		return ack{}, s.hub.cfg.Agent.AgentProcessTerminated(ctx, s.comp, req)
	}),
	message.ActionGetFleetRoleCredentials: decode(func(ctx context.Context, s *socket, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
		return s.hub.cfg.Agent.AgentFleetRoleCredentials(ctx, s.comp, req)
	}),
	message.ActionHoistGameMetrics: func(_ context.Context, s *socket, frame []byte) (any, error) {
		if f := s.hub.cfg.OnAgentGameMetrics; f != nil {
			f(s.comp, frame)
		}
		return ack{}, nil
	},
}
