package gamelift

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
	"golang.org/x/sync/singleflight"
)

// FleetIQ placement: which instance a group claim looks at first.
//
// The rule (docs/fleetiq.md): instances allowed by the claim's filter, the one hosting the
// most UTILIZED game servers first; ties go to the instance that joined the group first, so
// that claims keep filling one instance and emptier ones can drain. Within an instance, a
// claim takes at random one of the claimable game servers that a read of its slot list found
// (fleetiq_freepool.go).
//
// The ranking is a per-node snapshot (decide), refreshed at most every rankingTTL and at once
// after this node changes a group's instances; the claim itself is committed with a version
// check on the game server record (commit), so a stale ranking can only make placement less
// tight, never hand one game server to two claimers. Before answering OutOfCapacityException
// a claim re-reads everything and ignores the snapshot.

// rankingTTL bounds how stale a node's view of another node's instance changes can be.
const rankingTTL = 1000 // ms

// rankedInstance is one entry of a group's ranking.
type rankedInstance struct {
	ID       string
	Status   string
	Utilized int
	Seq      int64
	// slots is the Parent of its slots (slotParent), built once per snapshot.
	slots string
}

// groupPlacement is a node's placement snapshot of one group. instances and index never
// change once loaded; exhausted is guarded by mu.
type groupPlacement struct {
	loaded    int64       // Unix ms
	stale     atomic.Bool // reload before the next use, keeping the hints
	instances []rankedInstance
	index     map[string]int // instance ID -> position in instances
	mu        sync.Mutex
	// exhausted[i] is the time (Unix ms) before which instances[i] has nothing to claim: no
	// free game server, and its oldest claim lapses then. 0 when unknown.
	exhausted []int64
	// The instances before open are all exhausted until openUntil at least, so that a claim
	// in a group of many full instances starts at the first that may have room (guarded by
	// mu).
	open      int
	openUntil int64
}

// placementCache holds the snapshots of one Service, and the game servers this node is
// claiming right now (so that its concurrent claimers do not all pick the same one).
type placementCache struct {
	mu       sync.Mutex
	groups   map[string]*groupPlacement
	inflight map[string]struct{}  // game server IDs
	statuses map[string]groupStat // group name -> status of the record last decoded
	// instances is instance key -> the document last decoded (instanceInfoOf).
	instances map[string]instanceInfo
	// free is an instance's slot parent (its free list) -> the node's pool of it, and
	// nodeShare the node's share of every free list (fleetiq_freepool.go).
	free      map[string]*freePool
	settled   map[string]settled // slot parent -> its settled run (fleetiq_slots.go)
	loads     singleflight.Group // slot parent -> the claim reading it into a pool
	rankLoads singleflight.Group // group -> the claim reading its snapshot
	nodeShare share
}

// groupStat is a group's status as of one version of its record.
type groupStat struct {
	seq, version int64
	status       string
}

// instanceInfo is what placement and claims use of an instance document, as of one content
// (data) of its record.
type instanceInfo struct {
	data     []byte
	id       string
	status   string
	utilized int
}

// maxInstanceInfos bounds placementCache.instances, which starts over when it is full, so
// that instances gone long ago do not stay in it.
const maxInstanceInfos = 1 << 14

// placementCaches attaches a placementCache to each Service without widening its struct.
var placementCaches sync.Map // *Service -> *placementCache

func (s *Service) placements() *placementCache {
	if c, ok := placementCaches.Load(s); ok {
		return c.(*placementCache)
	}
	c, _ := placementCaches.LoadOrStore(s, &placementCache{groups: map[string]*groupPlacement{},
		inflight: map[string]struct{}{}, statuses: map[string]groupStat{}, instances: map[string]instanceInfo{}})
	return c.(*placementCache)
}

// invalidate drops a group's snapshot and free pools, after this node changed its instances
// or servers.
func (c *placementCache) invalidate(group string) {
	c.mu.Lock()
	delete(c.groups, group)
	c.mu.Unlock()
	c.dropFree(group)
}

// refresh makes the next claim reload a group's snapshot, as invalidate does, but keeps its
// exhausted hints: a lost race says the ranking may be stale, not that an instance whose
// game servers are all claimed has any free again.
func (c *placementCache) refresh(group string) {
	c.mu.Lock()
	if gp := c.groups[group]; gp != nil {
		gp.stale.Store(true)
	}
	c.mu.Unlock()
}

// groupStatus reads a group's status outside a transaction, like readGroup, but decodes the
// group document only when its record changed since this node last decoded it (claims read
// the status of one group many times a second). A record is known by Seq and Version, so a
// group deleted and created again under its name is decoded anew.
func (s *Service) groupStatus(ctx context.Context, nameOrARN *string, code api.ErrorCode) (name, status string, err error) {
	if name, err = s.groupName(nameOrARN); err != nil {
		return "", "", err
	}
	if status, ok := s.cachedGroupStatus(ctx, name); ok {
		return name, status, nil
	}
	rec, err := s.store.Get(ctx, kindGameServerGroup, name)
	if errors.Is(err, store.ErrNotFound) {
		return "", "", groupNotFound(code, name)()
	}
	if err != nil {
		return "", "", err
	}
	status, err = s.placements().groupStatusOf(name, rec)
	return name, status, err
}

// groupStatusIn reads a group's status inside tx, decoding its document only when its record
// changed since this node last decoded it (every claim checks it).
func (s *Service) groupStatusIn(tx store.Tx, name string) (string, error) {
	rec, err := tx.Get(kindGameServerGroup, name)
	if errors.Is(err, store.ErrNotFound) {
		return "", groupNotFound(api.NotFoundException, name)()
	}
	if err != nil {
		return "", err
	}
	return s.placements().groupStatusOf(name, rec)
}

// groupStatusOf is the status in a group's record, decoded once per Seq and Version.
func (c *placementCache) groupStatusOf(name string, rec *store.Record) (string, error) {
	c.mu.Lock()
	st, ok := c.statuses[name]
	c.mu.Unlock()
	if ok && st.seq == rec.Seq && st.version == rec.Version {
		return st.status, nil
	}
	var doc groupDoc
	if err := jsonInto(rec.Data, &doc); err != nil {
		return "", err
	}
	c.mu.Lock()
	c.statuses[name] = groupStat{seq: rec.Seq, version: rec.Version, status: doc.Status}
	c.mu.Unlock()
	return doc.Status, nil
}

// instanceStatus reads the status of a game server's instance inside tx, like getDoc with
// notFound but through instanceInfoOf (every claim checks it). The record is read in tx all
// the same, so a claim sees a status change committed before it.
func (s *Service) instanceStatus(tx store.Tx, group, instance string, notFound func() error) (string, error) {
	rec, err := tx.Get(kindGameServerInstance, instanceKey(group, instance))
	if errors.Is(err, store.ErrNotFound) {
		return "", notFound()
	}
	if err != nil {
		return "", err
	}
	info, err := s.placements().instanceInfoOf(rec)
	return info.status, err
}

// instanceInfoOf decodes an instance record, or takes what this node decoded last time from
// the same bytes. Unlike groupStatus it knows a record by its bytes, not by Seq and Version:
// inside a transaction a record may be a write not yet committed. Remembering a decoding is
// no effect that a store's retry of the transaction could get wrong.
func (c *placementCache) instanceInfoOf(rec *store.Record) (instanceInfo, error) {
	c.mu.Lock()
	info, ok := c.instances[rec.ID]
	c.mu.Unlock()
	if ok && bytes.Equal(info.data, rec.Data) {
		return info, nil
	}
	var d instanceDoc
	if err := jsonInto(rec.Data, &d); err != nil {
		return instanceInfo{}, err
	}
	info = instanceInfo{data: rec.Data, id: d.ID, status: d.Status, utilized: d.Utilized}
	c.mu.Lock()
	if c.instances == nil || len(c.instances) >= maxInstanceInfos {
		c.instances = map[string]instanceInfo{}
	}
	c.instances[rec.ID] = info
	c.mu.Unlock()
	return info, nil
}

// versionReader is implemented by stores that report one record's Seq and Version without
// copying it (store/sqlite's VersionOf).
type versionReader interface {
	VersionOf(ctx context.Context, kind, id string) (seq, version int64, err error)
}

// cachedGroupStatus returns the status this node decoded from the group's record, if the
// store can tell without a copy that the record has not changed since.
func (s *Service) cachedGroupStatus(ctx context.Context, name string) (string, bool) {
	vr, ok := s.store.(versionReader)
	if !ok {
		return "", false
	}
	c := s.placements()
	c.mu.Lock()
	st, ok := c.statuses[name]
	c.mu.Unlock()
	if !ok {
		return "", false
	}
	seq, version, err := vr.VersionOf(ctx, kindGameServerGroup, name)
	return st.status, err == nil && st.seq == seq && st.version == version
}

// snapshot returns the group's placement snapshot, reloading it from tx when it is missing,
// older than rankingTTL, or fresh is set (which also forgets the exhausted hints).
func (s *Service) snapshot(tx store.Tx, group string, now int64, fresh bool) (*groupPlacement, error) {
	c := s.placements()
	if gp := c.cached(group, now, fresh); gp != nil {
		return gp, nil
	}
	c.mu.Lock()
	gp := c.groups[group]
	c.mu.Unlock()
	loaded, err := c.loadRanking(tx, group, now)
	if err != nil {
		return nil, err
	}
	if gp != nil && !fresh {
		loaded.keepHints(gp) // hints carry their own expiry
	}
	c.mu.Lock()
	c.groups[group] = loaded
	c.mu.Unlock()
	return loaded, nil
}

// cached returns the group's snapshot if it is there, younger than rankingTTL, and fresh is
// not set; nil otherwise.
func (c *placementCache) cached(group string, now int64, fresh bool) *groupPlacement {
	c.mu.Lock()
	gp := c.groups[group]
	c.mu.Unlock()
	if gp != nil && !fresh && !gp.stale.Load() && now-gp.loaded < rankingTTL && now >= gp.loaded {
		return gp
	}
	return nil
}

// keepHints copies old's exhausted hints onto the same instances of gp.
func (gp *groupPlacement) keepHints(old *groupPlacement) {
	old.mu.Lock()
	defer old.mu.Unlock()
	for id, i := range old.index {
		if j, ok := gp.index[id]; ok {
			gp.exhausted[j] = old.exhausted[i]
		}
	}
}

// next returns the position of the first instance at or after from, in placement order,
// that the filter allows and (unless fresh) is not known to be exhausted at now; -1 if none.
func (gp *groupPlacement) next(from int, allowed func(string) bool, now int64, fresh bool) int {
	gp.mu.Lock()
	defer gp.mu.Unlock()
	if !fresh {
		from = max(from, gp.skipExhausted(now))
	}
	for i := from; i < len(gp.instances); i++ {
		if (fresh || gp.exhausted[i] <= now) && allowed(gp.instances[i].Status) {
			return i
		}
	}
	return -1
}

// skipExhausted moves open past the exhausted instances at it, starting over when one of
// those it passed may have room again, and returns it. gp.mu is held.
func (gp *groupPlacement) skipExhausted(now int64) int {
	if gp.open == 0 || now >= gp.openUntil {
		gp.open, gp.openUntil = 0, math.MaxInt64
	}
	for gp.open < len(gp.exhausted) && gp.exhausted[gp.open] > now {
		gp.openUntil = min(gp.openUntil, gp.exhausted[gp.open])
		gp.open++
	}
	return gp.open
}

// markExhausted records that instances[i] has nothing to claim before until.
func (gp *groupPlacement) markExhausted(i int, until int64) {
	gp.mu.Lock()
	gp.exhausted[i] = until
	gp.mu.Unlock()
}

// reserve picks at random one of the first claimCandidates game servers of ids that this
// node is not claiming already, and notes that it is claiming it; release must follow. It
// returns "" and whether some were skipped only because they are being claimed.
func (c *placementCache) reserve(ids []string) (id string, busy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pool [claimCandidates]string
	n := 0
	for _, cand := range ids {
		if _, ok := c.inflight[cand]; ok {
			busy = true
			continue
		}
		pool[n] = cand
		if n++; n == len(pool) {
			break
		}
	}
	if n == 0 {
		return "", busy
	}
	id = pool[rand.IntN(n)]
	c.inflight[id] = struct{}{}
	return id, busy
}

// release ends this node's claim attempt on a game server.
func (c *placementCache) release(id string) {
	c.mu.Lock()
	delete(c.inflight, id)
	c.mu.Unlock()
}

// inflightCount is how many game servers this node is claiming right now.
func (c *placementCache) inflightCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.inflight)
}

// loadRanking reads a group's instances from tx and ranks them.
func (c *placementCache) loadRanking(tx store.Tx, group string, now int64) (*groupPlacement, error) {
	recs, err := tx.List(kindGameServerInstance, store.ListOptions{Parent: group})
	if err != nil {
		return nil, err
	}
	gp := &groupPlacement{loaded: now, instances: make([]rankedInstance, 0, len(recs))}
	for _, r := range recs {
		d, err := c.instanceInfoOf(r)
		if err != nil {
			return nil, err
		}
		gp.instances = append(gp.instances, rankedInstance{ID: d.id, Status: d.status, Utilized: d.utilized, Seq: r.Seq,
			slots: slotParent(group, d.id)})
	}
	slices.SortStableFunc(gp.instances, func(a, b rankedInstance) int {
		return cmp.Or(cmp.Compare(b.Utilized, a.Utilized), cmp.Compare(a.Seq, b.Seq))
	})
	gp.exhausted = make([]int64, len(gp.instances))
	gp.index = make(map[string]int, len(gp.instances))
	for i, in := range gp.instances {
		gp.index[in.ID] = i
	}
	return gp, nil
}

// jsonOf encodes a document.
func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// jsonInto decodes a document.
func jsonInto(data []byte, v any) error { return json.Unmarshal(data, v) }
