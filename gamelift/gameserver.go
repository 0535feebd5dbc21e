package gamelift

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// ClaimDuration is how long ClaimGameServer reserves a game server: 60 seconds, fixed by
// GameLift (ClaimGameServer and GameServer.ClaimStatus docs).
const ClaimDuration = 60 * time.Second

// Game server instance statuses as stored.
const (
	instanceActive          = string(api.GameServerInstanceStatusActive)
	instanceDraining        = string(api.GameServerInstanceStatusDraining)
	instanceSpotTerminating = string(api.GameServerInstanceStatusSpotTerminating)
)

// serverDoc is a game server as stored.
type serverDoc struct {
	Group      string `json:"g"`
	ID         string `json:"id"`
	Instance   string `json:"i"`
	Conn       string `json:"c,omitempty"`
	Data       string `json:"d,omitempty"`
	Claimed    int64  `json:"cl,omitempty"` // last claim, Unix ms; 0 if never claimed
	Utilized   bool   `json:"u,omitempty"`
	Registered int64  `json:"r"`
	Health     int64  `json:"h,omitempty"` // last HEALTHY report, Unix ms
}

// claimedAt reports whether d is CLAIMED at now (Unix ms): claimed less than ClaimDuration
// ago. Computed on every read, so a lapsed claim needs no loop to end it.
func (d *serverDoc) claimedAt(now int64) bool { return claimedAt(d.Claimed, now) }

// claimedAt reports whether a game server last claimed at claimed (Unix ms, 0 for never) is
// CLAIMED at now.
func claimedAt(claimed, now int64) bool {
	return claimed != 0 && now-claimed < ClaimDuration.Milliseconds()
}

// instanceDoc is a host of a group: created by the first game server that registers on it.
type instanceDoc struct {
	Group    string `json:"g"`
	ID       string `json:"id"`
	Status   string `json:"st"`
	Servers  int    `json:"n"` // registered game servers
	Utilized int    `json:"u"` // of which UTILIZED
}

func instanceKey(group, instance string) string { return group + "/" + instance }

// serverOut is an api.GameServer together with the values its pointer fields point to, so
// that building one is a single allocation (apiServer answers every claim).
type serverOut struct {
	gs                                   api.GameServer
	group, arn, id, instance, conn, data string
	util                                 api.GameServerUtilizationStatus
	claim                                api.GameServerClaimStatus
	registered, claimed, health          api.Timestamp
}

func (s *Service) apiServer(d *serverDoc, now int64) *api.GameServer {
	o := &serverOut{group: d.Group, arn: s.arn(arnGameServerGroup, d.Group), id: d.ID, instance: d.Instance,
		conn: d.Conn, data: d.Data, util: api.GameServerUtilizationStatusAvailable, registered: stampValue(d.Registered)}
	if d.Utilized {
		o.util = api.GameServerUtilizationStatusUtilized
	}
	o.gs = api.GameServer{GameServerGroupName: &o.group, GameServerGroupArn: &o.arn, GameServerId: &o.id,
		InstanceId: &o.instance, UtilizationStatus: &o.util, RegistrationTime: &o.registered}
	if d.Conn != "" {
		o.gs.ConnectionInfo = &o.conn
	}
	if d.Data != "" {
		o.gs.GameServerData = &o.data
	}
	if d.claimedAt(now) {
		o.claim = api.GameServerClaimStatusClaimed
		o.gs.ClaimStatus = &o.claim
	}
	if d.Claimed != 0 {
		o.claimed = stampValue(d.Claimed)
		o.gs.LastClaimTime = &o.claimed
	}
	if d.Health != 0 {
		o.health = stampValue(d.Health)
		o.gs.LastHealthCheckTime = &o.health
	}
	return &o.gs
}

// stampValue is *stamp(ms), built as api.Time builds it but without the allocation.
func stampValue(ms int64) api.Timestamp {
	return api.Timestamp{Time: time.UnixMilli(ms).UTC().Truncate(time.Millisecond)}
}

func serverNotFound(group, id string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Game server %s not found in game server group %s.", id, group)
	}
}

// getServer reads game server id of group in tx; a server of another group is not found.
func getServer(tx store.Tx, group, id string) (*store.Record, *serverDoc, error) {
	var d serverDoc
	rec, err := getDoc(tx, kindGameServer, id, &d, serverNotFound(group, id))
	if err == nil && rec.Parent != group {
		err = serverNotFound(group, id)()
	}
	return rec, &d, err
}

// RegisterGameServer adds an AVAILABLE game server on an instance of an ACTIVE group. The
// first registration from an instance makes it one of the group's instances (ACTIVE).
func (s *Service) RegisterGameServer(ctx context.Context, in *api.RegisterGameServerInput) (*api.RegisterGameServerOutput, error) {
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	now := s.nowMillis()
	d := &serverDoc{Group: group, ID: api.Deref(in.GameServerId), Instance: api.Deref(in.InstanceId),
		Conn: api.Deref(in.ConnectionInfo), Data: api.Deref(in.GameServerData), Registered: now}
	err = s.update(ctx, func(tx store.Tx) error { return s.register(tx, d) })
	if err != nil {
		return nil, err
	}
	s.placements().invalidate(group)
	return &api.RegisterGameServerOutput{GameServer: s.apiServer(d, now)}, nil
}

func (s *Service) register(tx store.Tx, d *serverDoc) error {
	var g groupDoc
	if _, err := getDoc(tx, kindGameServerGroup, d.Group, &g, groupNotFound(api.InvalidRequestException, d.Group)); err != nil {
		return err
	}
	if g.Status != groupActive {
		return api.Errorf(api.InvalidRequestException,
			"Game server group %s is in status %s; game servers can register only while it is ACTIVE.", d.Group, g.Status)
	}
	err := s.editInstance(tx, d.Group, d.Instance, true, func(inst *instanceDoc) error {
		if inst.Status != instanceActive {
			return api.Errorf(api.ConflictException,
				"Instance %s is %s; no new game servers can register on it.", d.Instance, inst.Status)
		}
		inst.Servers++
		return nil
	})
	if err != nil {
		return err
	}
	data, err := jsonOf(d)
	if err != nil {
		return err
	}
	err = tx.Insert(&store.Record{Kind: kindGameServer, ID: d.ID, Parent: d.Group, Data: data})
	if errors.Is(err, store.ErrExists) {
		return api.Errorf(api.ConflictException, "A game server with ID %s is already registered.", d.ID)
	}
	if err != nil {
		return err
	}
	return tx.Insert(&store.Record{Kind: kindGameServerSlot, ID: d.ID, Parent: slotParent(d.Group, d.Instance)})
}

// editInstance applies edit to an instance record; create makes a missing one ACTIVE first.
func (s *Service) editInstance(tx store.Tx, group, instance string, create bool, edit func(*instanceDoc) error) error {
	var inst instanceDoc
	key := instanceKey(group, instance)
	rec, err := getDoc(tx, kindGameServerInstance, key, &inst, func() error { return store.ErrNotFound })
	if errors.Is(err, store.ErrNotFound) && create {
		inst = instanceDoc{Group: group, ID: instance, Status: instanceActive}
		rec = &store.Record{Kind: kindGameServerInstance, ID: key, Parent: group}
	} else if errors.Is(err, store.ErrNotFound) {
		return api.Errorf(api.NotFoundException, "Instance %s not found in game server group %s.", instance, group)
	} else if err != nil {
		return err
	}
	if err := edit(&inst); err != nil {
		return err
	}
	data, err := jsonOf(&inst)
	if err != nil {
		return err
	}
	rec.Data = data
	if rec.Version == 0 {
		return tx.Insert(rec)
	}
	return tx.Put(rec)
}

// DescribeGameServer returns one game server; its ClaimStatus is computed at the clock's now.
func (s *Service) DescribeGameServer(ctx context.Context, in *api.DescribeGameServerInput) (*api.DescribeGameServerOutput, error) {
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	id := api.Deref(in.GameServerId)
	rec, err := s.store.Get(ctx, kindGameServer, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && rec.Parent != group) {
		return nil, serverNotFound(group, id)()
	}
	if err != nil {
		return nil, err
	}
	var d serverDoc
	if err := jsonInto(rec.Data, &d); err != nil {
		return nil, err
	}
	return &api.DescribeGameServerOutput{GameServer: s.apiServer(&d, s.nowMillis())}, nil
}

// UpdateGameServer changes utilization (AVAILABLE -> UTILIZED only), records a health check
// and/or replaces GameServerData.
func (s *Service) UpdateGameServer(ctx context.Context, in *api.UpdateGameServerInput) (*api.UpdateGameServerOutput, error) {
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	id, now := api.Deref(in.GameServerId), s.nowMillis()
	var d *serverDoc
	var utilized bool
	err = s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := getServer(tx, group, id)
		if err != nil {
			return err
		}
		d = doc
		if utilized, err = s.applyServerUpdate(tx, d, in, now); err != nil {
			return err
		}
		return putDoc(tx, rec, d)
	})
	if err != nil {
		return nil, err
	}
	if utilized {
		s.placements().invalidate(group)
	}
	return &api.UpdateGameServerOutput{GameServer: s.apiServer(d, now)}, nil
}

// applyServerUpdate edits d per in; it reports whether d became UTILIZED, which takes it out
// of the claimable slots and counts it on its instance.
func (s *Service) applyServerUpdate(tx store.Tx, d *serverDoc, in *api.UpdateGameServerInput, now int64) (bool, error) {
	became := false
	switch api.Deref(in.UtilizationStatus) {
	case api.GameServerUtilizationStatusAvailable:
		if d.Utilized {
			return false, api.Errorf(api.InvalidRequestException,
				"Game server %s is UTILIZED; its utilization status cannot go back to AVAILABLE.", d.ID)
		}
	case api.GameServerUtilizationStatusUtilized:
		if !d.Utilized {
			became, d.Utilized = true, true
			if err := deleteSlot(tx, d.ID); err != nil {
				return false, err
			}
			err := s.editInstance(tx, d.Group, d.Instance, false, func(i *instanceDoc) error { i.Utilized++; return nil })
			if err != nil {
				return false, err
			}
		}
	}
	if in.HealthCheck != nil {
		d.Health = now
	}
	if in.GameServerData != nil {
		d.Data = *in.GameServerData
	}
	return became, nil
}

// deleteSlot removes a game server's claimable marker if it has one.
func deleteSlot(tx store.Tx, id string) error {
	if err := tx.Delete(kindGameServerSlot, id); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// DeregisterGameServer removes a game server from its group.
func (s *Service) DeregisterGameServer(ctx context.Context, in *api.DeregisterGameServerInput) (*api.DeregisterGameServerOutput, error) {
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	if err := s.deregister(ctx, group, api.Deref(in.GameServerId)); err != nil {
		return nil, err
	}
	return &api.DeregisterGameServerOutput{}, nil
}

// deregister removes game server id of group, its slot, and its count on its instance.
func (s *Service) deregister(ctx context.Context, group, id string) error {
	err := s.update(ctx, func(tx store.Tx) error {
		_, d, err := getServer(tx, group, id)
		if err != nil {
			return err
		}
		if err := tx.Delete(kindGameServer, id); err != nil {
			return err
		}
		if err := deleteSlot(tx, id); err != nil {
			return err
		}
		err = s.editInstance(tx, group, d.Instance, false, func(i *instanceDoc) error {
			i.Servers--
			if d.Utilized {
				i.Utilized--
			}
			return nil
		})
		if errors.Is(err, store.ErrNotFound) || isCode(err, api.NotFoundException) {
			return nil // the instance went with its group
		}
		return err
	})
	if err == nil {
		s.placements().invalidate(group)
	}
	return err
}

func isCode(err error, code api.ErrorCode) bool {
	var ae *api.Error
	return errors.As(err, &ae) && ae.Code == code
}

// ListGameServers lists a group's game servers: ASCENDING (also the default) is registration
// order, oldest first; DESCENDING is newest first.
func (s *Service) ListGameServers(ctx context.Context, in *api.ListGameServersInput) (*api.ListGameServersOutput, error) {
	g, err := s.readGroup(ctx, in.GameServerGroupName, api.InvalidRequestException)
	if err != nil {
		return nil, err
	}
	desc := api.Deref(in.SortOrder) == api.SortOrderDescending
	hash := filterHash("ListGameServers", g.Name, string(api.Deref(in.SortOrder)))
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var recs []*store.Record
	var more bool
	limit := pageSize(in.Limit)
	err = s.view(ctx, func(tx store.Tx) error {
		if desc {
			recs, more, err = listDescending(tx, kindGameServer, g.Name, cursor, limit)
		} else {
			recs, err = tx.List(kindGameServer, store.ListOptions{Parent: g.Name, AfterSeq: max(cursor, 0), Limit: limit + 1})
			more = len(recs) > limit
			recs = recs[:min(len(recs), limit)]
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s.serverPage(recs, more, hash)
}

// listDescending returns up to limit records of parent with Seq below cursor (any, when
// cursor is startCursor), newest first. The store pages only forward, so this reads the
// group's records; listing newest-first is rare next to claims.
func listDescending(tx store.Tx, kind, parent string, cursor int64, limit int) ([]*store.Record, bool, error) {
	all, err := tx.List(kind, store.ListOptions{Parent: parent})
	if err != nil {
		return nil, false, err
	}
	if cursor != startCursor {
		all = slices.DeleteFunc(all, func(r *store.Record) bool { return r.Seq >= cursor })
	}
	slices.Reverse(all)
	return all[:min(len(all), limit)], len(all) > limit, nil
}

func (s *Service) serverPage(recs []*store.Record, more bool, hash string) (*api.ListGameServersOutput, error) {
	now := s.nowMillis()
	out := &api.ListGameServersOutput{GameServers: make([]api.GameServer, len(recs))}
	for i, r := range recs {
		var d serverDoc
		if err := jsonInto(r.Data, &d); err != nil {
			return nil, err
		}
		out.GameServers[i] = *s.apiServer(&d, now)
	}
	if more && len(recs) > 0 {
		out.NextToken = encodeToken(recs[len(recs)-1].Seq, hash)
	}
	return out, nil
}

// DescribeGameServerInstances lists a group's instances and their statuses, optionally only
// the given instance IDs.
func (s *Service) DescribeGameServerInstances(ctx context.Context, in *api.DescribeGameServerInstancesInput) (*api.DescribeGameServerInstancesOutput, error) {
	g, err := s.readGroup(ctx, in.GameServerGroupName, api.NotFoundException)
	if err != nil {
		return nil, err
	}
	ids := slices.Sorted(slices.Values(in.InstanceIds))
	hash := filterHash("DescribeGameServerInstances", append([]string{g.Name}, ids...)...)
	cursor, err := decodeToken(in.NextToken, hash)
	if err != nil {
		return nil, err
	}
	var page scanned[instanceDoc]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scanChildren(tx, kindGameServerInstance, g.Name, cursor, pageSize(in.Limit), func(d *instanceDoc) bool {
			return len(ids) == 0 || slices.Contains(ids, d.ID)
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	out := &api.DescribeGameServerInstancesOutput{GameServerInstances: make([]api.GameServerInstance, len(page.Items)), NextToken: next(page, hash)}
	for i, d := range page.Items {
		out.GameServerInstances[i] = s.apiInstance(d)
	}
	return out, nil
}

func (s *Service) apiInstance(d *instanceDoc) api.GameServerInstance {
	st := api.GameServerInstanceStatus(d.Status)
	return api.GameServerInstance{
		GameServerGroupName: api.String(d.Group),
		GameServerGroupArn:  api.String(s.arn(arnGameServerGroup, d.Group)),
		InstanceId:          api.String(d.ID),
		InstanceStatus:      &st,
	}
}
