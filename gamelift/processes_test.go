package gamelift

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// host is a fleet with one registered compute, host-1, and a token for it.
type host struct {
	f     *fixture
	n     *recNotifier
	fleet string
	token string
}

func newHost(t *testing.T) *host {
	f, n := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	f.register(t, fleet, "host-1")
	return &host{f: f, n: n, fleet: fleet, token: f.token(t, fleet, "host-1")}
}

func (h *host) ref(pid string) ProcessRef {
	return ProcessRef{FleetID: h.fleet, ComputeName: "host-1", ProcessID: pid}
}

// connect authenticates process pid; ready also activates it on port.
func (h *host) connect(t *testing.T, pid string) ProcessRef {
	t.Helper()
	ref := h.ref(pid)
	if err := h.f.svc.AuthenticateProcess(h.f.ctx, ref, h.token); err != nil {
		t.Fatal(err)
	}
	return ref
}

func (h *host) ready(t *testing.T, pid string, port int) ProcessRef {
	t.Helper()
	ref := h.connect(t, pid)
	if err := h.f.svc.ActivateServerProcess(h.f.ctx, ref, ProcessActivation{Port: port, LogPaths: []string{"/logs"},
		SdkVersion: "5.2.0", SdkLanguage: "Go"}); err != nil {
		t.Fatal(err)
	}
	return ref
}

func (h *host) status(t *testing.T, pid string) string {
	t.Helper()
	var p processDoc
	if err := h.f.svc.read(h.f.ctx, kindProcess, processKey(h.fleet, pid), &p, processNotFound(h.ref(pid))); err != nil {
		t.Fatal(err)
	}
	return p.Status
}

func (h *host) activeCount(t *testing.T) int32 {
	t.Helper()
	out := ok(h.f.h.DescribeFleetUtilization(h.f.ctx, &api.DescribeFleetUtilizationInput{FleetIds: []string{h.fleet}}))(t)
	u := out.FleetUtilization[0]
	if *u.FleetId != h.fleet || *u.ActiveGameSessionCount != 0 || *u.CurrentPlayerSessionCount != 0 || *u.MaximumPlayerSessionCount != 0 {
		t.Errorf("utilization = %+v", u)
	}
	return *u.ActiveServerProcessCount
}

// lastEvents returns the last n event codes of the fleet.
func (h *host) lastEvents(t *testing.T, n int) []string {
	t.Helper()
	codes := h.f.eventCodes(t, h.fleet)
	return codes[max(0, len(codes)-n):]
}

func TestProcessLifecycleAndUtilization(t *testing.T) {
	h := newHost(t)
	a := h.connect(t, "proc-a")
	if h.status(t, "proc-a") != processInitializing || h.activeCount(t) != 0 {
		t.Fatal("a connected process is not INITIALIZING")
	}
	h.ready(t, "proc-a", 7777)
	h.ready(t, "proc-b", 7778)
	if got := h.activeCount(t); got != 2 {
		t.Errorf("ActiveServerProcessCount = %d, want 2", got)
	}
	if got := h.lastEvents(t, 2); !slices.Equal(got, []string{"GENERIC_EVENT", "GENERIC_EVENT"}) {
		t.Errorf("events after ProcessReady = %v", got)
	}
	if err := h.f.svc.HeartbeatServerProcess(h.f.ctx, a, true); err != nil {
		t.Fatal(err)
	}
	if err := h.f.svc.ServerProcessEnding(h.f.ctx, a); err != nil {
		t.Fatal(err)
	}
	if h.status(t, "proc-a") != processTerminated || h.activeCount(t) != 1 {
		t.Error("ProcessEnding did not end the process")
	}
	if err := h.f.svc.ServerProcessEnding(h.f.ctx, a); err != nil {
		t.Errorf("second ProcessEnding: %v", err)
	}
	wantCode(t, h.f.svc.AuthenticateProcess(h.f.ctx, a, h.token), api.InvalidRequestException)
	wantCode(t, h.f.svc.HeartbeatServerProcess(h.f.ctx, a, true), api.InvalidRequestException)
	wantCode(t, h.f.svc.ActivateServerProcess(h.f.ctx, a, ProcessActivation{Port: 1}), api.InvalidRequestException)
	if len(h.n.pushes()) != 0 {
		t.Errorf("pushes = %v, want none", h.n.pushes())
	}
	for _, c := range h.lastEvents(t, 1) {
		if c != "GENERIC_EVENT" {
			t.Errorf("a clean ProcessEnding added event %s", c)
		}
	}
	// The agent's exit report of a process that ended cleanly changes nothing.
	if err := h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "proc-a", ""); err != nil {
		t.Fatal(err)
	}
}

func TestProcessRequestErrors(t *testing.T) {
	h := newHost(t)
	ghost := h.ref("ghost")
	wantCode(t, h.f.svc.ActivateServerProcess(h.f.ctx, ghost, ProcessActivation{Port: 7777}), api.NotFoundException)
	wantCode(t, h.f.svc.HeartbeatServerProcess(h.f.ctx, ghost, true), api.NotFoundException)
	wantCode(t, h.f.svc.ServerProcessEnding(h.f.ctx, ghost), api.NotFoundException)
	if err := h.f.svc.ServerProcessDisconnected(h.f.ctx, ghost); err != nil {
		t.Errorf("disconnect of an unknown process: %v", err)
	}
	ref := h.connect(t, "p")
	wantCode(t, h.f.svc.ActivateServerProcess(h.f.ctx, ref, ProcessActivation{Port: 0}), api.InvalidRequestException)
	wantCode(t, h.f.svc.HeartbeatServerProcess(h.f.ctx, ref, true), api.InvalidRequestException) // before ProcessReady
	wrongCompute := ref
	wrongCompute.ComputeName = "host-2"
	wantCode(t, h.f.svc.ActivateServerProcess(h.f.ctx, wrongCompute, ProcessActivation{Port: 7777}), api.NotFoundException)
	wantCode(t, h.f.svc.AuthenticateProcess(h.f.ctx, ProcessRef{FleetID: h.fleet, ComputeName: "host-1"}, h.token),
		api.InvalidRequestException)
	wantCode(t, h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "p", "FLEET_CREATED"), api.InvalidRequestException)
	wantCode(t, h.f.svc.AgentProcessExited(h.f.ctx, "fleet-nope", "host-1", "p", ""), api.NotFoundException)
}

func TestUnhealthyReportsTerminateThenGraceEnds(t *testing.T) {
	h := newHost(t)
	ref := h.ready(t, "sick", 7777)
	for i := 0; i < healthChecksMissed; i++ {
		h.f.clock.Advance(10 * time.Second)
		if err := h.f.svc.HeartbeatServerProcess(h.f.ctx, ref, false); err != nil {
			t.Fatal(err)
		}
		if i < healthChecksMissed-1 {
			h.f.step(t)
			if len(h.n.pushes()) != 0 {
				t.Fatalf("terminated after %d unhealthy reports", i+1)
			}
		}
	}
	h.f.step(t)
	now := h.f.clock.Now()
	if got := h.n.pushes(); len(got) != 1 || got[0].Ref != ref || !got[0].At.Equal(now.Add(DefaultTerminationGracePeriod)) {
		t.Fatalf("pushes = %+v, want one TerminateProcess ending at now+5m", got)
	}
	if h.status(t, "sick") != processTerminating || h.activeCount(t) != 0 {
		t.Error("an unhealthy process is not TERMINATING")
	}
	if err := h.f.svc.HeartbeatServerProcess(h.f.ctx, ref, true); err != nil {
		t.Errorf("heartbeat while terminating: %v", err)
	}
	h.f.clock.Advance(DefaultTerminationGracePeriod - time.Second)
	h.f.step(t)
	if h.status(t, "sick") != processTerminating {
		t.Error("marked terminated before the grace period ended")
	}
	h.f.clock.Advance(time.Second)
	h.f.step(t)
	h.f.step(t)
	if h.status(t, "sick") != processTerminated || len(h.n.pushes()) != 1 {
		t.Errorf("after the grace period: %s, %d pushes", h.status(t, "sick"), len(h.n.pushes()))
	}
	want := []string{"SERVER_PROCESS_TERMINATED_UNHEALTHY", "SERVER_PROCESS_FORCE_TERMINATED"}
	if got := h.lastEvents(t, 2); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
}

func TestMissedHealthChecksTerminate(t *testing.T) {
	h := newHost(t)
	ref := h.ready(t, "quiet", 7777)
	h.ready(t, "chatty", 7778)
	period := DefaultHealthCheckInterval
	for i := 0; i < 5; i++ { // chatty reports every period, quiet never
		h.f.clock.Advance(period - time.Second)
		if err := h.f.svc.HeartbeatServerProcess(h.f.ctx, h.ref("chatty"), true); err != nil {
			t.Fatal(err)
		}
		h.f.clock.Advance(time.Second)
		h.f.step(t)
		missed := i+1 >= healthChecksMissed
		if got := len(h.n.pushes()) == 1; got != missed {
			t.Fatalf("after %d periods: terminated = %v, want %v", i+1, got, missed)
		}
	}
	if got := h.n.pushes(); got[0].Ref != ref || h.status(t, "chatty") != processActive {
		t.Errorf("pushes = %+v; chatty is %s", got, h.status(t, "chatty"))
	}
	if err := h.f.svc.ServerProcessDisconnected(h.f.ctx, ref); err != nil {
		t.Fatal(err)
	}
	if h.status(t, "quiet") != processTerminated {
		t.Error("a terminating process that disconnects has not ended")
	}
	h.f.clock.Advance(DefaultTerminationGracePeriod)
	h.f.step(t)
	if codes := h.f.eventCodes(t, h.fleet); slices.Contains(codes, "SERVER_PROCESS_FORCE_TERMINATED") {
		t.Errorf("events = %v: a process that ended in time was force-terminated", codes)
	}
}

func TestProcessReadyTimeout(t *testing.T) {
	h := newHost(t)
	ref := h.connect(t, "slow")
	h.f.clock.Advance(DefaultProcessReadyTimeout - time.Second)
	h.f.step(t)
	if len(h.n.pushes()) != 0 {
		t.Fatal("terminated before the ProcessReady timeout")
	}
	// Reconnecting does not restart the clock.
	if err := h.f.svc.ServerProcessDisconnected(h.f.ctx, ref); err != nil {
		t.Fatal(err)
	}
	h.connect(t, "slow")
	h.f.clock.Advance(time.Second)
	h.f.step(t)
	if got := h.n.pushes(); len(got) != 1 || got[0].Ref != ref {
		t.Fatalf("pushes = %+v", got)
	}
	if got := h.lastEvents(t, 1); got[0] != "SERVER_PROCESS_PROCESS_READY_TIMEOUT" {
		t.Errorf("events = %v", got)
	}
	wantCode(t, h.f.svc.ActivateServerProcess(h.f.ctx, ref, ProcessActivation{Port: 7777}), api.InvalidRequestException)
}

func TestAgentProcessExited(t *testing.T) {
	h := newHost(t)
	h.ready(t, "crashy", 7777)
	if err := h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "crashy", ""); err != nil {
		t.Fatal(err)
	}
	if h.status(t, "crashy") != processTerminated || h.activeCount(t) != 0 {
		t.Error("an exited process is not TERMINATED")
	}
	if err := h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "never-connected",
		string(api.EventCodeServerProcessSdkInitializationTimeout)); err != nil {
		t.Fatal(err)
	}
	if err := h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "quiet-exit", ""); err != nil {
		t.Fatal(err)
	}
	want := []string{"SERVER_PROCESS_CRASHED", "SERVER_PROCESS_SDK_INITIALIZATION_TIMEOUT"}
	if got := h.lastEvents(t, 2); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	// A process told to terminate that exits with the agent's own code keeps one event per cause.
	ref := h.ready(t, "sick", 7778)
	for i := 0; i < healthChecksMissed; i++ {
		if err := h.f.svc.HeartbeatServerProcess(h.f.ctx, ref, false); err != nil {
			t.Fatal(err)
		}
	}
	h.f.step(t)
	if err := h.f.svc.AgentProcessExited(h.f.ctx, h.fleet, "host-1", "sick",
		string(api.EventCodeServerProcessTerminatedUnhealthy)); err != nil {
		t.Fatal(err)
	}
	if got := h.lastEvents(t, 2); got[0] == got[1] {
		t.Errorf("events = %v: the termination was recorded twice", got)
	}
}

func TestDeleteFleetEndsProcesses(t *testing.T) {
	h := newHost(t)
	a := h.ready(t, "a", 7777)
	b := h.connect(t, "b")
	ok(h.f.h.DeleteFleet(h.f.ctx, &api.DeleteFleetInput{FleetId: api.String(h.fleet)}))(t)
	got := h.n.pushes()
	refs := []ProcessRef{got[0].Ref, got[1].Ref}
	if len(got) != 2 || !slices.Contains(refs, a) || !slices.Contains(refs, b) || !got[0].At.Equal(t0.Add(DefaultTerminationGracePeriod)) {
		t.Fatalf("pushes = %+v, want TerminateProcess to a and b", got)
	}
	if s := *h.f.attributes(t, h.fleet).Status; s != api.FleetStatusDeleting {
		t.Fatalf("status after DeleteFleet = %s", s)
	}
	_, err := h.f.h.DeleteFleet(h.f.ctx, &api.DeleteFleetInput{FleetId: api.String(h.fleet)})
	wantCode(t, err, api.InvalidFleetStatusException)
	wantCode(t, h.f.svc.AuthenticateProcess(h.f.ctx, h.ref("c"), h.token), api.InvalidFleetStatusException)
	if err := h.f.svc.ServerProcessEnding(h.f.ctx, a); err != nil {
		t.Fatal(err)
	}
	h.f.step(t)
	if s := *h.f.attributes(t, h.fleet).Status; s != api.FleetStatusDeleting {
		t.Fatalf("fleet is %s while process b still runs", s)
	}
	if err := h.f.svc.ServerProcessDisconnected(h.f.ctx, b); err != nil {
		t.Fatal(err)
	}
	h.f.clock.Advance(time.Second)
	h.f.step(t)
	attrs := h.f.attributes(t, h.fleet)
	if *attrs.Status != api.FleetStatusTerminated || !attrs.TerminationTime.Equal(t0.Add(time.Second)) {
		t.Errorf("after its processes ended the fleet is %s (terminated %v)", *attrs.Status, attrs.TerminationTime)
	}
	if got := h.lastEvents(t, 1); got[0] != "FLEET_DELETED" {
		t.Errorf("events = %v", got)
	}
	list := ok(h.f.h.ListFleets(h.f.ctx, &api.ListFleetsInput{}))(t)
	if len(list.FleetIds) != 0 {
		t.Errorf("ListFleets shows a TERMINATED fleet: %v", list.FleetIds)
	}
	_, err = h.f.h.DescribeCompute(h.f.ctx, &api.DescribeComputeInput{FleetId: api.String(h.fleet), ComputeName: api.String("host-1")})
	wantCode(t, err, api.NotFoundException)
	if len(h.n.pushes()) != 2 {
		t.Errorf("pushes = %d, want still 2", len(h.n.pushes()))
	}
}

func TestDeleteFleetGracePeriodEnds(t *testing.T) {
	h := newHost(t)
	h.ready(t, "stubborn", 7777)
	ok(h.f.h.DeleteFleet(h.f.ctx, &api.DeleteFleetInput{FleetId: api.String(h.fleet)}))(t)
	h.f.clock.Advance(DefaultTerminationGracePeriod - time.Second)
	h.f.step(t)
	if s := *h.f.attributes(t, h.fleet).Status; s != api.FleetStatusDeleting {
		t.Fatalf("fleet is %s before the grace period ended", s)
	}
	h.f.clock.Advance(time.Second)
	h.f.step(t)
	if s := *h.f.attributes(t, h.fleet).Status; s != api.FleetStatusTerminated || h.status(t, "stubborn") != processTerminated {
		t.Errorf("after the grace period: fleet %s, process %s", s, h.status(t, "stubborn"))
	}
	want := []string{"SERVER_PROCESS_FORCE_TERMINATED", "FLEET_DELETED"}
	if got := h.lastEvents(t, 2); !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	h.f.clock.Advance(processRetention + time.Second)
	h.f.step(t)
	if _, err := h.f.store.Get(h.f.ctx, kindProcess, processKey(h.fleet, "stubborn")); err == nil {
		t.Error("old TERMINATED process not purged")
	}
}

func TestMonitorRunSteps(t *testing.T) {
	h := newHost(t)
	h.connect(t, "slow")
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(h.f.ctx)
	go func() {
		h.f.svc.ProcessMonitor().Run(ctx, 10*time.Second, func(err error) { t.Error(err) })
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(h.n.pushes()) == 0 && time.Now().Before(deadline) {
		h.f.clock.Advance(10 * time.Second) // the ticker fires; Run steps
		runtime.Gosched()
	}
	cancel()
	<-done
	if len(h.n.pushes()) != 1 {
		t.Errorf("Run did not terminate the process that never called ProcessReady: %v", h.n.pushes())
	}
}

func TestAgentProcessReport(t *testing.T) {
	h := newHost(t)
	h.ready(t, "live", 7001)
	ended := h.ready(t, "ended", 7002)
	if err := h.f.svc.ServerProcessEnding(h.f.ctx, ended); err != nil {
		t.Fatal(err)
	}
	gone, unknown, err := h.f.svc.AgentProcessReport(h.f.ctx, h.fleet, "host-1", []string{"live", "ended", "never-connected"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gone, []string{"ended"}) || !slices.Equal(unknown, []string{"never-connected"}) {
		t.Errorf("report = ended %v, unknown %v; want [ended], [never-connected]", gone, unknown)
	}
	gone, _, _ = h.f.svc.AgentProcessReport(h.f.ctx, h.fleet, "host-2", []string{"ended"})
	if len(gone) != 0 {
		t.Errorf("another compute's report lists %v as ended", gone)
	}
}
