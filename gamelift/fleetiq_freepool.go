package gamelift

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/store"
)

// Free pools: which game servers of an instance a node's group claims try.
//
// A node reads an instance's slot list (registration order) and the game servers it names
// once, keeps its own share of those claimable at the time as a pool, and hands the pool out
// one claim at a time, at random, so that a claim costs no read of the list and no two claims
// of the node try one game server. The pool is read again when it is empty or older than
// rankingTTL.
//
// With several nodes, a node's share is the game servers whose ID hashes to its place among
// the live nodes (sorted by node ID): the nodes claim disjoint game servers and do not lose
// races to each other, which on PostgreSQL cost a rolled-back batch and a fresh read each.
// Shares are a preference, not a rule: a claim that finds nothing in its node's share makes
// the fresh decision (claimPlaced) from every claimable game server before it answers
// OutOfCapacityException.

const (
	// freeRead is how many claimable game servers of an instance a node reads for its pool,
	// times the number of live nodes.
	freeRead = 64
	// shareTTL is how long (Unix ms) a node keeps its place among the live nodes before it
	// reads the node records again.
	shareTTL = 3000
)

// freePool is a node's share of one instance's free game servers, as read at loaded.
type freePool struct {
	loaded int64
	ids    []string
}

// share is this node's place among the live nodes.
type share struct {
	rank, count int
	until       int64 // Unix ms
}

// owns reports whether game server id is in the share.
func (sh share) owns(id string) bool {
	if sh.count <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(id))
	return int(h.Sum32()%uint32(sh.count)) == sh.rank
}

// takeFree reserves, at random, a game server of the pool of the instance whose slots are
// under parent. ok is false when there is no pool younger than rankingTTL; id is empty
// when the pool was empty when read (the instance is passed over until the pool expires). A
// pool whose last game server is taken goes, so that the next claim reads the list again.
func (c *placementCache) takeFree(parent string, now int64) (id string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.free[parent]
	if p == nil || now-p.loaded >= rankingTTL || now < p.loaded {
		return "", false
	}
	if len(p.ids) == 0 {
		return "", true
	}
	i := rand.IntN(len(p.ids))
	id = p.ids[i]
	p.ids[i] = p.ids[len(p.ids)-1]
	p.ids = p.ids[:len(p.ids)-1]
	if len(p.ids) == 0 {
		delete(c.free, parent) // used up, not found empty: the next claim reads the list again
	}
	c.inflight[id] = struct{}{}
	return id, true
}

// prefetcher is implemented by stores that keep a read cache for CompareAndSetOnly Updates
// (store/postgres): Prefetch reads records into it in one go and returns them.
type prefetcher interface {
	Prefetch(ctx context.Context, kind string, ids []string) ([]*store.Record, error)
}

// loadPool makes the node's share of the claimable game servers on instance gp.instances[i]
// its pool, and marks the instance exhausted when it has none. The claims that find no pool
// at once wait for one of them to load it.
func (s *Service) loadPool(ctx context.Context, gp *groupPlacement, i int, now int64) error {
	c, parent := s.placements(), gp.instances[i].slots
	_, err, _ := c.loads.Do(parent, func() (any, error) {
		sh := s.share(ctx, now)
		found, err := s.readClaimables(ctx, parent, now, freeRead+c.inflightCount(), sh)
		if err == nil {
			gp.noteExhausted(i, found, now)
			c.fillFree(parent, found.ids, now)
		}
		return nil, err
	})
	return err
}

// fillFree makes ids (claimable game servers of the node's share), less the game servers it
// is claiming, the pool of parent.
func (c *placementCache) fillFree(parent string, ids []string, now int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	own := make([]string, 0, len(ids))
	for _, id := range ids {
		if _, busy := c.inflight[id]; !busy {
			own = append(own, id)
		}
	}
	if c.free == nil || len(c.free) >= maxInstanceInfos {
		c.free = map[string]*freePool{}
	}
	c.free[parent] = &freePool{loaded: now, ids: own}
}

// dropFree forgets the pools of a group's instances and the settled runs of their slot lists.
func (c *placementCache) dropFree(group string) {
	prefix := group + "/"
	c.mu.Lock()
	for parent := range c.free {
		if strings.HasPrefix(parent, prefix) {
			delete(c.free, parent)
		}
	}
	for parent := range c.settled {
		if strings.HasPrefix(parent, prefix) {
			delete(c.settled, parent)
		}
	}
	c.mu.Unlock()
}

// share returns this node's place among the live nodes, read from the node records at most
// every shareTTL. A Service that is not one of several nodes, or cannot read them, has the
// whole.
func (s *Service) share(ctx context.Context, now int64) share {
	if s.node == "" {
		return share{count: 1}
	}
	c := s.placements()
	c.mu.Lock()
	sh := c.nodeShare
	c.mu.Unlock()
	if now < sh.until && now >= sh.until-shareTTL {
		return sh
	}
	var ids []string
	err := s.view(ctx, func(tx store.Tx) error {
		alive, err := s.aliveNodes(tx)
		ids = ids[:0]
		for id := range alive {
			ids = append(ids, id)
		}
		return err
	})
	sh = share{count: 1, until: now + shareTTL}
	if err == nil {
		sh = shareOf(ids, s.node, now)
	}
	c.mu.Lock()
	c.nodeShare = sh
	c.mu.Unlock()
	return sh
}

// shareOf is node's place among the live nodes ids (which may lack it, if its first report
// is still to come).
func shareOf(ids []string, node string, now int64) share {
	if !slices.Contains(ids, node) {
		ids = append(ids, node)
	}
	slices.Sort(ids)
	return share{rank: slices.Index(ids, node), count: len(ids), until: now + shareTTL}
}
