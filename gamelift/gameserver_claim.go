package gamelift

import (
	"context"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Claims.
//
// Every game server that is neither UTILIZED nor deregistered has one slot record (kind
// kindGameServerSlot, ID = game server ID). Its Parent says where it is:
//
//	"<group>/<instance>/free"     never claimed, or claimed and released by nothing but time
//	"<group>/<instance>/claimed"  claimed at the Unix ms in its Data
//
// A claim deletes the slot and inserts a new one under .../claimed, so each list stays in
// store Seq order = the order of events: the free list oldest registration first, the claimed
// list oldest claim first. A claimer therefore needs only the first few slots of an
// instance's lists: a free one, or else a claimed one whose claim has lapsed (older than
// ClaimDuration on the clock). It never scans a group's game servers.
//
// The slot only nominates; the game server record decides. The claim transaction re-reads
// the game server and refuses it when it is UTILIZED or CLAIMED at now, and writes it with
// compare-and-set (store.Tx.Put on the version read), so of two claimers of one game server
// one fails and picks again. That holds on every node of a shared PostgreSQL.

const (
	// claimCandidates is how many slots of a list a claimer picks among at random, so that
	// concurrent claimers of one instance rarely pick the same game server.
	claimCandidates = 16
	// claimRounds bounds how often a group claim decides again after losing a race.
	claimRounds = 64
)

// slotParent is the Parent of a game server's slot.
func slotParent(group, instance string, claimed bool) string {
	if claimed {
		return group + "/" + instance + "/claimed"
	}
	return group + "/" + instance + "/free"
}

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
// decision reads the free list and takes, at random, one of its first game servers that this
// node is not claiming already, or else one it is. An instance with no free game server
// offers its lapsed claims instead; with none of those either it is marked exhausted until
// its oldest claim lapses.
func (s *Service) pickOnInstance(ctx context.Context, gp *groupPlacement, i int, now int64, fresh bool) (string, error) {
	c, inst := s.placements(), &gp.instances[i]
	if fresh {
		return s.pickFresh(ctx, gp, i, now)
	}
	if id, ok := c.takeFree(inst.free, now); ok {
		return id, nil
	}
	if err := s.loadPool(ctx, gp, i, now); err != nil {
		return "", err
	}
	id, _ := c.takeFree(inst.free, now)
	return id, nil
}

// pickFresh is pickOnInstance for a fresh decision.
func (s *Service) pickFresh(ctx context.Context, gp *groupPlacement, i int, now int64) (string, error) {
	c := s.placements()
	limit := claimCandidates + c.inflightCount()
	ids, err := s.slotIDs(ctx, gp.instances[i].free, limit)
	if err == nil && len(ids) == 0 {
		ids, err = s.lapsedClaims(ctx, gp, i, now, limit)
	}
	return c.reserveAny(ids, true), err
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

// slotIDs returns the IDs of the first limit slots under parent. With a store that reports
// records without copying them (versionLister) no record is copied.
func (s *Service) slotIDs(ctx context.Context, parent string, limit int) ([]string, error) {
	ids := make([]string, 0, limit)
	opt := store.ListOptions{Parent: parent, Limit: limit}
	if vl, ok := s.store.(versionLister); ok {
		err := vl.EachVersion(ctx, kindGameServerSlot, opt, func(id string, _, _ int64) { ids = append(ids, id) })
		return ids, err
	}
	err := s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServerSlot, opt)
		for _, r := range recs {
			ids = append(ids, r.ID)
		}
		return err
	})
	return ids, err
}

// lapsedClaims returns the IDs of the lapsed claims among the first limit claimed slots of
// instance gp.instances[i]; with none, it marks the instance exhausted until the oldest
// claim lapses.
func (s *Service) lapsedClaims(ctx context.Context, gp *groupPlacement, i int, now int64, limit int) ([]string, error) {
	var claimed []*store.Record
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		claimed, err = tx.List(kindGameServerSlot, store.ListOptions{Parent: gp.instances[i].claimed, Limit: limit})
		return err
	})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, r := range claimed {
		if slotClaimTime(r)+ClaimDuration.Milliseconds() <= now {
			ids = append(ids, r.ID)
		}
	}
	if len(ids) == 0 {
		gp.markExhausted(i, exhaustedUntil(claimed, now))
	}
	return ids, nil
}

// exhaustedUntil is when the oldest of an instance's claims (claimed, oldest first, with
// none free) lapses: until then the instance has nothing to claim.
func exhaustedUntil(claimed []*store.Record, now int64) int64 {
	if len(claimed) > 0 {
		return slotClaimTime(claimed[0]) + ClaimDuration.Milliseconds()
	}
	return now + ClaimDuration.Milliseconds()
}

func slotClaimTime(r *store.Record) int64 {
	t, _ := strconv.ParseInt(string(r.Data), 10, 64)
	return t
}

// commitClaim claims game server id at now inside tx, after checking that it is claimable:
// in an ACTIVE group, not UTILIZED, not CLAIMED at now, on an instance whose status the
// filter allows. It runs as
// store.CompareAndSetOnly: the game server's compare-and-set decides between two claimers,
// and the slot's primary key keeps one slot per game server. (An instance drained at the same
// moment may still get this one claim, as if it came a moment earlier.)
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
	if err := putDoc(tx, rec, d); err != nil {
		return nil, err
	}
	if err := deleteSlot(tx, id); err != nil {
		return nil, err
	}
	slot := &store.Record{Kind: kindGameServerSlot, ID: id, Parent: slotParent(group, d.Instance, true),
		Data: strconv.AppendInt(nil, now, 10)}
	return d, tx.Insert(slot)
}
