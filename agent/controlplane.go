package agent

import (
	"context"
	"errors"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
)

// Error kinds a ControlPlane returns (wrapped), so the agent can decide without looking at
// transport details. Remote maps GameLift exceptions and websocket handshake statuses to them.
var (
	// ErrNotReady: the control plane cannot serve the request yet (NotReadyException); retry.
	ErrNotReady = errors.New("control plane not ready")
	// ErrConflict: the compute is already registered (ConflictException).
	ErrConflict = errors.New("conflict")
	// ErrNotFound: the fleet or compute does not exist (NotFoundException).
	ErrNotFound = errors.New("not found")
	// ErrUnauthorized: credentials or auth token refused (UnauthorizedException, HTTP 401/403).
	ErrUnauthorized = errors.New("unauthorized")
)

// Compute identifies this host to the control plane: the RegisterCompute input.
type Compute struct {
	FleetID     string
	ComputeName string
	Location    string
	IPAddress   string
	DNSName     string
}

// Registration is what the control plane says about a registered compute.
type Registration struct {
	// SdkEndpoint (GameLiftServiceSdkEndpoint) is the websocket URL server processes get as
	// GAMELIFT_SDK_WEBSOCKET_URL.
	SdkEndpoint string
	// AgentEndpoint (GameLiftAgentEndpoint) is the websocket URL the agent connects to.
	AgentEndpoint string
	Status        string
}

// Token is a compute auth token and its expiry.
type Token struct {
	Value   string
	Expires time.Time
}

// RuntimeConfiguration is the fleet's description of what runs on each compute.
type RuntimeConfiguration struct {
	ServerProcesses                     []supervisor.ServerProcess
	MaxConcurrentGameSessionActivations int
	GameSessionActivationTimeoutSeconds int
}

// LinkParams say where and as whom the agent opens its live link.
type LinkParams struct {
	Endpoint    string // the compute's GameLiftAgentEndpoint
	FleetID     string
	ComputeName string
	AuthToken   string
}

// ControlPlane is everything the agent needs from Hoist. Remote implements it over the
// network (the GameLift API through aws-sdk-go-v2 and the agent websocket); the server can
// implement it in-process for its local instances; tests implement it with fakes. Errors wrap
// the Err* kinds above where they apply.
type ControlPlane interface {
	// RegisterCompute registers the compute (GameLift RegisterCompute).
	RegisterCompute(ctx context.Context, c Compute) (Registration, error)
	// DescribeCompute reads an existing registration (GameLift DescribeCompute).
	DescribeCompute(ctx context.Context, fleetID, computeName string) (Registration, error)
	// GetComputeAuthToken issues a token (GameLift GetComputeAuthToken).
	GetComputeAuthToken(ctx context.Context, fleetID, computeName string) (Token, error)
	// DescribeRuntimeConfiguration reads the fleet's runtime configuration.
	DescribeRuntimeConfiguration(ctx context.Context, fleetID string) (RuntimeConfiguration, error)
	// DeregisterCompute removes the compute (GameLift DeregisterCompute).
	DeregisterCompute(ctx context.Context, fleetID, computeName string) error
	// Connect opens the live link. Everything the control plane sends (responses and pushes)
	// is passed to onMessage, one at a time, in arrival order.
	Connect(ctx context.Context, p LinkParams, onMessage func(Message)) (Link, error)
}

// Link is the agent's live connection to the control plane (the agent websocket, §7.3 of
// the Server SDK protocol notes). Sends are fire-and-forget: answers arrive as Messages.
type Link interface {
	// SendHeartbeat reports the compute's status and live processes.
	SendHeartbeat(ctx context.Context, hb Heartbeat) error
	// NotifyTermination reports that a server process ended.
	NotifyTermination(ctx context.Context, t Termination) error
	// RequestRuntimeConfiguration asks for the runtime configuration; the answer arrives as a
	// Message with Action DescribeRuntimeConfiguration.
	RequestRuntimeConfiguration(ctx context.Context) error
	// Done is closed when the link is gone (dropped or closed).
	Done() <-chan struct{}
	// Close closes the link.
	Close() error
}

// Compute statuses the agent reports in heartbeats.
const (
	StatusInitializing = "Initializing"
	StatusActive       = "Active"
	StatusTerminating  = "Terminating"
)

// Heartbeat is the SendHeartbeat request.
type Heartbeat struct {
	Status      string
	ProcessList []string // process IDs
	Time        time.Time
}

// Termination is the NotifyServerProcessTermination request.
type Termination struct {
	ProcessID         string
	EventCode         string // empty for a normal end
	TerminationReason string
}

// Actions on the agent link.
const (
	ActionSendHeartbeat                  = "SendHeartbeat"
	ActionNotifyServerProcessTermination = "NotifyServerProcessTermination"
	ActionDescribeRuntimeConfiguration   = "DescribeRuntimeConfiguration"
	ActionForceExitServerProcess         = "ForceExitServerProcess"
	ActionForceExitProcess               = "ForceExitProcess" // deprecated spelling
	ActionStartComputeTermination        = "StartComputeTermination"
	ActionRefreshConnection              = "RefreshConnection"
	ActionNotifyProcessRegistered        = "NotifyProcessRegistered"
	ActionNotifyGameSessionActivated     = "NotifyGameSessionActivated"
)

// Message is one frame from the control plane: a response to an agent request or a push.
// It is the union of the fields of every action; JSON decoding is case-insensitive and
// ignores unknown fields.
type Message struct {
	Action       string
	RequestID    string `json:"RequestId,omitempty"`
	StatusCode   int    `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`

	// ForceExitServerProcess, NotifyProcessRegistered, NotifyGameSessionActivated
	ProcessID         string   `json:"ProcessId,omitempty"`
	TerminationReason string   `json:",omitempty"`
	LogPaths          []string `json:",omitempty"`
	GameSessionID     string   `json:"GameSessionId,omitempty"`

	// RefreshConnection; ExpirationTime is in epoch seconds.
	RefreshConnectionEndpoint string `json:",omitempty"`
	AuthToken                 string `json:",omitempty"`
	ExpirationTime            int64  `json:",omitempty"`

	// SendHeartbeat response
	Status                string   `json:",omitempty"`
	UnhealthyProcesses    []string `json:",omitempty"`
	UnregisteredProcesses []string `json:",omitempty"`

	// DescribeRuntimeConfiguration response
	ServerProcesses                     []WireServerProcess `json:",omitempty"`
	GameSessionActivationTimeoutSeconds int                 `json:",omitempty"`
	MaxConcurrentGameSessionActivations int                 `json:",omitempty"`
}

// WireServerProcess is a ServerProcess as JSON carries it.
type WireServerProcess struct {
	LaunchPath           string
	Parameters           string `json:",omitempty"`
	ConcurrentExecutions int
}

// RuntimeConfiguration converts a DescribeRuntimeConfiguration response.
func (m Message) RuntimeConfiguration() RuntimeConfiguration {
	rc := RuntimeConfiguration{
		GameSessionActivationTimeoutSeconds: m.GameSessionActivationTimeoutSeconds,
		MaxConcurrentGameSessionActivations: m.MaxConcurrentGameSessionActivations,
	}
	for _, sp := range m.ServerProcesses {
		rc.ServerProcesses = append(rc.ServerProcesses, supervisor.ServerProcess(sp))
	}
	return rc
}
