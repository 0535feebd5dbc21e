package server

import (
	"context"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/httpapi"
)

// InjectFaultTarget is the X-Amz-Target of fault injection (docs/dev.md), a Hoist operation
// outside GameLift's model that only a server in dev mode accepts.
const InjectFaultTarget = "Hoist.InjectFault"

// The kinds of fault Hoist.InjectFault injects.
const (
	// FaultProcessCrash kills a server process as a crash would (SIGKILL, no termination
	// asked): on a managed fleet's local instance here, or through the outbox by the
	// `hoist agent` that runs it (fault_agent.go).
	FaultProcessCrash = "ProcessCrash"
	// FaultInstanceLoss loses a managed fleet's local instance as if its host vanished: its
	// processes are killed, their game sessions end INTERRUPTED, and it is replaced.
	FaultInstanceLoss = "InstanceLoss"
	// FaultSpotInterruption gives a managed fleet's local instance GameLift's 2-minute spot
	// interruption notice; the instance is lost when the notice runs out (fault_spot.go). With
	// GameServerGroupName it makes a FleetIQ group's instance SPOT_TERMINATING instead, and
	// reclaims it when the notice runs out; with ComputeName it notifies the processes of a
	// hoist agent's compute and deregisters the compute when the notice runs out.
	FaultSpotInterruption = "SpotInterruption"
	// FaultComputePartition cuts a compute's websockets and refuses its new ones for Seconds
	// (fault_partition.go).
	FaultComputePartition = "ComputePartition"
	// FaultSlowStore adds Millis of latency to every store write for Seconds (fault_store.go).
	FaultSlowStore = "SlowStore"
	// FaultFailingStore makes store writes fail for Seconds (a Fraction of them, or all), as
	// when the database is unreachable: the API answers ServiceUnavailableException, which
	// AWS SDKs retry, and the background loops pause (fault_store.go).
	FaultFailingStore = "FailingStore"
)

// InjectFaultInput is the input of Hoist.InjectFault.
type InjectFaultInput struct {
	// Kind is the fault: ProcessCrash, InstanceLoss, SpotInterruption, ComputePartition,
	// SlowStore or FailingStore.
	Kind string `json:"Kind"`
	// FleetId is the fleet of the process.
	FleetId string `json:"FleetId,omitempty"`
	// ProcessId is the server process to crash; GameSessionId names it instead by the game
	// session it hosts (FleetId may then be left out).
	ProcessId     string `json:"ProcessId,omitempty"`
	GameSessionId string `json:"GameSessionId,omitempty"`
	// InstanceId is the instance to lose (InstanceLoss) or interrupt (SpotInterruption).
	InstanceId string `json:"InstanceId,omitempty"`
	// GameServerGroupName (name or ARN) makes SpotInterruption's InstanceId an instance of
	// that FleetIQ game server group instead of a fleet's.
	GameServerGroupName string `json:"GameServerGroupName,omitempty"`
	// ComputeName is the compute to partition (ComputePartition), for Seconds, or the hoist
	// agent's compute to interrupt (SpotInterruption with FleetId).
	ComputeName string  `json:"ComputeName,omitempty"`
	Seconds     float64 `json:"Seconds,omitempty"`
	// Millis is the latency SlowStore adds to each store write, for Seconds.
	Millis int64 `json:"Millis,omitempty"`
	// Fraction is the share of store writes FailingStore fails, between 0 and 1; 0 means all.
	Fraction float64 `json:"Fraction,omitempty"`
}

// InjectFaultOutput is the output of Hoist.InjectFault: what the fault hit.
type InjectFaultOutput struct {
	Kind    string `json:"Kind"`
	FleetId string `json:"FleetId,omitempty"`
	// GameServerGroupName is the FleetIQ group of an interrupted instance.
	GameServerGroupName string `json:"GameServerGroupName,omitempty"`
	ProcessId           string `json:"ProcessId,omitempty"`
	InstanceId          string `json:"InstanceId,omitempty"`
	// ComputeName is the partitioned (ComputePartition) or interrupted compute.
	ComputeName string `json:"ComputeName,omitempty"`
	// Until is when the fault runs out, RFC 3339 on the server's clock: the spot instance's
	// reclaim, the partition's end.
	Until string `json:"Until,omitempty"`
}

// faultExtensions is fault injection.
func (s *Server) faultExtensions() []httpapi.Extension {
	return []httpapi.Extension{{Target: InjectFaultTarget, NewInput: func() any { return new(InjectFaultInput) },
		Call: func(ctx context.Context, in any) (any, error) { return s.injectFault(ctx, in.(*InjectFaultInput)) }}}
}

func (s *Server) injectFault(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	if !s.cfg.Dev {
		return nil, api.Errorf(api.InvalidRequestException,
			"Fault injection needs a server in dev mode: start it with `hoist server --dev` (docs/dev.md).")
	}
	switch in.Kind {
	case FaultProcessCrash:
		return s.crashProcess(ctx, in)
	case FaultInstanceLoss:
		return s.loseInstance(ctx, in)
	case FaultSpotInterruption:
		return s.interruptInstance(ctx, in)
	case FaultComputePartition:
		return s.partitionCompute(in)
	case FaultSlowStore:
		return s.slowStoreFault(in)
	case FaultFailingStore:
		return s.failingStoreFault(in)
	}
	return nil, api.Errorf(api.InvalidRequestException, "Kind %q is not a fault Hoist injects: %s, %s, %s, %s, %s or %s.",
		in.Kind, FaultProcessCrash, FaultInstanceLoss, FaultSpotInterruption, FaultComputePartition, FaultSlowStore, FaultFailingStore)
}

// crashProcess kills the named process on this node's local instances.
func (s *Server) crashProcess(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	fleet, process := in.FleetId, in.ProcessId
	if in.GameSessionId != "" {
		ref, err := s.svc.GameSessionProcess(ctx, in.GameSessionId)
		if err != nil {
			return nil, err
		}
		fleet, process = ref.FleetID, ref.ProcessID
	}
	if fleet == "" || process == "" {
		return nil, api.Errorf(api.InvalidRequestException, "ProcessCrash needs FleetId and ProcessId, or GameSessionId.")
	}
	where := "local instance"
	if !s.host.CrashProcess(fleet, process) {
		if err := s.svc.CrashAgentProcess(ctx, fleet, process); err != nil {
			return nil, err
		}
		where = "agent"
	}
	s.log.Info("fault injected: process crash", "fleet", fleet, "process", process, "on", where)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: fleet, ProcessId: process}, nil
}

// loseInstance loses a managed fleet's instance in the store, then kills what runs of it here.
func (s *Server) loseInstance(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	if in.FleetId == "" || in.InstanceId == "" {
		return nil, api.Errorf(api.InvalidRequestException, "InstanceLoss needs FleetId and InstanceId.")
	}
	if err := s.svc.LoseInstance(ctx, in.FleetId, in.InstanceId); err != nil {
		return nil, err
	}
	s.host.LoseInstance(in.FleetId, in.InstanceId)
	s.log.Info("fault injected: instance loss", "fleet", in.FleetId, "instance", in.InstanceId)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: in.FleetId, InstanceId: in.InstanceId}, nil
}
