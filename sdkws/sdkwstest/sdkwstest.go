// Package sdkwstest has a recording fake of the sdkws Backend interfaces for tests: every call
// becomes an Event on a channel, and fields choose the answers. Tests of sdkws, serversdk and
// the example game server import it; production code does not.
package sdkwstest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// Event is one Backend call: the method name, the process or compute, and the request.
type Event struct {
	Method  string
	Process sdkws.ProcessRef
	Compute sdkws.ComputeRef
	Request any
}

// String renders "Method pid" for quick comparisons.
func (e Event) String() string { return e.Method + " " + e.Process.ProcessID }

// Backend implements sdkws.Backend, sdkws.GameSessionBackend and sdkws.AgentBackend. The
// zero value accepts the token "good" and answers everything successfully.
type Backend struct {
	// Token is the accepted auth token; "" means "good".
	Token string
	// Fail, when it returns an error for a method name, makes that call fail with it. Set it
	// before the first call, or use SetFail while calls may run.
	Fail func(method string) error
	// Events receives every call when not nil (sends block; give it a buffer).
	Events chan Event

	mu      sync.Mutex
	log     []Event
	backlog []Event
}

var (
	_ sdkws.Backend            = (*Backend)(nil)
	_ sdkws.GameSessionBackend = (*Backend)(nil)
	_ sdkws.AgentBackend       = (*Backend)(nil)
)

func (b *Backend) record(method string, p sdkws.ProcessRef, c sdkws.ComputeRef, req any) error {
	e := Event{Method: method, Process: p, Compute: c, Request: req}
	b.mu.Lock()
	b.log = append(b.log, e)
	fail := b.Fail
	b.mu.Unlock()
	if b.Events != nil {
		b.Events <- e
	}
	if fail != nil {
		return fail(method)
	}
	return nil
}

// SetFail replaces Fail safely while calls may be running.
func (b *Backend) SetFail(f func(method string) error) {
	b.mu.Lock()
	b.Fail = f
	b.mu.Unlock()
}

// Log returns every call so far.
func (b *Backend) Log() []Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Event(nil), b.log...)
}

// Wait returns the first event for method not yet returned by Wait, failing after d of real
// time (this waits on a real socket's effects, so it is a deadline, not a sleep). Events for
// other methods are kept for later Waits, so the order of unrelated calls does not matter.
func (b *Backend) Wait(method string, d time.Duration) (Event, error) {
	if e, ok := b.takeBacklog(method); ok {
		return e, nil
	}
	deadline := time.After(d)
	for {
		select {
		case e := <-b.Events:
			if e.Method == method {
				return e, nil
			}
			b.mu.Lock()
			b.backlog = append(b.backlog, e)
			b.mu.Unlock()
		case <-deadline:
			return Event{}, fmt.Errorf("no %s within %s", method, d)
		}
	}
}

func (b *Backend) takeBacklog(method string) (Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, e := range b.backlog {
		if e.Method == method {
			b.backlog = append(b.backlog[:i], b.backlog[i+1:]...)
			return e, true
		}
	}
	return Event{}, false
}

func (b *Backend) token() string {
	if b.Token == "" {
		return "good"
	}
	return b.Token
}

// AuthenticateProcess accepts the token (or any verified SigV4 key).
func (b *Backend) AuthenticateProcess(_ context.Context, req sdkws.ConnectRequest) error {
	if err := b.record("AuthenticateProcess", req.ProcessRef, sdkws.ComputeRef{}, req); err != nil {
		return err
	}
	if req.AccessKeyID == "" && req.AuthToken != b.token() {
		return sdkws.Errorf(403, "bad token")
	}
	return nil
}

// ActivateServerProcess records the call.
func (b *Backend) ActivateServerProcess(_ context.Context, ref sdkws.ProcessRef, req message.ActivateServerProcess) error {
	return b.record("ActivateServerProcess", ref, sdkws.ComputeRef{}, req)
}

// Heartbeat records the call; Request is the health bool.
func (b *Backend) Heartbeat(_ context.Context, ref sdkws.ProcessRef, healthy bool) error {
	return b.record("Heartbeat", ref, sdkws.ComputeRef{}, healthy)
}

// ProcessEnding records the call.
func (b *Backend) ProcessEnding(_ context.Context, ref sdkws.ProcessRef) error {
	return b.record("ProcessEnding", ref, sdkws.ComputeRef{}, nil)
}

// Disconnected records the call.
func (b *Backend) Disconnected(_ context.Context, ref sdkws.ProcessRef) error {
	return b.record("Disconnected", ref, sdkws.ComputeRef{}, nil)
}

// GetComputeCertificate answers a path under /hoist.
func (b *Backend) GetComputeCertificate(_ context.Context, ref sdkws.ProcessRef) (message.GetComputeCertificateResult, error) {
	err := b.record("GetComputeCertificate", ref, sdkws.ComputeRef{}, nil)
	return message.GetComputeCertificateResult{CertificatePath: "/hoist/cert.pem", ComputeName: ref.ComputeName}, err
}

// GetFleetRoleCredentials answers no credentials (an Anywhere compute).
func (b *Backend) GetFleetRoleCredentials(_ context.Context, ref sdkws.ProcessRef, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
	return message.FleetRoleCredentials{}, b.record("GetFleetRoleCredentials", ref, sdkws.ComputeRef{}, req)
}

// ActivateGameSession records the call.
func (b *Backend) ActivateGameSession(_ context.Context, ref sdkws.ProcessRef, req message.ActivateGameSession) error {
	return b.record("ActivateGameSession", ref, sdkws.ComputeRef{}, req)
}

// AcceptPlayerSession records the call.
func (b *Backend) AcceptPlayerSession(_ context.Context, ref sdkws.ProcessRef, req message.AcceptPlayerSession) error {
	return b.record("AcceptPlayerSession", ref, sdkws.ComputeRef{}, req)
}

// RemovePlayerSession records the call.
func (b *Backend) RemovePlayerSession(_ context.Context, ref sdkws.ProcessRef, req message.RemovePlayerSession) error {
	return b.record("RemovePlayerSession", ref, sdkws.ComputeRef{}, req)
}

// UpdatePlayerSessionCreationPolicy records the call.
func (b *Backend) UpdatePlayerSessionCreationPolicy(_ context.Context, ref sdkws.ProcessRef, req message.UpdatePlayerSessionCreationPolicy) error {
	return b.record("UpdatePlayerSessionCreationPolicy", ref, sdkws.ComputeRef{}, req)
}

// DescribePlayerSessions answers one ACTIVE player session.
func (b *Backend) DescribePlayerSessions(_ context.Context, ref sdkws.ProcessRef, req message.DescribePlayerSessions) (message.DescribePlayerSessionsResult, error) {
	err := b.record("DescribePlayerSessions", ref, sdkws.ComputeRef{}, req)
	return message.DescribePlayerSessionsResult{PlayerSessions: []message.PlayerSession{{
		PlayerSessionID: "psess-1", PlayerID: "player-1", GameSessionID: req.GameSessionID, Status: "ACTIVE", CreationTime: 1700000000000,
	}}}, err
}

// StartMatchBackfill answers the ticket ID it was given, or "ticket-1".
func (b *Backend) StartMatchBackfill(_ context.Context, ref sdkws.ProcessRef, req message.StartMatchBackfill) (message.StartMatchBackfillResult, error) {
	err := b.record("StartMatchBackfill", ref, sdkws.ComputeRef{}, req)
	id := req.TicketID
	if id == "" {
		id = "ticket-1"
	}
	return message.StartMatchBackfillResult{TicketID: id}, err
}

// StopMatchBackfill records the call.
func (b *Backend) StopMatchBackfill(_ context.Context, ref sdkws.ProcessRef, req message.StopMatchBackfill) error {
	return b.record("StopMatchBackfill", ref, sdkws.ComputeRef{}, req)
}

// AuthenticateAgent accepts the token.
func (b *Backend) AuthenticateAgent(_ context.Context, ref sdkws.ComputeRef, token string) error {
	if err := b.record("AuthenticateAgent", sdkws.ProcessRef{}, ref, token); err != nil {
		return err
	}
	if token != b.token() {
		return sdkws.Errorf(403, "bad token")
	}
	return nil
}

// AgentHeartbeat answers Active and no unhealthy processes.
func (b *Backend) AgentHeartbeat(_ context.Context, ref sdkws.ComputeRef, req message.SendHeartbeat) (message.SendHeartbeatResult, error) {
	err := b.record("AgentHeartbeat", sdkws.ProcessRef{}, ref, req)
	return message.SendHeartbeatResult{Status: "Active", UnhealthyProcesses: []string{}, UnregisteredProcesses: []string{}}, err
}

// AgentRuntimeConfiguration answers one launch line.
func (b *Backend) AgentRuntimeConfiguration(_ context.Context, ref sdkws.ComputeRef) (message.RuntimeConfiguration, error) {
	err := b.record("AgentRuntimeConfiguration", sdkws.ProcessRef{}, ref, nil)
	return message.RuntimeConfiguration{ServerProcesses: []message.ServerProcess{{LaunchPath: "/local/game/server", ConcurrentExecutions: 1}}}, err
}

// AgentProcessTerminated records the call.
func (b *Backend) AgentProcessTerminated(_ context.Context, ref sdkws.ComputeRef, req message.NotifyServerProcessTermination) error {
	return b.record("AgentProcessTerminated", sdkws.ProcessRef{}, ref, req)
}

// AgentFleetRoleCredentials answers no credentials.
func (b *Backend) AgentFleetRoleCredentials(_ context.Context, ref sdkws.ComputeRef, req message.GetFleetRoleCredentials) (message.FleetRoleCredentials, error) {
	return message.FleetRoleCredentials{}, b.record("AgentFleetRoleCredentials", sdkws.ProcessRef{}, ref, req)
}

// AgentDisconnected records the call.
func (b *Backend) AgentDisconnected(_ context.Context, ref sdkws.ComputeRef) error {
	return b.record("AgentDisconnected", sdkws.ProcessRef{}, ref, nil)
}

// JSON marshals v or panics; a convenience for building frames in tests.
func JSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
