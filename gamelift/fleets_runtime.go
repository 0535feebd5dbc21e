package gamelift

import (
	"context"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// maxProcessesPerCompute is GameLift's limit of concurrent server processes on one compute
// (instance): the sum of ConcurrentExecutions over a runtime configuration.
const maxProcessesPerCompute = 50

// maxServerProcessEntries is the most ServerProcesses entries a runtime configuration holds.
const maxServerProcessEntries = 50

// checkRuntime checks a runtime configuration beyond the model: 1 to 50 ServerProcesses
// entries, each with a LaunchPath and ConcurrentExecutions of at least 1, adding up to at most
// 50 concurrent processes per compute.
func checkRuntime(rc *api.RuntimeConfiguration) error {
	n := len(rc.ServerProcesses)
	if n == 0 || n > maxServerProcessEntries {
		return api.Errorf(api.InvalidRequestException,
			"RuntimeConfiguration.ServerProcesses must have between 1 and %d entries; it has %d.", maxServerProcessEntries, n)
	}
	total := 0
	for i, sp := range rc.ServerProcesses {
		c := int(api.Deref(sp.ConcurrentExecutions))
		if api.Deref(sp.LaunchPath) == "" || c < 1 {
			return api.Errorf(api.InvalidRequestException,
				"RuntimeConfiguration.ServerProcesses entry %d needs a LaunchPath and ConcurrentExecutions of at least 1.", i+1)
		}
		total += c
	}
	if total > maxProcessesPerCompute {
		return api.Errorf(api.InvalidRequestException,
			"The runtime configuration launches %d concurrent server processes per compute; the maximum is %d.",
			total, maxProcessesPerCompute)
	}
	return nil
}

// runtimeOf is a fleet's runtime configuration as the API shows it: an empty one when the
// fleet has none (Anywhere fleets need one only when an agent launches their processes).
func runtimeOf(d *fleetDoc) *api.RuntimeConfiguration {
	if d.Runtime == nil {
		return &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{}}
	}
	return d.Runtime
}

// DescribeRuntimeConfiguration returns a fleet's runtime configuration.
func (s *Service) DescribeRuntimeConfiguration(ctx context.Context, in *api.DescribeRuntimeConfigurationInput) (*api.DescribeRuntimeConfigurationOutput, error) {
	doc, err := s.readFleet(ctx, in.FleetId)
	if err != nil {
		return nil, err
	}
	if doc.Status == fleetTerminated {
		return nil, fleetNotFound(doc.ID)()
	}
	return &api.DescribeRuntimeConfigurationOutput{RuntimeConfiguration: runtimeOf(doc)}, nil
}

// UpdateRuntimeConfiguration replaces a fleet's runtime configuration. Agents pick it up the
// next time they ask (RuntimeConfigurationFor); processes already running are left alone.
func (s *Service) UpdateRuntimeConfiguration(ctx context.Context, in *api.UpdateRuntimeConfigurationInput) (*api.UpdateRuntimeConfigurationOutput, error) {
	id, err := s.fleetID(in.FleetId)
	if err != nil {
		return nil, err
	}
	rc := in.RuntimeConfiguration
	if rc == nil {
		return nil, api.Errorf(api.InvalidRequestException, "RuntimeConfiguration is required.")
	}
	if err := checkRuntime(rc); err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := s.activeFleetTx(tx, id)
		if err != nil {
			return err
		}
		doc.Runtime = rc
		if err := s.tellAgents(tx, id, MessageAgentRuntimeConfiguration, AgentNotice{Runtime: rc}); err != nil {
			return err
		}
		return putDoc(tx, rec, doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateRuntimeConfigurationOutput{RuntimeConfiguration: rc}, nil
}

// RuntimeConfigurationFor is what a host agent asks for (its DescribeRuntimeConfiguration
// message): the runtime configuration of fleet fleetID, empty when the fleet has none.
// NotFoundException when the fleet does not exist or is TERMINATED.
func (s *Service) RuntimeConfigurationFor(ctx context.Context, fleetID string) (*api.RuntimeConfiguration, error) {
	doc := new(fleetDoc)
	if err := s.read(ctx, kindFleet, fleetID, doc, fleetNotFound(fleetID)); err != nil {
		return nil, err
	}
	if doc.Status == fleetTerminated {
		return nil, fleetNotFound(fleetID)()
	}
	return runtimeOf(doc), nil
}
