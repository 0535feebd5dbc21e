package gamelift

import (
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

func TestHostCapacityFit(t *testing.T) {
	c5large, _ := LookupInstanceType("c5.large")  // 2 vCPUs, 4 GiB
	r524x, _ := LookupInstanceType("r5.24xlarge") // 96 vCPUs, 768 GiB
	t2micro, _ := LookupInstanceType("t2.micro")  // 1 vCPU, 1 GiB
	small := HostCapacity{MemoryBytes: 8 << 30, CPUs: 2}
	for _, c := range []struct {
		host HostCapacity
		t    InstanceType
		used hostUse
		want int32
	}{
		{HostCapacity{}, c5large, hostUse{}, DefaultInstanceLimit},                       // unknown host
		{HostCapacity{MemoryBytes: 10 << 30, CPUs: 16}, c5large, hostUse{}, 2},           // memory bound: 10/4
		{HostCapacity{MemoryBytes: 64 << 30, CPUs: 2}, c5large, hostUse{}, 4},            // CPU bound: 2*4/2
		{HostCapacity{MemoryBytes: 10 << 30, CPUs: 16}, c5large, hostUse{6 << 30, 2}, 1}, // what others leave
		{small, r524x, hostUse{}, 1},                                                     // larger than the host: alone
		{small, r524x, small.footprint(t2micro), 0},                                      // ... and not beside another
		{HostCapacity{MemoryBytes: 1 << 40, CPUs: 128}, t2micro, hostUse{}, DefaultInstanceLimit},
		{HostCapacity{MemoryBytes: 23 << 30}, t2micro, hostUse{}, 23}, // CPUs unknown
		{small, c5large, hostUse{12 << 30, 4}, 0},                     // over-full: none
	} {
		if got := c.host.fit(c.t, c.used); got != c.want {
			t.Errorf("%+v.fit(%+v, %+v) = %d, want %d", c.host, c.t, c.used, got, c.want)
		}
	}
}

// TestInstanceLimitsFollowTheHost: DescribeEC2InstanceLimits reports what the host holds
// besides the live instances of every type, and UpdateFleetCapacity and CreateFleet refuse to
// go past it.
func TestInstanceLimitsFollowTheHost(t *testing.T) {
	f, _ := newHostFixture(t)
	f.svc.host = HostCapacity{MemoryBytes: 10 << 30, CPUs: 8} // two c5.large (4 GiB each)
	fleet := f.managedFleet(t)
	limit := func(typ api.EC2InstanceType) (current, limit int32) {
		t.Helper()
		out := ok(f.h.DescribeEC2InstanceLimits(f.ctx, &api.DescribeEC2InstanceLimitsInput{EC2InstanceType: &typ}))(t).EC2InstanceLimits
		if len(out) != 1 || *out[0].EC2InstanceType != typ {
			t.Fatalf("limits %+v", out)
		}
		return *out[0].CurrentInstances, *out[0].InstanceLimit
	}
	if cur, lim := limit(api.EC2InstanceTypeC5Large); cur != 1 || lim != 2 {
		t.Fatalf("c5.large: %d of %d", cur, lim)
	}
	capacity := func(desired int32) error {
		return errOf(f.h.UpdateFleetCapacity(f.ctx, &api.UpdateFleetCapacityInput{FleetId: api.String(fleet),
			DesiredInstances: api.Int32(desired), MaxSize: api.Int32(10)}))
	}
	err := capacity(3)
	wantCode(t, err, api.LimitExceededException)
	if !strings.Contains(err.Error(), "limit is 2") {
		t.Errorf("error %q does not name the limit", err)
	}
	ok(struct{}{}, capacity(2))(t)
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, ec2Fleet(f.readyBuild(t)))), api.LimitExceededException)
	ok(struct{}{}, capacity(1))(t) // lowering is always allowed; 6 GiB left
	if cur, lim := limit(api.EC2InstanceTypeM5Large); cur != 0 || lim != 0 {
		t.Fatalf("m5.large (8 GiB) beside a c5.large: %d of %d", cur, lim)
	}
	m5 := ec2Fleet(f.readyBuild(t))
	m5.EC2InstanceType = ptr(api.EC2InstanceTypeM5Large)
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, m5)), api.LimitExceededException)
	micro := ec2Fleet(f.readyBuild(t))
	micro.EC2InstanceType = ptr(api.EC2InstanceTypeT2Micro)
	micro.Locations = locations(testRegion, "us-east-1") // one instance in each: 2 GiB
	ok(f.h.CreateFleet(f.ctx, micro))(t)
	if cur, lim := limit(api.EC2InstanceTypeC5Large); cur != 1 || lim != 2 {
		t.Fatalf("c5.large beside two t2.micro: %d of %d", cur, lim) // 4 GiB left
	}
	ok(f.h.CreateFleet(f.ctx, ec2Fleet(f.readyBuild(t))))(t)
	wantCode(t, errOf(f.h.CreateFleet(f.ctx, micro)), api.LimitExceededException) // 0 GiB left
}

func TestLocalInstanceResources(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.managedFleet(t)
	lis := f.localInstances(t, fleet)
	want := InstanceResources{CPUs: 2, MemoryBytes: 4 << 30, Pids: 4096}
	if len(lis) != 1 || lis[0].Resources != want {
		t.Fatalf("local instances %+v, want resources %+v", lis, want)
	}
}

func TestInstanceProcessOutOfMemory(t *testing.T) {
	h := newHost(t)
	h.ready(t, "hungry", 7777)
	if err := h.f.svc.InstanceProcessOutOfMemory(h.f.ctx, h.fleet, "host-1", "hungry", 4<<30); err != nil {
		t.Fatal(err)
	}
	if h.status(t, "hungry") != processTerminated || h.activeCount(t) != 0 {
		t.Error("a process killed out of memory is not TERMINATED")
	}
	events := ok(h.f.h.DescribeFleetEvents(h.f.ctx, &api.DescribeFleetEventsInput{FleetId: api.String(h.fleet)}))(t).Events
	last := events[len(events)-1]
	if *last.EventCode != api.EventCodeServerProcessCrashed || !strings.Contains(*last.Message, "out of memory") ||
		!strings.Contains(*last.Message, "4 GiB") || !strings.Contains(*last.Message, "hungry") {
		t.Fatalf("last event %s: %s", *last.EventCode, *last.Message)
	}
	// A process that never connected still leaves the event.
	if err := h.f.svc.InstanceProcessOutOfMemory(h.f.ctx, h.fleet, "host-1", "early", 1536<<20); err != nil {
		t.Fatal(err)
	}
	events = ok(h.f.h.DescribeFleetEvents(h.f.ctx, &api.DescribeFleetEventsInput{FleetId: api.String(h.fleet)}))(t).Events
	if last := events[len(events)-1]; !strings.Contains(*last.Message, "1536 MiB") {
		t.Fatalf("last event %s", *last.Message)
	}
}

// TestAutoscalerStopsAtTheInstanceLimit: a scaling policy that asks for more instances than
// the host holds gets as many as it holds, without an error.
func TestAutoscalerStopsAtTheInstanceLimit(t *testing.T) {
	f, _ := newHostFixture(t)
	f.svc.host = HostCapacity{MemoryBytes: 10 << 30, CPUs: 8} // two c5.large
	fleet := f.scalingFleet(t, 4)
	f.activeSession(t, fleet)
	f.activeSession(t, fleet)
	ok(f.h.PutScalingPolicy(f.ctx, rulePolicyInput(fleet, "full", api.MetricNameAvailableGameSessions,
		api.ComparisonOperatorTypeLessThanThreshold, 1, 1, 3, api.ScalingAdjustmentTypeChangeInCapacity)))(t)
	f.autoscale(t, 0)
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d, want 2 (the host's limit)", d)
	}
	f.activateInstances(t, fleet)
	f.activeSession(t, fleet)
	f.activeSession(t, fleet)
	for range 12 {
		f.autoscale(t, time.Minute) // full again, and at the limit
	}
	if d := f.desired(t, fleet); d != 2 {
		t.Fatalf("desired %d at the limit, want 2", d)
	}
}
