package server

import (
	"context"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// interruptInstance gives the instance its spot interruption notice in the store, then loses
// it when the notice runs out on the server's clock (virtual time moves that too). The pending
// loss is kept in this node's memory only: dev mode is one node, and a restart forgets it.
// With GameServerGroupName the instance is a FleetIQ game server group's (interruptGroupInstance).
func (s *Server) interruptInstance(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	switch {
	case in.GameServerGroupName != "":
		return s.interruptGroupInstance(ctx, in)
	case in.FleetId != "" && in.ComputeName != "":
		return s.interruptCompute(ctx, in)
	case in.FleetId == "" || in.InstanceId == "":
		return nil, api.Errorf(api.InvalidRequestException,
			"SpotInterruption needs FleetId and InstanceId, FleetId and ComputeName (a hoist agent's compute), or GameServerGroupName and InstanceId.")
	}
	at, err := s.svc.InterruptInstance(ctx, in.FleetId, in.InstanceId)
	if err != nil {
		return nil, err
	}
	go s.reclaimAt(at.Sub(s.cfg.Clock.Now()), func() error {
		_, err := s.loseInstance(context.Background(), &InjectFaultInput{Kind: FaultInstanceLoss, FleetId: in.FleetId, InstanceId: in.InstanceId})
		return err
	})
	s.log.Info("fault injected: spot interruption", "fleet", in.FleetId, "instance", in.InstanceId, "reclaimed_at", at)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: in.FleetId, InstanceId: in.InstanceId,
		Until: at.UTC().Format(time.RFC3339Nano)}, nil
}

// interruptGroupInstance makes a FleetIQ instance SPOT_TERMINATING, then reclaims it (its game
// servers deregistered, the instance gone from the group) when the notice runs out.
func (s *Server) interruptGroupInstance(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	if in.InstanceId == "" {
		return nil, api.Errorf(api.InvalidRequestException, "SpotInterruption needs InstanceId.")
	}
	group, at, err := s.svc.InterruptGameServerInstance(ctx, in.GameServerGroupName, in.InstanceId)
	if err != nil {
		return nil, err
	}
	go s.reclaimAt(at.Sub(s.cfg.Clock.Now()), func() error {
		return s.svc.ReclaimGameServerInstance(context.Background(), group, in.InstanceId)
	})
	s.log.Info("fault injected: spot interruption", "group", group, "instance", in.InstanceId, "reclaimed_at", at)
	return &InjectFaultOutput{Kind: in.Kind, GameServerGroupName: group, InstanceId: in.InstanceId,
		Until: at.UTC().Format(time.RFC3339Nano)}, nil
}

// interruptCompute gives an Anywhere compute run by a hoist agent the notice, then reclaims
// it when the notice runs out: it is deregistered, so its agent stops its processes and exits.
func (s *Server) interruptCompute(ctx context.Context, in *InjectFaultInput) (*InjectFaultOutput, error) {
	at, err := s.svc.InterruptCompute(ctx, in.FleetId, in.ComputeName)
	if err != nil {
		return nil, err
	}
	fleet, compute := in.FleetId, in.ComputeName
	go s.reclaimAt(at.Sub(s.cfg.Clock.Now()), func() error {
		_, err := s.svc.DeregisterCompute(context.Background(), &api.DeregisterComputeInput{FleetId: &fleet, ComputeName: &compute})
		return err
	})
	s.log.Info("fault injected: spot interruption", "fleet", fleet, "compute", compute, "reclaimed_at", at)
	return &InjectFaultOutput{Kind: in.Kind, FleetId: fleet, ComputeName: compute, Until: at.UTC().Format(time.RFC3339Nano)}, nil
}

// reclaimAt runs reclaim, which takes the interrupted instance away, after d.
func (s *Server) reclaimAt(d time.Duration, reclaim func() error) {
	<-s.cfg.Clock.After(d)
	if err := reclaim(); err != nil {
		s.log.Warn("spot interruption: reclaiming the instance failed", "err", err)
	}
}
