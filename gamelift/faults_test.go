package gamelift

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// TestInterruptInstance: a spot interruption notice queues TerminateProcess for each live
// process of the instance with a termination time SpotNotice ahead (what the SDK's
// GetTerminationTime returns), adds INSTANCE_INTERRUPTED, and leaves the process ACTIVE.
func TestInterruptInstance(t *testing.T) {
	h := newHost(t)
	h.ready(t, "p1", 7000)
	// The compute stands in for a managed instance: processes name their instance as compute.
	if err := h.f.svc.update(h.f.ctx, func(tx store.Tx) error {
		return insertChild(tx, kindEC2Instance, "host-1", h.fleet, &ec2InstanceDoc{ID: "host-1", FleetID: h.fleet, Status: ec2Active})
	}); err != nil {
		t.Fatal(err)
	}
	at, err := h.f.svc.InterruptInstance(h.f.ctx, h.fleet, "host-1")
	if err != nil {
		t.Fatal(err)
	}
	if want := h.f.clock.Now().Add(SpotNotice); !at.Equal(want) {
		t.Errorf("termination time %v, want %v", at, want)
	}
	msgs, err := h.f.svc.Outbox(h.f.ctx, ProcessAddress(h.fleet, "p1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var term ProcessTermination
	if len(msgs) != 1 || msgs[0].Type != MessageTerminateProcess || json.Unmarshal(msgs[0].Body, &term) != nil || !term.Time.Equal(at) {
		t.Fatalf("outbox of p1: %+v", msgs)
	}
	if h.status(t, "p1") != processActive {
		t.Errorf("the process is %s after the notice, want ACTIVE", h.status(t, "p1"))
	}
	out := ok(h.f.h.DescribeFleetEvents(h.f.ctx, &api.DescribeFleetEventsInput{FleetId: &h.fleet}))(t)
	if !slices.ContainsFunc(out.Events, func(e api.Event) bool { return api.Deref(e.EventCode) == api.EventCodeInstanceInterrupted }) {
		t.Errorf("no INSTANCE_INTERRUPTED among %d events", len(out.Events))
	}
	if _, err := h.f.svc.InterruptInstance(h.f.ctx, h.fleet, "i-none"); err == nil {
		t.Error("interrupting an unknown instance succeeded")
	}
}

// TestCrashAgentProcess: the crash order for a process is queued for its compute's agent;
// without an agent (a process that connected on its own) or for an unknown process it is
// NotFoundException.
func TestCrashAgentProcess(t *testing.T) {
	h := newHost(t)
	h.ready(t, "p1", 7000)
	if err := h.f.svc.CrashAgentProcess(h.f.ctx, h.fleet, "p1"); !isCode(err, api.NotFoundException) {
		t.Errorf("crashing a process without an agent: %v, want NotFoundException", err)
	}
	if err := h.f.svc.AdmitAgent(h.f.ctx, h.fleet, "host-1", h.token); err != nil {
		t.Fatal(err)
	}
	if err := h.f.svc.CrashAgentProcess(h.f.ctx, h.fleet, "p1"); err != nil {
		t.Fatal(err)
	}
	msgs, err := h.f.svc.Outbox(h.f.ctx, AgentAddress(h.fleet, "host-1"), 0)
	if err != nil {
		t.Fatal(err)
	}
	var n AgentNotice
	if len(msgs) == 0 || msgs[len(msgs)-1].Type != MessageAgentCrashProcess || json.Unmarshal(msgs[len(msgs)-1].Body, &n) != nil || n.ProcessID != "p1" {
		t.Fatalf("agent outbox: %+v", msgs)
	}
	if err := h.f.svc.CrashAgentProcess(h.f.ctx, h.fleet, "p-none"); !isCode(err, api.NotFoundException) {
		t.Errorf("crashing an unknown process: %v, want NotFoundException", err)
	}
}

// TestInterruptCompute: an agent's compute gets the spot notice as an instance does
// (TerminateProcess SpotNotice ahead for each live process, INSTANCE_INTERRUPTED); a compute
// without an agent is NotFoundException.
func TestInterruptCompute(t *testing.T) {
	h := newHost(t)
	h.ready(t, "p1", 7000)
	if _, err := h.f.svc.InterruptCompute(h.f.ctx, h.fleet, "host-1"); !isCode(err, api.NotFoundException) {
		t.Errorf("interrupting a compute without an agent: %v, want NotFoundException", err)
	}
	if err := h.f.svc.AdmitAgent(h.f.ctx, h.fleet, "host-1", h.token); err != nil {
		t.Fatal(err)
	}
	at, err := h.f.svc.InterruptCompute(h.f.ctx, h.fleet, "host-1")
	if err != nil || !at.Equal(h.f.clock.Now().Add(SpotNotice)) {
		t.Fatalf("InterruptCompute = %v, %v", at, err)
	}
	msgs, err := h.f.svc.Outbox(h.f.ctx, ProcessAddress(h.fleet, "p1"), 0)
	var term ProcessTermination
	if err != nil || len(msgs) != 1 || msgs[0].Type != MessageTerminateProcess || json.Unmarshal(msgs[0].Body, &term) != nil || !term.Time.Equal(at) {
		t.Fatalf("outbox of p1: %v %+v", err, msgs)
	}
	out := ok(h.f.h.DescribeFleetEvents(h.f.ctx, &api.DescribeFleetEventsInput{FleetId: &h.fleet}))(t)
	if !slices.ContainsFunc(out.Events, func(e api.Event) bool { return api.Deref(e.EventCode) == api.EventCodeInstanceInterrupted }) {
		t.Errorf("no INSTANCE_INTERRUPTED among %d events", len(out.Events))
	}
}
