package gamelift

import (
	"context"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// ListServerProcessesTarget is the X-Amz-Target of Hoist.ListServerProcesses, a read
// operation outside GameLift's model (GameLift has none that lists server processes) that
// the web console shows on a fleet's page.
const ListServerProcessesTarget = "Hoist.ListServerProcesses"

// ListServerProcessesInput is the input of Hoist.ListServerProcesses.
type ListServerProcessesInput struct {
	// FleetId is the fleet's ID or ARN. Required.
	FleetId *string `json:"FleetId,omitzero"`
	// ComputeName keeps only the processes of one compute; empty for all.
	ComputeName *string `json:"ComputeName,omitzero"`
}

// ServerProcess is one server process as Hoist.ListServerProcesses reports it.
type ServerProcess struct {
	ProcessId   string
	ComputeName string
	// Status is INITIALIZING, ACTIVE, TERMINATING or TERMINATED.
	Status    string
	Connected bool
	// Health is HEALTHY, UNHEALTHY (its last report was unhealthy) or "" before any report.
	Health              string         `json:",omitzero"`
	LastHealthCheckTime *api.Timestamp `json:",omitzero"`
	Port                int            `json:",omitzero"`
	LogPaths            []string       `json:",omitzero"`
	SdkVersion          string         `json:",omitzero"`
	SdkLanguage         string         `json:",omitzero"`
	// GameSessionId is the live (ACTIVATING or ACTIVE) game session the process hosts.
	GameSessionId  string         `json:",omitzero"`
	ConnectionTime *api.Timestamp `json:",omitzero"`
	ActivationTime *api.Timestamp `json:",omitzero"`
	EndTime        *api.Timestamp `json:",omitzero"`
	// EndReason is the event code of a decision to terminate it.
	EndReason string `json:",omitzero"`
}

// ListServerProcessesOutput is the output of Hoist.ListServerProcesses.
type ListServerProcessesOutput struct {
	ServerProcesses []ServerProcess
}

// ListServerProcesses reports a fleet's server processes, ended ones included, in the order
// they first connected.
func (s *Service) ListServerProcesses(ctx context.Context, in *ListServerProcessesInput) (*ListServerProcessesOutput, error) {
	if in.FleetId == nil {
		return nil, api.Errorf(api.InvalidRequestException, "FleetId is required.")
	}
	f, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	out := &ListServerProcessesOutput{ServerProcesses: []ServerProcess{}}
	err = s.view(ctx, func(tx store.Tx) error {
		out.ServerProcesses = out.ServerProcesses[:0]
		hosted, err := hostedSessions(tx, f.ID)
		if err != nil {
			return err
		}
		return eachChild(tx, kindProcess, f.ID, func(_ *store.Record, p *processDoc) error {
			if c := api.Deref(in.ComputeName); c == "" || c == p.Compute {
				out.ServerProcesses = append(out.ServerProcesses, p.report(hosted[p.ProcessID]))
			}
			return nil
		})
	})
	return out, err
}

// hostedSessions maps process IDs to the ARN of the live game session each hosts.
func hostedSessions(tx store.Tx, fleetID string) (map[string]string, error) {
	hosted := map[string]string{}
	err := eachChild(tx, kindGameSession, fleetID, func(_ *store.Record, g *gameSessionDoc) error {
		if g.Status == gsActivating || g.Status == gsActive {
			hosted[g.ProcessID] = g.ARN
		}
		return nil
	})
	return hosted, err
}

// report is the process as ListServerProcesses shows it.
func (p *processDoc) report(session string) ServerProcess {
	r := ServerProcess{ProcessId: p.ProcessID, ComputeName: p.Compute, Status: p.Status, Connected: p.Connected,
		Port: p.Port, LogPaths: p.LogPaths, SdkVersion: p.SdkVersion, SdkLanguage: p.SdkLanguage, GameSessionId: session,
		LastHealthCheckTime: stampIfSet(p.LastHeartbeat), ConnectionTime: stampIfSet(p.ConnectedAt),
		ActivationTime: stampIfSet(p.Activated), EndTime: stampIfSet(p.Ended), EndReason: p.Reason}
	switch {
	case p.Unhealthy > 0:
		r.Health = "UNHEALTHY"
	case p.LastHealthy > 0:
		r.Health = "HEALTHY"
	}
	return r
}

// stampIfSet is stamp, nil for zero.
func stampIfSet(ms int64) *api.Timestamp {
	if ms == 0 {
		return nil
	}
	return stamp(ms)
}
