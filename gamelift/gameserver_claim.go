package gamelift

import (
	"context"
	"math/rand/v2"
	"slices"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Claims.
//
// Every game server that is neither UTILIZED nor deregistered has one slot record (kind
// kindGameServerSlot, ID = game server ID) under "<group>/<instance>/free" (slotParent), so
// that an instance's slot list is in registration order (store Seq order). A claim does not
// touch the slot: whether a game server is claimable (not UTILIZED, not CLAIMED at now) is in
// its own record, and a claim whose ClaimDuration has passed on the clock has lapsed without
// any write. A claimer therefore reads only an instance's slot list and the game servers it
// names (fleetiq_freepool.go), never the group's game servers.
//
// The slot list only nominates; the game server record decides. The claim transaction
// re-reads the game server and refuses it when it is UTILIZED or CLAIMED at now, and writes
// it with compare-and-set (store.Tx.Put on the version read), so of two claimers of one game
// server one fails and picks again. That holds on every node of a shared PostgreSQL.
//
// Earlier versions moved a claimed game server's slot to "<group>/<instance>/claimed"
// (legacyClaimedParent); the FleetIQ loop moves such slots back (FleetIQLoop.moveLegacySlots).

const (
	// claimCandidates is how many slots of a list a claimer picks among at random, so that
	// concurrent claimers of one instance rarely pick the same game server.
	claimCandidates = 16
	// claimRounds bounds how often a group claim decides again after losing a race.
	claimRounds = 64
)

// slotParent is the Parent of the slots of an instance's game servers.
func slotParent(group, instance string) string { return group + "/" + instance + "/free" }

// legacyClaimedParent is where earlier versions kept the slots of an instance's claimed game
// servers.
func legacyClaimedParent(group, instance string) string { return group + "/" + instance + "/claimed" }

// claimFilter turns a ClaimFilterOption into the instance statuses a claim may use: ACTIVE
// only by default; a given list must contain ACTIVE (ClaimFilterOption doc).
func claimFilter(f *api.ClaimFilterOption) (func(string) bool, error) {
	if f == nil || len(f.InstanceStatuses) == 0 {
		return func(st string) bool { return st == instanceActive }, nil
	}
	if !slices.Contains(f.InstanceStatuses, api.FilterInstanceStatus(instanceActive)) {
		return nil, api.Errorf(api.InvalidRequestException,
			"FilterOption.InstanceStatuses must contain ACTIVE.")
	}
	return func(st string) bool { return slices.Contains(f.InstanceStatuses, api.FilterInstanceStatus(st)) }, nil
}

// ClaimGameServer reserves a game server for ClaimDuration: the one named by GameServerId, or
// the one FleetIQ placement picks (fleetiq_placement.go). It answers OutOfCapacityException
// when the group has nothing to claim. The group's status is checked in the claim's
// transaction (commitClaim).
func (s *Service) ClaimGameServer(ctx context.Context, in *api.ClaimGameServerInput) (*api.ClaimGameServerOutput, error) {
	allowed, err := claimFilter(in.FilterOption)
	if err != nil {
		return nil, err
	}
	group, err := s.groupName(in.GameServerGroupName)
	if err != nil {
		return nil, err
	}
	var d *serverDoc
	if in.GameServerId != nil {
		d, err = s.claimSpecific(ctx, group, *in.GameServerId, allowed, in.GameServerData)
	} else {
		d, err = s.claimPlaced(ctx, group, allowed, in.GameServerData)
	}
	if err != nil {
		return nil, err
	}
	return &api.ClaimGameServerOutput{GameServer: s.apiServer(d, d.Claimed)}, nil
}

// groupClaimable refuses a claim in a group that is not ACTIVE.
func groupClaimable(group, status string) error {
	if status != groupActive {
		return api.Errorf(api.InvalidRequestException,
			"Game server group %s is in status %s; game servers can be claimed only while it is ACTIVE.", group, status)
	}
	return nil
}

// noCandidate is the answer of a group claim that found nothing to claim: the group's own
// state when it is missing or not ACTIVE, OutOfCapacityException otherwise.
func (s *Service) noCandidate(ctx context.Context, group string) error {
	_, status, err := s.groupStatus(ctx, &group, api.NotFoundException)
	if err == nil {
		err = groupClaimable(group, status)
	}
	if err == nil {
		err = api.Errorf(api.OutOfCapacityException, "Game server group %s has no game server available to claim.", group)
	}
	return err
}

// claimSpecific claims one named game server, or says why it cannot be claimed.
func (s *Service) claimSpecific(ctx context.Context, group, id string, allowed func(string) bool, data *string) (*serverDoc, error) {
	var d *serverDoc
	err := s.update(store.CompareAndSetOnly(ctx), func(tx store.Tx) error {
		var err error
		d, err = s.commitClaim(tx, group, id, allowed, data, s.nowMillis())
		return err
	})
	return d, err
}

// claimPlaced decides on a candidate from a snapshot, commits the claim, and decides again
// when another claimer won it. Before OutOfCapacityException it decides once from the store
// alone, without the node's placement hints.
func (s *Service) claimPlaced(ctx context.Context, group string, allowed func(string) bool, data *string) (*serverDoc, error) {
	fresh, conflicts := false, 0
	for range claimRounds {
		now := s.nowMillis()
		id, err := s.pickCandidate(ctx, group, allowed, now, fresh)
		if err != nil {
			return nil, err
		}
		if id == "" {
			if fresh {
				return nil, s.noCandidate(ctx, group)
			}
			fresh = true
			continue
		}
		d, err := s.claimReserved(ctx, group, id, allowed, data, now)
		if err == nil {
			return d, nil
		}
		if !isCode(err, api.ConflictException) && !isCode(err, api.NotFoundException) {
			return nil, err
		}
		// Repeated conflicts may mean a stale ranking (another node drained an instance this
		// node still ranks as ACTIVE): decide from a reloaded one.
		if conflicts++; conflicts%2 == 0 {
			s.placements().refresh(group)
		}
	}
	return nil, api.Errorf(api.InternalServiceException,
		"ClaimGameServer lost %d races in a row for game server group %s; try again.", claimRounds, group)
}

// claimReserved commits the claim of a game server that pickCandidate reserved on this node,
// then releases the reservation.
func (s *Service) claimReserved(ctx context.Context, group, id string, allowed func(string) bool, data *string, now int64) (*serverDoc, error) {
	defer s.placements().release(id)
	var d *serverDoc
	err := s.update(store.CompareAndSetOnly(ctx), func(tx store.Tx) error {
		var err error
		d, err = s.commitClaim(tx, group, id, allowed, data, now)
		return err
	})
	return d, err
}

// pickCandidate reserves and returns a game server to try to claim, or "" when none is
// claimable. It walks the group's instances in placement order and stops at the first one
// that has a candidate. Each read is current but they are not one snapshot: the pick only
// nominates, and the claim's transaction decides.
func (s *Service) pickCandidate(ctx context.Context, group string, allowed func(string) bool, now int64, fresh bool) (string, error) {
	gp, err := s.loadSnapshot(ctx, group, now, fresh)
	if err != nil {
		return "", err
	}
	for i := gp.next(0, allowed, now, fresh); i >= 0; i = gp.next(i+1, allowed, now, fresh) {
		if id, err := s.pickOnInstance(ctx, gp, i, now, fresh); id != "" || err != nil {
			return id, err
		}
	}
	return "", nil
}

// pickOnInstance reserves a game server of instance gp.instances[i] to try to claim, or
// returns "" to pass the instance over. Outside a fresh decision it takes one from the node's
// pool of the instance (fleetiq_freepool.go), filling the pool when it has none. A fresh
// decision reads the slot list and takes, at random, one of its first claimable game servers
// that this node is not claiming already, or else one it is. An instance with nothing to
// claim is marked exhausted until its earliest claim lapses.
func (s *Service) pickOnInstance(ctx context.Context, gp *groupPlacement, i int, now int64, fresh bool) (string, error) {
	c, inst := s.placements(), &gp.instances[i]
	if fresh {
		return s.pickFresh(ctx, gp, i, now)
	}
	if id, ok := c.takeFree(inst.slots, now); ok {
		return id, nil
	}
	if err := s.loadPool(ctx, gp, i, now); err != nil {
		return "", err
	}
	id, _ := c.takeFree(inst.slots, now)
	return id, nil
}

// pickFresh is pickOnInstance for a fresh decision.
func (s *Service) pickFresh(ctx context.Context, gp *groupPlacement, i int, now int64) (string, error) {
	c := s.placements()
	found, err := s.readClaimables(ctx, gp.instances[i].slots, now, claimCandidates+c.inflightCount(), share{count: 1})
	if err != nil {
		return "", err
	}
	gp.noteExhausted(i, found, now)
	return c.reserveAny(found.ids, true), nil
}

// reserveAny reserves, at random, one of the first claimCandidates of ids that this node is
// not claiming already; in a fresh decision, when it is claiming all of them, one of those.
func (c *placementCache) reserveAny(ids []string, fresh bool) string {
	if len(ids) == 0 {
		return ""
	}
	id, busy := c.reserve(ids)
	if id == "" && busy && fresh {
		id = ids[rand.IntN(min(len(ids), claimCandidates))]
		c.reserve([]string{id}) // balances the release; may be a no-op
	}
	return id
}

// loadSnapshot returns the group's placement snapshot (snapshot), reading it when there is
// none younger than rankingTTL. Claims that find it missing at once wait for one of them to
// read it, except in a fresh decision.
func (s *Service) loadSnapshot(ctx context.Context, group string, now int64, fresh bool) (*groupPlacement, error) {
	c := s.placements()
	if gp := c.cached(group, now, fresh); gp != nil {
		return gp, nil
	}
	read := func() (any, error) {
		var gp *groupPlacement
		err := s.view(ctx, func(tx store.Tx) error {
			var err error
			gp, err = s.snapshot(tx, group, now, fresh)
			return err
		})
		return gp, err
	}
	if fresh {
		gp, err := read()
		return gp.(*groupPlacement), err
	}
	gp, err, _ := c.rankLoads.Do(group, read)
	if err != nil {
		return nil, err
	}
	return gp.(*groupPlacement), nil
}

// commitClaim claims game server id at now inside tx, after checking that it is claimable:
// in an ACTIVE group, not UTILIZED, not CLAIMED at now, on an instance whose status the
// filter allows. It runs as store.CompareAndSetOnly: the game server's compare-and-set
// decides between two claimers. (An instance drained at the same moment may still get this
// one claim, as if it came a moment earlier.)
func (s *Service) commitClaim(tx store.Tx, group, id string, allowed func(string) bool, data *string, now int64) (*serverDoc, error) {
	status, err := s.groupStatusIn(tx, group)
	if err == nil {
		err = groupClaimable(group, status)
	}
	if err != nil {
		return nil, err
	}
	rec, d, err := getServer(tx, group, id)
	if err != nil {
		return nil, err
	}
	switch {
	case d.Utilized:
		return nil, api.Errorf(api.ConflictException, "Game server %s is UTILIZED and cannot be claimed.", id)
	case d.claimedAt(now):
		return nil, api.Errorf(api.ConflictException, "Game server %s is already CLAIMED.", id)
	}
	status, err = s.instanceStatus(tx, group, d.Instance, serverNotFound(group, id))
	if err != nil {
		return nil, err
	}
	if !allowed(status) {
		return nil, api.Errorf(api.ConflictException,
			"Game server %s runs on instance %s in status %s, which the claim's filter does not allow.", id, d.Instance, status)
	}
	d.Claimed = now
	if data != nil {
		d.Data = *data
	}
	return d, putDoc(tx, rec, d)
}
