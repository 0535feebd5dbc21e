package gamelift

import (
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Messages to host agents (AgentAddress), each with an AgentNotice body.
const (
	// MessageAgentRuntimeConfiguration carries the fleet's new runtime configuration.
	MessageAgentRuntimeConfiguration = "AgentRuntimeConfiguration"
	// MessageAgentStopCompute tells the agent to stop its processes and exit
	// (StartComputeTermination): its compute was deregistered or its fleet deleted.
	MessageAgentStopCompute = "StartComputeTermination"
	// MessageAgentForceExit tells the agent to kill a process now (ForceExitServerProcess).
	MessageAgentForceExit = "ForceExitServerProcess"
	// MessageAgentProcessRegistered tells the agent a process called ProcessReady, with its
	// log paths (NotifyProcessRegistered).
	MessageAgentProcessRegistered = "NotifyProcessRegistered"
	// MessageAgentSessionActivated tells the agent which game session a process hosts
	// (NotifyGameSessionActivated), for its logs.
	MessageAgentSessionActivated = "NotifyGameSessionActivated"
)

// AgentNotice is the body of a message to a host agent; each type uses some of the fields.
type AgentNotice struct {
	ProcessID     string                    `json:"processId,omitempty"`
	LogPaths      []string                  `json:"logPaths,omitempty"`
	GameSessionID string                    `json:"gameSessionId,omitempty"`
	Reason        string                    `json:"reason,omitempty"`
	Runtime       *api.RuntimeConfiguration `json:"runtime,omitempty"`
}

// agentNoticeLifetime is how long a message waits for an agent that is not connected: an
// agent reconnects within seconds, and what it missed for longer it reads afresh (runtime
// configuration) or no longer needs.
const agentNoticeLifetime = 10 * time.Minute

// tellAgent writes a message, in tx, for the agent of compute c of fleet fleetID, when that
// compute is run by an agent (a process that connects on its own has none).
func (s *Service) tellAgent(tx store.Tx, c *computeDoc, typ string, n AgentNotice) error {
	if c == nil || !c.Agent {
		return nil
	}
	deadline := s.nowMillis() + agentNoticeLifetime.Milliseconds()
	return s.enqueue(tx, AgentAddress(c.FleetID, c.Name), typ, n, deadline)
}

// tellAgents writes a message for the agent of every compute of a fleet.
func (s *Service) tellAgents(tx store.Tx, fleetID, typ string, n AgentNotice) error {
	return eachChild(tx, kindCompute, fleetID, func(_ *store.Record, c *computeDoc) error {
		return s.tellAgent(tx, c, typ, n)
	})
}

// readCompute reads a compute, or nil when it is not registered.
func readCompute(tx store.Tx, fleetID, name string) (*store.Record, *computeDoc, error) {
	var c computeDoc
	rec, err := getDoc(tx, kindCompute, computeKey(fleetID, name), &c, func() error { return errNoRecord })
	if err != nil {
		return nil, nil, ignoreNoRecord(err)
	}
	return rec, &c, nil
}
