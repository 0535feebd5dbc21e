package gamelift

import (
	"cmp"
	"encoding/json"
	"slices"
	"sync"

	"github.com/hoist-gg/hoist/store"
)

// FleetIQ placement: which instance a group claim looks at first.
//
// The rule (docs/fleetiq.md): instances allowed by the claim's filter, the one hosting the
// most UTILIZED game servers first; ties go to the instance that joined the group first, so
// that claims keep filling one instance and emptier ones can drain. Within an instance, the
// game server whose claimable marker is oldest comes first.
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
}

// groupPlacement is a node's placement snapshot of one group.
type groupPlacement struct {
	loaded    int64 // Unix ms; 0 forces a reload
	instances []rankedInstance
	// exhausted maps an instance to the time (Unix ms) before which it has nothing to claim:
	// no free game server, and its oldest claim lapses then.
	exhausted map[string]int64
}

// placementCache holds the snapshots of one Service.
type placementCache struct {
	mu     sync.Mutex
	groups map[string]*groupPlacement
}

// placementCaches attaches a placementCache to each Service without widening its struct.
var placementCaches sync.Map // *Service -> *placementCache

func (s *Service) placements() *placementCache {
	if c, ok := placementCaches.Load(s); ok {
		return c.(*placementCache)
	}
	c, _ := placementCaches.LoadOrStore(s, &placementCache{groups: map[string]*groupPlacement{}})
	return c.(*placementCache)
}

// invalidate drops a group's snapshot, after this node changed its instances or servers.
func (c *placementCache) invalidate(group string) {
	c.mu.Lock()
	delete(c.groups, group)
	c.mu.Unlock()
}

// ranking returns the group's instances in placement order, skipping those not allowed and,
// unless fresh, those known to be exhausted at now. fresh reloads from the store.
func (s *Service) ranking(tx store.Tx, group string, allowed func(string) bool, now int64, fresh bool) ([]rankedInstance, error) {
	c := s.placements()
	c.mu.Lock()
	gp := c.groups[group]
	c.mu.Unlock()
	if gp == nil || fresh || now-gp.loaded >= rankingTTL || now < gp.loaded {
		loaded, err := loadRanking(tx, group, now)
		if err != nil {
			return nil, err
		}
		if gp != nil && !fresh {
			loaded.exhausted = gp.exhausted // hints carry their own expiry
		}
		gp = loaded
		c.mu.Lock()
		c.groups[group] = gp
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]rankedInstance, 0, len(gp.instances))
	for _, in := range gp.instances {
		if allowed(in.Status) && (fresh || gp.exhausted[in.ID] <= now) {
			out = append(out, in)
		}
	}
	return out, nil
}

// markExhausted records that instance has nothing to claim before until.
func (c *placementCache) markExhausted(group, instance string, until int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gp := c.groups[group]; gp != nil {
		gp.exhausted[instance] = until
	}
}

func loadRanking(tx store.Tx, group string, now int64) (*groupPlacement, error) {
	recs, err := tx.List(kindGameServerInstance, store.ListOptions{Parent: group})
	if err != nil {
		return nil, err
	}
	gp := &groupPlacement{loaded: now, exhausted: map[string]int64{}}
	for _, r := range recs {
		var d instanceDoc
		if err := json.Unmarshal(r.Data, &d); err != nil {
			return nil, err
		}
		gp.instances = append(gp.instances, rankedInstance{ID: d.ID, Status: d.Status, Utilized: d.Utilized, Seq: r.Seq})
	}
	slices.SortStableFunc(gp.instances, func(a, b rankedInstance) int {
		return cmp.Or(cmp.Compare(b.Utilized, a.Utilized), cmp.Compare(a.Seq, b.Seq))
	})
	return gp, nil
}

// jsonOf encodes a document.
func jsonOf(v any) ([]byte, error) { return json.Marshal(v) }

// jsonInto decodes a document.
func jsonInto(data []byte, v any) error { return json.Unmarshal(data, v) }

// scanParent is scan restricted to the records of kind with the given Parent.
func scanParent[T any](tx store.Tx, kind, parent string, cursor int64, limit int, keep func(*T) bool) (scanned[T], error) {
	var page scanned[T]
	recs, err := tx.List(kind, store.ListOptions{Parent: parent, AfterSeq: max(cursor, 0)})
	if err != nil {
		return page, err
	}
	for _, r := range recs {
		doc := new(T)
		if err := json.Unmarshal(r.Data, doc); err != nil {
			return page, err
		}
		if !keep(doc) {
			continue
		}
		if len(page.Items) == limit {
			page.More = true
			return page, nil
		}
		page.Items = append(page.Items, doc)
		page.Last = r.Seq
	}
	return page, nil
}
