package gamelift

import (
	"context"
	"fmt"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// MessageAgentCrashProcess tells a host agent to kill a server process as a crash would
// (fault injection, docs/dev.md): SIGKILL, without asking it to terminate. It is Hoist's own
// push, outside GameLift's agent protocol; the agent then reports the exit as any crash.
const MessageAgentCrashProcess = "HoistCrashServerProcess"

// CrashAgentProcess queues, for the agent that runs a process of an Anywhere compute, the
// order to crash it; the outbox delivers it to the agent's link on whichever node holds it.
// NotFoundException when no live process of that ID is known, or when no agent runs it (a
// process that connects on its own cannot be crashed from here).
func (s *Service) CrashAgentProcess(ctx context.Context, fleetID, processID string) error {
	notFound := func() error {
		return api.Errorf(api.NotFoundException, "Server process %s of fleet %s not found.", processID, fleetID)
	}
	return s.update(ctx, func(tx store.Tx) error {
		var p processDoc
		if _, err := getDoc(tx, kindProcess, processKey(fleetID, processID), &p, notFound); err != nil {
			return err
		}
		if p.Status != processInitializing && p.Status != processActive {
			return api.Errorf(api.NotFoundException, "Server process %s of fleet %s is %s, not running.", processID, fleetID, p.Status)
		}
		_, c, err := readCompute(tx, fleetID, p.Compute)
		if err != nil {
			return err
		}
		if c == nil || !c.Agent {
			return api.Errorf(api.NotFoundException,
				"Server process %s of fleet %s runs neither on this node's local instances nor under a hoist agent.", processID, fleetID)
		}
		return s.tellAgent(tx, c, MessageAgentCrashProcess, AgentNotice{ProcessID: processID})
	})
}

// InterruptCompute gives an Anywhere compute run by a hoist agent the notice of a spot
// interruption (fault injection, docs/dev.md; GameLift itself gives Anywhere computes none):
// each of its live processes is sent TerminateProcess with a termination time SpotNotice
// ahead, and the fleet gets an INSTANCE_INTERRUPTED event. It returns the termination time;
// the caller then reclaims the compute by deregistering it, which stops its agent.
func (s *Service) InterruptCompute(ctx context.Context, fleetID, compute string) (time.Time, error) {
	var at time.Time
	err := s.update(ctx, func(tx store.Tx) error {
		_, c, err := readCompute(tx, fleetID, compute)
		if err != nil {
			return err
		}
		if c == nil || !c.Agent {
			return api.Errorf(api.NotFoundException, "Compute %s of fleet %s is not run by a hoist agent.", compute, fleetID)
		}
		end := s.nowMillis() + SpotNotice.Milliseconds()
		at = time.UnixMilli(end)
		if err := s.noticeComputeProcesses(tx, fleetID, compute, end); err != nil {
			return err
		}
		return s.addEvent(tx, fleetID, api.EventCodeInstanceInterrupted, fmt.Sprintf(
			"Compute %s received a spot interruption notice (a fault injected with Hoist.InjectFault); it is reclaimed at %s.",
			compute, at.UTC().Format(time.RFC3339)))
	})
	return at, err
}
