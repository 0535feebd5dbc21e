package gamelift

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/api"
)

// readyBuild creates a READY hoist-local build: a directory with one file.
func (f *fixture) readyBuild(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "server"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux(),
		StorageLocation: &api.S3Location{Bucket: api.String(LocalBucket), Key: api.String(dir)}}))(t)
	return *out.Build.BuildId
}

func ec2Fleet(build string) *api.CreateFleetInput {
	it := api.EC2InstanceTypeC5Large
	return &api.CreateFleetInput{Name: api.String("managed"), BuildId: api.String(build), EC2InstanceType: &it,
		RuntimeConfiguration: &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{{
			LaunchPath: api.String("/local/game/server"), ConcurrentExecutions: api.Int32(2)}}}}
}

// managedFleet creates a READY build and an EC2 fleet of it.
func (f *fixture) managedFleet(t *testing.T) string {
	t.Helper()
	out := ok(f.h.CreateFleet(f.ctx, ec2Fleet(f.readyBuild(t))))(t)
	return *out.FleetAttributes.FleetId
}

func (f *fixture) localInstances(t *testing.T, fleet string) []LocalInstance {
	t.Helper()
	all := ok(f.svc.LocalInstances(f.ctx))(t)
	return slices.DeleteFunc(all, func(li LocalInstance) bool { return li.FleetID != fleet })
}

func TestCreateManagedFleetChecks(t *testing.T) {
	f, _ := newHostFixture(t)
	pending := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux()}))(t)
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, ec2Fleet(*pending.Build.BuildId))), api.InvalidRequestException)
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, ec2Fleet("build-nope"))), api.NotFoundException)
	in := ec2Fleet(f.readyBuild(t))
	in.EC2InstanceType = nil
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, in)), api.InvalidRequestException)
	in = ec2Fleet(f.readyBuild(t))
	in.ScriptId = api.String("script-1")
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, in)), api.NotImplementedException)
	in = ec2Fleet(f.readyBuild(t))
	in.EC2InboundPermissions = []api.IpPermission{{FromPort: api.Int32(9000), ToPort: api.Int32(8000)}}
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, in)), api.InvalidRequestException)
}

func errOf[T any](_ T, err error) error { return err }

// TestManagedFleetActivation walks a fleet from NEW to ACTIVE with the host's reports and a
// process that connects while the fleet is ACTIVATING.
func TestManagedFleetActivation(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	fa := f.attributes(t, fleet)
	if *fa.Status != api.FleetStatusNew || *fa.InstanceType != api.EC2InstanceTypeC5Large || *fa.ComputeType != api.ComputeTypeEc2 ||
		fa.BuildId == nil || *fa.OperatingSystem != *linux() {
		t.Fatalf("attributes %+v", fa)
	}
	lis := f.localInstances(t, fleet)
	if len(lis) != 1 || lis[0].Status != "PENDING" || lis[0].IPAddress != "127.0.0.2" || len(lis[0].InstanceID) != 19 ||
		lis[0].Build.Layout != LayoutDir || len(lis[0].ServerProcesses) != 1 {
		t.Fatalf("local instances %+v", lis)
	}
	inst := lis[0].InstanceID
	token, _ := ok2(f.svc.InstanceAuthToken(f.ctx, fleet, inst))(t)
	ref := ProcessRef{FleetID: fleet, ComputeName: inst, ProcessID: "p-1"}
	wantCode(t, f.svc.AdmitProcess(f.ctx, ref, token), api.InvalidFleetStatusException)
	for _, stage := range []string{StageDownloading, StageValidating, StageBuilding, StageActivating} {
		ok(struct{}{}, f.svc.InstanceProgress(f.ctx, fleet, inst, stage))(t)
		if got := string(*f.attributes(t, fleet).Status); got != stage {
			t.Fatalf("after %s the fleet is %s", stage, got)
		}
	}
	wantCode(t, f.svc.AdmitProcess(f.ctx, ref, "wrong-token"), api.UnauthorizedException)
	ok(struct{}{}, f.svc.AdmitProcess(f.ctx, ref, token))(t)
	ok(struct{}{}, f.svc.ActivateServerProcess(f.ctx, ref, ProcessActivation{Port: 7777}))(t)
	ok(struct{}{}, f.svc.ManagedProcessReady(f.ctx, fleet))(t)
	ok(struct{}{}, f.svc.InstanceProgress(f.ctx, fleet, inst, StageDownloading))(t) // a late report changes nothing
	want := []string{"FLEET_CREATED", "FLEET_STATE_DOWNLOADING", "FLEET_STATE_VALIDATING", "FLEET_STATE_BUILDING",
		"FLEET_STATE_ACTIVATING", "GENERIC_EVENT", "FLEET_STATE_ACTIVE"}
	if got := f.eventCodes(t, fleet); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	insts := ok(f.h.DescribeInstances(f.ctx, &api.DescribeInstancesInput{FleetId: api.String(fleet)}))(t).Instances
	if len(insts) != 1 || *insts[0].Status != api.InstanceStatusActive || *insts[0].IpAddress != "127.0.0.2" {
		t.Fatalf("instances %+v", insts)
	}
}

func ok2[A, B any](a A, b B, err error) func(testing.TB) (A, B) {
	return func(t testing.TB) (A, B) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
}

// TestManagedFleetCapacity scales a fleet up and down and checks the instance operations.
func TestManagedFleetCapacity(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	capacity := func(desired, max int32) error {
		return errOf(f.h.UpdateFleetCapacity(f.ctx, &api.UpdateFleetCapacityInput{FleetId: api.String(fleet),
			DesiredInstances: api.Int32(desired), MaxSize: api.Int32(max)}))
	}
	wantCode(t, capacity(3, 2), api.InvalidRequestException)
	ok(struct{}{}, capacity(3, 3))(t)
	lis := f.localInstances(t, fleet)
	ips := map[string]bool{}
	for _, li := range lis {
		ips[li.IPAddress] = true
	}
	if len(lis) != 3 || len(ips) != 3 {
		t.Fatalf("after scaling to 3: %+v", lis)
	}
	computes := ok(f.h.ListCompute(f.ctx, &api.ListComputeInput{FleetId: api.String(fleet)}))(t).ComputeList
	if len(computes) != 3 {
		t.Fatalf("%d computes, want 3 (one per instance)", len(computes))
	}
	fc := ok(f.h.DescribeFleetCapacity(f.ctx, &api.DescribeFleetCapacityInput{FleetIds: []string{fleet}}))(t).FleetCapacity
	if len(fc) != 1 || *fc[0].InstanceCounts.DESIRED != 3 || *fc[0].InstanceCounts.PENDING != 3 || *fc[0].InstanceCounts.MAXIMUM != 3 {
		t.Fatalf("capacity %+v", fc)
	}
	ok(struct{}{}, capacity(1, 3))(t)
	terminating := 0
	for _, li := range f.localInstances(t, fleet) {
		if li.Status == InstanceTerminating {
			terminating++
			ok(struct{}{}, f.svc.InstanceGone(f.ctx, fleet, li.InstanceID))(t)
		}
	}
	if terminating != 2 || len(f.localInstances(t, fleet)) != 1 {
		t.Fatalf("after scaling to 1: %d terminating, %+v", terminating, f.localInstances(t, fleet))
	}
	if n := len(ok(f.h.ListCompute(f.ctx, &api.ListComputeInput{FleetId: api.String(fleet)}))(t).ComputeList); n != 1 {
		t.Fatalf("%d computes after the instances are gone, want 1", n)
	}
	ok(struct{}{}, f.svc.InstanceMonitor().Step(f.ctx))(t)
	if n := len(f.localInstances(t, fleet)); n != 1 {
		t.Fatalf("%d instances after a monitor step, want 1", n)
	}
}

func TestInstanceOperations(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	inst := f.localInstances(t, fleet)[0].InstanceID
	access := ok(f.h.GetInstanceAccess(f.ctx, &api.GetInstanceAccessInput{FleetId: api.String(fleet), InstanceId: api.String(inst)}))(t)
	if a := access.InstanceAccess; a.Credentials != nil || *a.IpAddress != "127.0.0.2" || *a.InstanceId != inst {
		t.Fatalf("instance access %+v", a)
	}
	wantCode(t, errOf(f.h.GetInstanceAccess(f.ctx, &api.GetInstanceAccessInput{FleetId: api.String(fleet), InstanceId: api.String("i-0")})), api.NotFoundException)
	one := ok(f.h.DescribeInstances(f.ctx, &api.DescribeInstancesInput{FleetId: api.String(fleet), InstanceId: api.String(inst)}))(t)
	if len(one.Instances) != 1 || *one.Instances[0].Type != api.EC2InstanceTypeC5Large {
		t.Fatalf("DescribeInstances(%s) = %+v", inst, one.Instances)
	}
	wantCode(t, errOf(f.h.DescribeInstances(f.ctx, &api.DescribeInstancesInput{FleetId: api.String(f.anywhereFleet(t, "a"))})), api.InvalidRequestException)

	tcp := api.IpProtocolTcp
	perm := api.IpPermission{FromPort: api.Int32(7000), ToPort: api.Int32(7100), IpRange: api.String("0.0.0.0/0"), Protocol: &tcp}
	ok(f.h.UpdateFleetPortSettings(f.ctx, &api.UpdateFleetPortSettingsInput{FleetId: api.String(fleet), InboundPermissionAuthorizations: []api.IpPermission{perm}}))(t)
	ps := ok(f.h.DescribeFleetPortSettings(f.ctx, &api.DescribeFleetPortSettingsInput{FleetId: api.String(fleet)}))(t)
	if len(ps.InboundPermissions) != 1 || *ps.InboundPermissions[0].ToPort != 7100 {
		t.Fatalf("port settings %+v", ps.InboundPermissions)
	}
	ok(f.h.UpdateFleetPortSettings(f.ctx, &api.UpdateFleetPortSettingsInput{FleetId: api.String(fleet), InboundPermissionRevocations: []api.IpPermission{perm}}))(t)
	if ps := ok(f.h.DescribeFleetPortSettings(f.ctx, &api.DescribeFleetPortSettingsInput{FleetId: api.String(fleet)}))(t); len(ps.InboundPermissions) != 0 {
		t.Fatalf("port settings after revocation %+v", ps.InboundPermissions)
	}

	ok(f.h.StopFleetActions(f.ctx, &api.StopFleetActionsInput{FleetId: api.String(fleet), Actions: []api.FleetAction{api.FleetActionAutoScaling}}))(t)
	if got := f.attributes(t, fleet).StoppedActions; !slices.Equal(got, []api.FleetAction{api.FleetActionAutoScaling}) {
		t.Fatalf("StoppedActions %v", got)
	}
	ok(f.h.StartFleetActions(f.ctx, &api.StartFleetActionsInput{FleetId: api.String(fleet), Actions: []api.FleetAction{api.FleetActionAutoScaling}}))(t)
	if got := f.attributes(t, fleet).StoppedActions; len(got) != 0 {
		t.Fatalf("StoppedActions after start %v", got)
	}

	limits := ok(f.h.DescribeEC2InstanceLimits(f.ctx, &api.DescribeEC2InstanceLimitsInput{}))(t).EC2InstanceLimits
	if len(limits) != 1 || *limits[0].CurrentInstances != 1 || *limits[0].InstanceLimit != DefaultInstanceLimit ||
		*limits[0].EC2InstanceType != api.EC2InstanceTypeC5Large {
		t.Fatalf("limits %+v", limits)
	}
}

// TestManagedFleetFailureAndDeletion: a failed setup step puts a fleet being created in
// ERROR with the step's event; the fleet can be deleted and reaches TERMINATED.
func TestManagedFleetFailureAndDeletion(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	inst := f.localInstances(t, fleet)[0].InstanceID
	ok(struct{}{}, f.svc.InstanceProgress(f.ctx, fleet, inst, StageDownloading))(t)
	ok(struct{}{}, f.svc.InstanceFailed(f.ctx, fleet, inst, api.EventCodeFleetBinaryDownloadFailed, "no build"))(t)
	if got := *f.attributes(t, fleet).Status; got != api.FleetStatusError {
		t.Fatalf("status %s, want ERROR", got)
	}
	codes := f.eventCodes(t, fleet)
	if !slices.Equal(codes[len(codes)-2:], []string{"FLEET_BINARY_DOWNLOAD_FAILED", "FLEET_STATE_ERROR"}) {
		t.Fatalf("events %v", codes)
	}
	if lis := f.localInstances(t, fleet); len(lis) != 1 || lis[0].Status != InstanceTerminating {
		t.Fatalf("instances of an ERROR fleet %+v", lis)
	}
	wantCode(t, errOf(f.h.UpdateFleetCapacity(f.ctx, &api.UpdateFleetCapacityInput{FleetId: api.String(fleet),
		DesiredInstances: api.Int32(1)})), api.InvalidFleetStatusException)
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(fleet)}))(t)
	ok(struct{}{}, f.svc.InstanceGone(f.ctx, fleet, inst))(t)
	f.step(t)
	if got := *f.attributes(t, fleet).Status; got != api.FleetStatusTerminated {
		t.Fatalf("status %s after deletion, want TERMINATED", got)
	}
	if lis := f.localInstances(t, fleet); len(lis) != 0 {
		t.Fatalf("instances left %+v", lis)
	}
}
