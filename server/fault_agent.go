package server

import "github.com/hoist-gg/hoist/gamelift"

// crashProcessPush is Hoist's push ordering an agent to crash one of its processes
// (gamelift.MessageAgentCrashProcess; the agent's side is agent/fault.go).
type crashProcessPush struct {
	ProcessID string `json:"ProcessId"`
}

// Action is the push's action, outside GameLift's agent protocol.
func (crashProcessPush) Action() string { return gamelift.MessageAgentCrashProcess }
