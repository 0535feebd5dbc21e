package message

// Actions of the GameLift Agent protocol (§7.3): requests the agent sends and pushes the
// service sends. GetFleetRoleCredentials is shared with the SDK protocol.
const (
	ActionSendHeartbeat                  = "SendHeartbeat"
	ActionDescribeRuntimeConfiguration   = "DescribeRuntimeConfiguration"
	ActionNotifyServerProcessTermination = "NotifyServerProcessTermination"

	ActionNotifyProcessRegistered    = "NotifyProcessRegistered"
	ActionNotifyGameSessionActivated = "NotifyGameSessionActivated"
	ActionForceExitServerProcess     = "ForceExitServerProcess"
	ActionStartComputeTermination    = "StartComputeTermination"

	// ActionHoistGameMetrics is a Hoist extension: the agent forwards its processes' DogStatsD
	// metrics (a metrics.GameSnapshot; docs/metrics.md).
	ActionHoistGameMetrics = "HoistGameMetrics"
)

// SendHeartbeat is the agent's heartbeat (§7.3): the compute status, the process IDs it runs,
// and its clock in epoch milliseconds.
type SendHeartbeat struct {
	Status              string   `json:"Status"`
	ProcessList         []string `json:"ProcessList"`
	HeartbeatTimeMillis int64    `json:"HeartbeatTimeMillis"`
}

// SendHeartbeatResult is the reply to SendHeartbeat (§7.3): the server-side compute status and
// the processes the agent should kill.
type SendHeartbeatResult struct {
	Status                string   `json:"Status,omitempty"`
	UnhealthyProcesses    []string `json:"UnhealthyProcesses"`
	UnregisteredProcesses []string `json:"UnregisteredProcesses"`
}

// DescribeRuntimeConfiguration asks for the fleet's runtime configuration (§7.3); no fields.
type DescribeRuntimeConfiguration struct{}

// RuntimeConfiguration is the reply to DescribeRuntimeConfiguration (§7.2, §7.3).
type RuntimeConfiguration struct {
	ServerProcesses                     []ServerProcess `json:"ServerProcesses"`
	GameSessionActivationTimeoutSeconds int             `json:"GameSessionActivationTimeoutSeconds,omitempty"`
	MaxConcurrentGameSessionActivations int             `json:"MaxConcurrentGameSessionActivations,omitempty"`
}

// ServerProcess is one launch line of a RuntimeConfiguration (§7.2).
type ServerProcess struct {
	LaunchPath           string `json:"LaunchPath"`
	Parameters           string `json:"Parameters,omitempty"`
	ConcurrentExecutions int    `json:"ConcurrentExecutions"`
}

// NotifyServerProcessTermination reports that a process the agent ran has exited (§7.3).
type NotifyServerProcessTermination struct {
	ProcessID         string `json:"ProcessId"`
	EventCode         string `json:"EventCode,omitempty"`
	TerminationReason string `json:"TerminationReason,omitempty"`
}

// NotifyProcessRegistered tells the agent a process completed ActivateServerProcess (§7.3).
// The agent marks the process active only when LogPaths is non-empty.
type NotifyProcessRegistered struct {
	ProcessID string   `json:"ProcessId"`
	LogPaths  []string `json:"LogPaths"`
}

// NotifyGameSessionActivated tells the agent a process activated a game session (§7.3).
type NotifyGameSessionActivated struct {
	ProcessID     string `json:"ProcessId"`
	GameSessionID string `json:"GameSessionId"`
}

// ForceExitServerProcess tells the agent to kill a process (§7.3).
type ForceExitServerProcess struct {
	ProcessID         string `json:"ProcessId"`
	TerminationReason string `json:"TerminationReason,omitempty"`
}

// StartComputeTermination tells the agent to shut its compute down gracefully (§7.3).
type StartComputeTermination struct{}

// AgentRefreshConnection moves the agent to a new endpoint and token (§7.3). Unlike the SDK's
// RefreshConnection it carries ExpirationTime, in epoch seconds.
type AgentRefreshConnection struct {
	RefreshConnectionEndpoint string `json:"RefreshConnectionEndpoint"`
	AuthToken                 string `json:"AuthToken"`
	ExpirationTime            int64  `json:"ExpirationTime,omitempty"`
}

func (SendHeartbeat) Action() string                  { return ActionSendHeartbeat }
func (DescribeRuntimeConfiguration) Action() string   { return ActionDescribeRuntimeConfiguration }
func (NotifyServerProcessTermination) Action() string { return ActionNotifyServerProcessTermination }
func (NotifyProcessRegistered) Action() string        { return ActionNotifyProcessRegistered }
func (NotifyGameSessionActivated) Action() string     { return ActionNotifyGameSessionActivated }
func (ForceExitServerProcess) Action() string         { return ActionForceExitServerProcess }
func (StartComputeTermination) Action() string        { return ActionStartComputeTermination }
func (AgentRefreshConnection) Action() string         { return ActionRefreshConnection }
