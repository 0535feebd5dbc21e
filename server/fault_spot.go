package server

import (
	"context"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// interruptInstance gives the instance its spot interruption notice in the store, then loses
// it when the notice runs out on the server's clock (virtual time moves that too). The pending
// loss is kept in this node's memory only: dev mode is one node, and a restart forgets it.
func (s *Server) interruptInstance(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	if in.FleetId == "" || in.InstanceId == "" {
		return nil, api.Errorf(api.InvalidRequestException, "SpotInterruption needs FleetId and InstanceId.")
	}
	at, err := s.svc.InterruptInstance(ctx, in.FleetId, in.InstanceId)
	if err != nil {
		return nil, err
	}
	go s.reclaimAt(in.FleetId, in.InstanceId, at.Sub(s.cfg.Clock.Now()))
	s.log.Info("fault injected: spot interruption", "fleet", in.FleetId, "instance", in.InstanceId, "reclaimed_at", at)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: in.FleetId, InstanceId: in.InstanceId,
		Until: at.UTC().Format(time.RFC3339Nano)}, nil
}

// reclaimAt loses the interrupted instance after d, as InstanceLoss does.
func (s *Server) reclaimAt(fleetID, instanceID string, d time.Duration) {
	<-s.cfg.Clock.After(d)
	_, err := s.loseInstance(context.Background(), &InjectFaultInput{Kind: FaultInstanceLoss, FleetId: fleetID, InstanceId: instanceID})
	if err != nil {
		s.log.Warn("spot interruption: losing the instance failed", "fleet", fleetID, "instance", instanceID, "err", err)
	}
}
