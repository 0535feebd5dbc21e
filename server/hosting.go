package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// hostingBackend adapts the domain (package gamelift) to the websocket endpoints (package
// sdkws): it implements sdkws.Backend and sdkws.AgentBackend by calling the Service. It holds
// no rules of its own; the pushes that follow state changes reach the sockets through the
// outbox (delivery.go).
type hostingBackend struct {
	svc *gamelift.Service
	hub *sdkws.Hub
	// parts are the partitioned computes whose sockets are refused (fault_partition.go).
	parts *partitions
}

var (
	_ sdkws.Backend            = (*hostingBackend)(nil)
	_ sdkws.GameSessionBackend = (*hostingBackend)(nil)
	_ sdkws.AgentBackend       = (*hostingBackend)(nil)
)

func domainRef(r sdkws.ProcessRef) gamelift.ProcessRef {
	return gamelift.ProcessRef{FleetID: r.FleetID, ComputeName: r.ComputeName, ProcessID: r.ProcessID}
}

// wsError turns a domain error into the StatusCode an SDK reads (server-sdk-protocol.md §2.2).
func wsError(err error) error {
	var e *api.Error
	if storeUnavailable(err) {
		return &sdkws.Error{Status: http.StatusServiceUnavailable, Message: "Hoist cannot reach its store right now; retry later."}
	}
	if !errors.As(err, &e) {
		return err
	}
	status := http.StatusBadRequest
	switch e.Code {
	case api.UnauthorizedException:
		status = http.StatusForbidden
	case api.NotFoundException:
		status = http.StatusNotFound
	case api.ConflictException:
		status = http.StatusConflict
	case api.LimitExceededException:
		status = http.StatusTooManyRequests
	case api.InternalServiceException:
		status = http.StatusInternalServerError
	}
	return &sdkws.Error{Status: status, Message: e.Message}
}

// AuthenticateProcess admits a process by its compute auth token, or, when the Hub verified the
// SDK's SigV4 signature, by the compute being registered.
func (b *hostingBackend) AuthenticateProcess(ctx context.Context, req sdkws.ConnectRequest) error {
	if err := b.parts.refuse(sdkws.ComputeRef{FleetID: req.FleetID, ComputeName: req.ComputeName}); err != nil {
		return err
	}
	if req.AccessKeyID != "" {
		return wsError(b.svc.AdmitSignedProcess(ctx, domainRef(req.ProcessRef)))
	}
	return wsError(b.svc.AdmitProcess(ctx, domainRef(req.ProcessRef), req.AuthToken))
}

// ActivateServerProcess records ProcessReady (the domain tells the compute's agent, if it has
// one, through the outbox).
func (b *hostingBackend) ActivateServerProcess(ctx context.Context, ref sdkws.ProcessRef, req message.ActivateServerProcess) error {
	err := b.svc.ActivateServerProcess(ctx, domainRef(ref), gamelift.ProcessActivation{
		Port: req.Port, LogPaths: req.LogPaths, SdkVersion: req.SdkVersion, SdkLanguage: req.SdkLanguage})
	if err != nil {
		return wsError(err)
	}
	_ = b.svc.ManagedProcessReady(ctx, ref.FleetID) // a managed fleet's first ready process activates it
	return nil
}

// Heartbeat records a health report.
func (b *hostingBackend) Heartbeat(ctx context.Context, ref sdkws.ProcessRef, healthy bool) error {
	return wsError(b.svc.HeartbeatServerProcess(ctx, domainRef(ref), healthy))
}

// ProcessEnding records ProcessEnding.
func (b *hostingBackend) ProcessEnding(ctx context.Context, ref sdkws.ProcessRef) error {
	return wsError(b.svc.ServerProcessEnding(ctx, domainRef(ref)))
}

// Disconnected records that a process's last socket closed.
func (b *hostingBackend) Disconnected(ctx context.Context, ref sdkws.ProcessRef) error {
	return b.svc.ServerProcessDisconnected(ctx, domainRef(ref))
}

// GetComputeCertificate answers the path of the compute's TLS certificate (written by the host
// for a fleet whose CertificateConfiguration is GENERATED, or registered with the compute) and
// the compute name.
func (b *hostingBackend) GetComputeCertificate(ctx context.Context, ref sdkws.ProcessRef) (message.GetComputeCertificateResult, error) {
	path, name, err := b.svc.ComputeCertificate(ctx, domainRef(ref))
	if err != nil {
		return message.GetComputeCertificateResult{}, wsError(err)
	}
	return message.GetComputeCertificateResult{CertificatePath: path, ComputeName: name}, nil
}

// GetFleetRoleCredentials answers as GameLift does for a compute without a fleet role: an empty
// AccessKeyId (server-sdk-protocol.md §3).
func (b *hostingBackend) GetFleetRoleCredentials(context.Context, sdkws.ProcessRef, message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
	return message.FleetRoleCredentials{}, nil
}

// AuthenticateAgent admits an agent by its compute auth token.
func (b *hostingBackend) AuthenticateAgent(ctx context.Context, ref sdkws.ComputeRef, authToken string) error {
	if err := b.parts.refuse(ref); err != nil {
		return err
	}
	return wsError(b.svc.AdmitAgent(ctx, ref.FleetID, ref.ComputeName, authToken))
}

// AgentHeartbeat answers an agent's heartbeat: processes the control plane has ended are
// listed as unhealthy (the agent stops them), processes that never connected as unregistered.
func (b *hostingBackend) AgentHeartbeat(ctx context.Context, ref sdkws.ComputeRef, req message.SendHeartbeat) (message.SendHeartbeatResult, error) {
	ended, unknown, err := b.svc.AgentProcessReport(ctx, ref.FleetID, ref.ComputeName, req.ProcessList)
	if err != nil {
		return message.SendHeartbeatResult{}, wsError(err)
	}
	return message.SendHeartbeatResult{Status: "Active", UnhealthyProcesses: ended, UnregisteredProcesses: unknown}, nil
}

// AgentRuntimeConfiguration answers the fleet's runtime configuration.
func (b *hostingBackend) AgentRuntimeConfiguration(ctx context.Context, ref sdkws.ComputeRef) (message.RuntimeConfiguration, error) {
	rc, err := b.svc.RuntimeConfigurationFor(ctx, ref.FleetID)
	if err != nil {
		return message.RuntimeConfiguration{}, wsError(err)
	}
	return agentRuntimeConfiguration(rc), nil
}

// agentRuntimeConfiguration converts a runtime configuration to its agent-protocol form.
func agentRuntimeConfiguration(rc *api.RuntimeConfiguration) message.RuntimeConfiguration {
	out := message.RuntimeConfiguration{
		GameSessionActivationTimeoutSeconds: int(api.Deref(rc.GameSessionActivationTimeoutSeconds)),
		MaxConcurrentGameSessionActivations: int(api.Deref(rc.MaxConcurrentGameSessionActivations)),
		ServerProcesses:                     make([]message.ServerProcess, 0, len(rc.ServerProcesses)),
	}
	for _, p := range rc.ServerProcesses {
		out.ServerProcesses = append(out.ServerProcesses, message.ServerProcess{LaunchPath: api.Deref(p.LaunchPath),
			Parameters: api.Deref(p.Parameters), ConcurrentExecutions: int(api.Deref(p.ConcurrentExecutions))})
	}
	return out
}

// runtimeConfigurationPush is a DescribeRuntimeConfiguration frame sent unasked, which the
// agent applies at once instead of waiting for its next periodic read.
type runtimeConfigurationPush struct{ message.RuntimeConfiguration }

func (runtimeConfigurationPush) Action() string { return message.ActionDescribeRuntimeConfiguration }

// AgentProcessTerminated records an agent's report that a process exited.
func (b *hostingBackend) AgentProcessTerminated(ctx context.Context, ref sdkws.ComputeRef, req message.NotifyServerProcessTermination) error {
	return wsError(b.svc.AgentProcessExited(ctx, ref.FleetID, ref.ComputeName, req.ProcessID, req.EventCode))
}

// AgentFleetRoleCredentials answers as for the SDK: no fleet role.
func (b *hostingBackend) AgentFleetRoleCredentials(context.Context, sdkws.ComputeRef, message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
	return message.FleetRoleCredentials{}, nil
}

// AgentDisconnected needs no bookkeeping: processes report their own sockets.
func (b *hostingBackend) AgentDisconnected(context.Context, sdkws.ComputeRef) error { return nil }

// The game- and player-session half of hostingBackend: sdkws.GameSessionBackend
// by calling the domain.

// ActivateGameSession records the process's ActivateGameSession (the domain tells the
// compute's agent which game session the process hosts, for its logs).
func (b *hostingBackend) ActivateGameSession(ctx context.Context, ref sdkws.ProcessRef, req message.ActivateGameSession) error {
	return wsError(b.svc.ActivateGameSession(ctx, domainRef(ref), req.GameSessionID))
}

// AcceptPlayerSession records the process's AcceptPlayerSession.
func (b *hostingBackend) AcceptPlayerSession(ctx context.Context, ref sdkws.ProcessRef, req message.AcceptPlayerSession) error {
	return wsError(b.svc.AcceptPlayerSession(ctx, domainRef(ref), req.GameSessionID, req.PlayerSessionID))
}

// RemovePlayerSession records the process's RemovePlayerSession.
func (b *hostingBackend) RemovePlayerSession(ctx context.Context, ref sdkws.ProcessRef, req message.RemovePlayerSession) error {
	return wsError(b.svc.RemovePlayerSession(ctx, domainRef(ref), req.GameSessionID, req.PlayerSessionID))
}

// UpdatePlayerSessionCreationPolicy records the process's policy change.
func (b *hostingBackend) UpdatePlayerSessionCreationPolicy(ctx context.Context, ref sdkws.ProcessRef, req message.UpdatePlayerSessionCreationPolicy) error {
	return wsError(b.svc.UpdatePlayerSessionCreationPolicy(ctx, domainRef(ref), req.GameSessionID, req.PlayerSessionPolicy))
}

// DescribePlayerSessions answers the SDK's DescribePlayerSessions with the control plane's.
func (b *hostingBackend) DescribePlayerSessions(ctx context.Context, _ sdkws.ProcessRef, req message.DescribePlayerSessions) (message.DescribePlayerSessionsResult, error) {
	in := &api.DescribePlayerSessionsInput{GameSessionId: opt(req.GameSessionID), PlayerId: opt(req.PlayerID),
		PlayerSessionId: opt(req.PlayerSessionID), PlayerSessionStatusFilter: opt(req.PlayerSessionStatusFilter),
		NextToken: opt(req.NextToken)}
	if req.Limit > 0 {
		in.Limit = api.Int32(int32(req.Limit))
	}
	out, err := b.svc.DescribePlayerSessions(ctx, in)
	if err != nil {
		return message.DescribePlayerSessionsResult{}, wsError(err)
	}
	res := message.DescribePlayerSessionsResult{PlayerSessions: make([]message.PlayerSession, len(out.PlayerSessions)),
		NextToken: api.Deref(out.NextToken)}
	for i, ps := range out.PlayerSessions {
		res.PlayerSessions[i] = message.PlayerSession{PlayerSessionID: api.Deref(ps.PlayerSessionId), PlayerID: api.Deref(ps.PlayerId),
			GameSessionID: api.Deref(ps.GameSessionId), FleetID: api.Deref(ps.FleetId), IPAddress: api.Deref(ps.IpAddress),
			DNSName: api.Deref(ps.DnsName), PlayerData: api.Deref(ps.PlayerData), Port: int(api.Deref(ps.Port)),
			CreationTime: millis(ps.CreationTime), TerminationTime: millis(ps.TerminationTime), Status: string(api.Deref(ps.Status))}
	}
	return res, nil
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func millis(t *api.Timestamp) int64 {
	if t == nil {
		return 0
	}
	return t.UnixMilli()
}

// StartMatchBackfill files a backfill ticket for the process's game session.
func (b *hostingBackend) StartMatchBackfill(ctx context.Context, ref sdkws.ProcessRef, req message.StartMatchBackfill) (message.StartMatchBackfillResult, error) {
	in := &api.StartMatchBackfillInput{ConfigurationName: api.String(req.MatchmakingConfigurationArn),
		GameSessionArn: api.String(req.GameSessionArn)}
	if req.TicketID != "" {
		in.TicketId = api.String(req.TicketID)
	}
	for _, p := range req.Players {
		in.Players = append(in.Players, backfillPlayer(p))
	}
	t, err := b.svc.ProcessStartBackfill(ctx, domainRef(ref), in)
	if err != nil {
		return message.StartMatchBackfillResult{}, wsError(err)
	}
	return message.StartMatchBackfillResult{TicketID: api.Deref(t.TicketId)}, nil
}

// backfillPlayer converts a Server SDK backfill player.
func backfillPlayer(p message.Player) api.Player {
	out := api.Player{PlayerId: api.String(p.PlayerID), PlayerAttributes: map[string]api.AttributeValue{}}
	if p.Team != "" {
		out.Team = api.String(p.Team)
	}
	for name, v := range p.PlayerAttributes {
		out.PlayerAttributes[name] = api.AttributeValue{S: v.S, N: v.N, SL: v.SL, SDM: v.SDM}
	}
	if len(p.LatencyInMs) > 0 {
		out.LatencyInMs = map[string]int32{}
		for r, ms := range p.LatencyInMs {
			out.LatencyInMs[r] = int32(ms)
		}
	}
	return out
}

// StopMatchBackfill cancels the backfill ticket of the process's game session.
func (b *hostingBackend) StopMatchBackfill(ctx context.Context, ref sdkws.ProcessRef, req message.StopMatchBackfill) error {
	return wsError(b.svc.ProcessStopBackfill(ctx, domainRef(ref), req.GameSessionArn, req.TicketID))
}
