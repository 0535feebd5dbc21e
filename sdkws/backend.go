package sdkws

import (
	"context"
	"fmt"

	"github.com/hoist-gg/hoist/sdkws/message"
)

// ProcessRef names the game server process behind an SDK socket, as the SDK put it in the URL
// query (protocol §1.3): FleetId, ComputeId (= host ID = compute name) and pID.
type ProcessRef struct {
	FleetID     string
	ComputeName string
	ProcessID   string
}

// ConnectRequest is what an SDK socket presented before the upgrade (§1.2, §1.3).
type ConnectRequest struct {
	ProcessRef
	// AuthToken is the compute auth token (token mode); empty in SigV4 mode.
	AuthToken string
	// AccessKeyID is set in SigV4 mode, after the SDK's SigV4 variant verified against
	// Config.SigV4Keys; empty in token mode.
	AccessKeyID string
	// Region is the region of the SigV4 credential scope (not checked); empty in token mode.
	Region string
	// SdkVersion, SdkLanguage and IdempotencyToken are copied from the query.
	SdkVersion, SdkLanguage, IdempotencyToken string
	// Reconnect is true when this node already holds a live socket for the process (the SDK
	// opens the new socket before closing the old one, §1.6).
	Reconnect bool
}

// Backend is the control plane behind the SDK endpoint. The Hub calls it once per request
// frame, from the socket's goroutines; it must be safe for concurrent use. Every method may
// return an *Error to choose the StatusCode and ErrorMessage of the reply; any other non-nil
// error is logged and answered with 500 and a generic message.
type Backend interface {
	// AuthenticateProcess decides whether a socket may open. It is called before the upgrade,
	// for every socket (first connect and reconnects alike). Returning an error refuses the
	// upgrade with HTTP 403 (an *Error with Status 400..499 other than 401/403 keeps its own
	// status); nothing is logged for an *Error.
	AuthenticateProcess(ctx context.Context, req ConnectRequest) error
	// ActivateServerProcess handles ProcessReady (§3, §6.2). The reply is a bare ack.
	ActivateServerProcess(ctx context.Context, ref ProcessRef, req message.ActivateServerProcess) error
	// Heartbeat handles HeartbeatServerProcess (§3, §6.3). The reply is a bare ack.
	Heartbeat(ctx context.Context, ref ProcessRef, healthy bool) error
	// ProcessEnding handles TerminateServerProcess, sent by ProcessEnding() (§3, §6.9). After it
	// succeeds, the process's sockets closing is not reported as a disconnect.
	ProcessEnding(ctx context.Context, ref ProcessRef) error
	// Disconnected reports that the last socket of a process on this node closed without a
	// successful ProcessEnding. The process may still reconnect (§1.6). Its error is logged.
	Disconnected(ctx context.Context, ref ProcessRef) error
	// GetComputeCertificate handles GetComputeCertificate (§3): a certificate path on the
	// compute and the compute name.
	GetComputeCertificate(ctx context.Context, ref ProcessRef) (message.GetComputeCertificateResult, error)
	// GetFleetRoleCredentials handles GetFleetRoleCredentials (§3). A compute without a fleet
	// role answers the zero value (empty AccessKeyID) and no error (§9.9).
	GetFleetRoleCredentials(ctx context.Context, ref ProcessRef, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error)
}

// GameSessionBackend handles the game- and player-session actions of §3. It is optional
// (Config.GameSessions); without one these actions are answered with 501.
type GameSessionBackend interface {
	// ActivateGameSession handles ActivateGameSession; bare ack.
	ActivateGameSession(ctx context.Context, ref ProcessRef, req message.ActivateGameSession) error
	// AcceptPlayerSession handles AcceptPlayerSession; bare ack.
	AcceptPlayerSession(ctx context.Context, ref ProcessRef, req message.AcceptPlayerSession) error
	// RemovePlayerSession handles RemovePlayerSession; bare ack.
	RemovePlayerSession(ctx context.Context, ref ProcessRef, req message.RemovePlayerSession) error
	// UpdatePlayerSessionCreationPolicy handles the same-named action; bare ack.
	UpdatePlayerSessionCreationPolicy(ctx context.Context, ref ProcessRef, req message.UpdatePlayerSessionCreationPolicy) error
	// DescribePlayerSessions handles the same-named action.
	DescribePlayerSessions(ctx context.Context, ref ProcessRef, req message.DescribePlayerSessions) (message.DescribePlayerSessionsResult, error)
	// StartMatchBackfill handles the same-named action.
	StartMatchBackfill(ctx context.Context, ref ProcessRef, req message.StartMatchBackfill) (message.StartMatchBackfillResult, error)
	// StopMatchBackfill handles the same-named action; bare ack.
	StopMatchBackfill(ctx context.Context, ref ProcessRef, req message.StopMatchBackfill) error
}

// ComputeRef names the compute behind an agent socket (§7.3 URL parameters).
type ComputeRef struct {
	FleetID     string
	ComputeName string
}

// AgentBackend is the control plane behind the agent endpoint (§7.3). The same rules as for
// Backend apply: safe for concurrent use, *Error chooses the reply's status. Method names
// carry an Agent prefix so one type can implement both interfaces.
type AgentBackend interface {
	// AuthenticateAgent decides whether an agent socket may open (HTTP 403 on error).
	AuthenticateAgent(ctx context.Context, ref ComputeRef, authToken string) error
	// AgentHeartbeat handles SendHeartbeat.
	AgentHeartbeat(ctx context.Context, ref ComputeRef, req message.SendHeartbeat) (message.SendHeartbeatResult, error)
	// AgentRuntimeConfiguration handles DescribeRuntimeConfiguration.
	AgentRuntimeConfiguration(ctx context.Context, ref ComputeRef) (message.RuntimeConfiguration, error)
	// AgentProcessTerminated handles NotifyServerProcessTermination; bare ack.
	AgentProcessTerminated(ctx context.Context, ref ComputeRef, req message.NotifyServerProcessTermination) error
	// AgentFleetRoleCredentials handles the agent's GetFleetRoleCredentials.
	AgentFleetRoleCredentials(ctx context.Context, ref ComputeRef, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error)
	// AgentDisconnected reports that the last agent socket of a compute on this node closed.
	AgentDisconnected(ctx context.Context, ref ComputeRef) error
}

// Error is an error a Backend returns to choose the reply: Status goes on the wire as
// StatusCode (400 BadRequest, 401, 403, 404, 409, 429, 5xx, as the SDKs map them in §2.2) and
// Message as ErrorMessage.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d: %s", e.Status, e.Message) }

// Errorf returns an *Error with a formatted message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}
