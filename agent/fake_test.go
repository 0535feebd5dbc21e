package agent

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/internal/clock"
)

// fakeControlPlane answers the API calls from memory and dials the real websocket client
// against the test's websocket server.
type fakeControlPlane struct {
	clk           clock.Clock
	agentEndpoint string

	mu           sync.Mutex
	registerErrs []error // returned by successive RegisterCompute calls before succeeding
	registers    int
	describes    int
	deregisters  int
	registered   bool
	tokenN       int
	tokenTTL     time.Duration
	config       []supervisor.ServerProcess
}

var _ ControlPlane = (*fakeControlPlane)(nil)

func (f *fakeControlPlane) reg() Registration {
	return Registration{SdkEndpoint: "wss://sdk.hoist.test/", AgentEndpoint: f.agentEndpoint, Status: "Active"}
}

func (f *fakeControlPlane) RegisterCompute(ctx context.Context, c Compute) (Registration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registers++
	if len(f.registerErrs) > 0 {
		err := f.registerErrs[0]
		f.registerErrs = f.registerErrs[1:]
		return Registration{}, err
	}
	f.registered = true
	return f.reg(), nil
}

func (f *fakeControlPlane) DescribeCompute(ctx context.Context, fleetID, computeName string) (Registration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.describes++
	return f.reg(), nil
}

func (f *fakeControlPlane) GetComputeAuthToken(ctx context.Context, fleetID, computeName string) (Token, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.registered {
		return Token{}, fmt.Errorf("GetComputeAuthToken: %w", ErrNotFound)
	}
	f.tokenN++
	ttl := f.tokenTTL
	if ttl == 0 {
		ttl = time.Hour
	}
	return Token{Value: fmt.Sprintf("token-%d", f.tokenN), Expires: f.clk.Now().Add(ttl)}, nil
}

func (f *fakeControlPlane) DescribeRuntimeConfiguration(ctx context.Context, fleetID string) (RuntimeConfiguration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return RuntimeConfiguration{ServerProcesses: append([]supervisor.ServerProcess(nil), f.config...)}, nil
}

func (f *fakeControlPlane) DeregisterCompute(ctx context.Context, fleetID, computeName string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deregisters++
	f.registered = false
	return nil
}

func (f *fakeControlPlane) Connect(ctx context.Context, p LinkParams, onMessage func(Message)) (Link, error) {
	return DialLink(ctx, p, onMessage, nil)
}

// forget makes the control plane lose the compute, as a restarted server without it would.
func (f *fakeControlPlane) forget() {
	f.mu.Lock()
	f.registered = false
	f.mu.Unlock()
}

func (f *fakeControlPlane) setConfig(c []supervisor.ServerProcess) {
	f.mu.Lock()
	f.config = c
	f.mu.Unlock()
}

func (f *fakeControlPlane) counts() (registers, describes, deregisters int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registers, f.describes, f.deregisters
}
