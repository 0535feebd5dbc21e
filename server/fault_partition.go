package server

import (
	"net/http"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws"
)

// maxPartition bounds a ComputePartition's duration (a day).
const maxPartition = 24 * time.Hour

// partitions are the computes this node refuses websockets from until a time on its clock
// (ComputePartition). They live in this node's memory only: dev mode is one node.
type partitions struct {
	clock clock.Clock
	mu    sync.Mutex
	until map[sdkws.ComputeRef]time.Time
}

// cut refuses ref's websockets until until.
func (p *partitions) cut(ref sdkws.ComputeRef, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.until == nil {
		p.until = map[sdkws.ComputeRef]time.Time{}
	}
	p.until[ref] = until
}

// refuse returns the refusal of a websocket from ref while it is partitioned, else nil: a
// 403, the status the SDK endpoint refuses a connection with (a real partition would fail
// before HTTP; the Go serversdk retries either with its backoff).
func (p *partitions) refuse(ref sdkws.ComputeRef) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	until, ok := p.until[ref]
	if !ok {
		return nil
	}
	if !p.clock.Now().Before(until) {
		delete(p.until, ref)
		return nil
	}
	return &sdkws.Error{Status: http.StatusForbidden,
		Message: "Compute " + ref.ComputeName + " is partitioned (a fault injected with Hoist.InjectFault) until " + until.UTC().Format(time.RFC3339) + "."}
}

// partitionCompute cuts the compute's websockets and refuses new ones for in.Seconds.
func (s *Server) partitionCompute(in *InjectFaultInput) (*InjectFaultOutput, error) {
	if in.FleetId == "" || in.ComputeName == "" {
		return nil, api.Errorf(api.InvalidRequestException, "ComputePartition needs FleetId and ComputeName.")
	}
	if !(in.Seconds > 0 && in.Seconds <= maxPartition.Seconds()) {
		return nil, api.Errorf(api.InvalidRequestException, "Seconds must be more than 0 and at most %.0f.", maxPartition.Seconds())
	}
	ref := sdkws.ComputeRef{FleetID: in.FleetId, ComputeName: in.ComputeName}
	until := s.cfg.Clock.Now().Add(time.Duration(in.Seconds * float64(time.Second)))
	s.parts.cut(ref, until)
	n := s.hub.CutCompute(ref)
	s.log.Info("fault injected: compute partition", "fleet", in.FleetId, "compute", in.ComputeName, "sockets", n, "until", until)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: in.FleetId, ComputeName: in.ComputeName,
		Until: until.UTC().Format(time.RFC3339Nano)}, nil
}
