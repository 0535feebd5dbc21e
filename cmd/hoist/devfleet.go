package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// devPoll is how often `hoist dev` polls the fleet's status and the watched binary.
const devPoll = 500 * time.Millisecond

// gl calls the GameLift operation op with in, decoding the answer into out.
func (d *devSession) gl(ctx context.Context, op string, in, out any) error {
	if out == nil {
		out = &map[string]any{}
	}
	if err := d.opts.client.call(ctx, "GameLift."+op, in, out); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// createBuild registers dir as a hoist-local build (read in place on the server's host).
func (d *devSession) createBuild(ctx context.Context, dir string) (string, error) {
	in := map[string]any{"Name": "hoist-dev", "OperatingSystem": "AMAZON_LINUX_2023",
		"StorageLocation": map[string]string{"Bucket": "hoist-local", "Key": dir}}
	var out struct {
		Build struct{ BuildId, Status string }
	}
	if err := d.gl(ctx, "CreateBuild", in, &out); err != nil {
		return "", err
	}
	if out.Build.Status != "READY" {
		return "", fmt.Errorf("build %s is %s", out.Build.BuildId, out.Build.Status)
	}
	return out.Build.BuildId, nil
}

// createFleet creates a managed fleet of build running each server process through the
// wrapper, and asks for the spec's instances.
func (d *devSession) createFleet(ctx context.Context, build string) (string, error) {
	s := d.build.spec
	name := s.Name
	if name == "" {
		name = fmt.Sprintf("hoist-dev-%d", d.revs)
	}
	in := map[string]any{"Name": name, "BuildId": build, "EC2InstanceType": s.InstanceType,
		"EC2InboundPermissions": inboundPermissions(s.Permissions), "RuntimeConfiguration": runtimeConfiguration(s)}
	var out struct{ FleetAttributes struct{ FleetId string } }
	if err := d.gl(ctx, "CreateFleet", in, &out); err != nil {
		return "", err
	}
	fleet := out.FleetAttributes.FleetId
	var err error
	if s.Instances != 1 {
		err = d.gl(ctx, "UpdateFleetCapacity", map[string]any{"FleetId": fleet, "DesiredInstances": s.Instances}, nil)
	}
	return fleet, err
}

// runtimeConfiguration is the fleet's RuntimeConfiguration: each server process launched
// through the wrapper, its launch path first among the parameters.
func runtimeConfiguration(s fleetSpec) map[string]any {
	procs := make([]any, len(s.Processes))
	for i, p := range s.Processes {
		procs[i] = map[string]any{"LaunchPath": "/local/game/" + wrapperName,
			"Parameters": strings.TrimSpace(p.LaunchPath + " " + p.Parameters), "ConcurrentExecutions": p.ConcurrentExecutions}
	}
	rc := map[string]any{"ServerProcesses": procs}
	if s.MaxActivations != 0 {
		rc["MaxConcurrentGameSessionActivations"] = s.MaxActivations
	}
	if s.ActivationTimeout != 0 {
		rc["GameSessionActivationTimeoutSeconds"] = s.ActivationTimeout
	}
	return rc
}

// inboundPermissions is the fleet's EC2InboundPermissions.
func inboundPermissions(perms []devPermission) []map[string]any {
	out := make([]map[string]any, len(perms))
	for i, p := range perms {
		out[i] = map[string]any{"FromPort": p.FromPort, "ToPort": p.ToPort, "IpRange": p.IPRange, "Protocol": p.Protocol}
	}
	return out
}

// fleetState is what the progress display follows.
type fleetState struct {
	status            string
	instances, active int // instances, and ACTIVE server processes
}

// state reads fleet's status and ACTIVE server processes.
func (d *devSession) state(ctx context.Context, fleet string) (fleetState, error) {
	var attrs struct{ FleetAttributes []struct{ Status string } }
	if err := d.gl(ctx, "DescribeFleetAttributes", map[string]any{"FleetIds": []string{fleet}}, &attrs); err != nil {
		return fleetState{}, err
	}
	var util struct {
		FleetUtilization []struct{ ActiveServerProcessCount, ActiveGameSessionCount int }
	}
	if err := d.gl(ctx, "DescribeFleetUtilization", map[string]any{"FleetIds": []string{fleet}}, &util); err != nil {
		return fleetState{}, err
	}
	var insts struct{ Instances []struct{ Status string } }
	if err := d.gl(ctx, "DescribeInstances", map[string]any{"FleetId": fleet}, &insts); err != nil {
		return fleetState{}, err
	}
	st := fleetState{instances: len(insts.Instances)}
	if len(attrs.FleetAttributes) == 1 {
		st.status = attrs.FleetAttributes[0].Status
	}
	if len(util.FleetUtilization) == 1 {
		st.active = util.FleetUtilization[0].ActiveServerProcessCount
	}
	return st, nil
}

// waitActive prints a status line on each change of fleet's status, instances or ACTIVE
// processes until the fleet is ACTIVE with all its processes, or ERROR.
func (d *devSession) waitActive(ctx context.Context, fleet string) error {
	start, last := time.Now(), fleetState{}
	want := d.build.spec.processCount()
	for {
		st, err := d.state(ctx, fleet)
		if err != nil {
			return err
		}
		if st != last {
			d.errf("%5.1fs  fleet %s  %-11s instances %d  processes ACTIVE %d/%d",
				time.Since(start).Seconds(), fleet, st.status, st.instances, st.active, want)
			last = st
		}
		switch {
		case st.status == "ERROR":
			return fmt.Errorf("fleet %s went to ERROR (aws gamelift describe-fleet-events --fleet-id %s)", fleet, fleet)
		case st.status == "ACTIVE" && st.active >= want:
			return nil
		}
		if err := sleepCtx(ctx, devPoll); err != nil {
			return fmt.Errorf("fleet %s not ACTIVE: %w", fleet, err)
		}
	}
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error { return clock.Sleep(ctx, clock.Real{}, d) }

// deleteFleet deletes fleet and waits until it is TERMINATED or gone.
func (d *devSession) deleteFleet(ctx context.Context, fleet string) error {
	if err := d.gl(ctx, "DeleteFleet", map[string]any{"FleetId": fleet}, nil); err != nil {
		return err
	}
	for {
		var attrs struct{ FleetAttributes []struct{ Status string } }
		err := d.gl(ctx, "DescribeFleetAttributes", map[string]any{"FleetIds": []string{fleet}}, &attrs)
		if err != nil && strings.Contains(err.Error(), "NotFound") {
			return nil
		}
		if err != nil {
			return err
		}
		if len(attrs.FleetAttributes) == 0 || attrs.FleetAttributes[0].Status == "TERMINATED" {
			return nil
		}
		if err := sleepCtx(ctx, devPoll); err != nil {
			return err
		}
	}
}
