package gamelift

import (
	"context"
	"errors"
	"math"

	"github.com/hoist-gg/hoist/store"
)

// Reading an instance's slot list: which of its game servers are claimable.
//
// A read takes the slot list (registration order) a page at a time, with the game servers the
// page names, and sorts them into claimable ones and the rest. Every game server of a list may
// be claimed, so a read would cost as much as the list is long; a node therefore remembers,
// per list, the run of slots from its start that were all claimed or UTILIZED when read
// (settled), and the next read starts after it. Nothing but time makes such a game server
// claimable again (a claim lapses; UTILIZED is for good; a registration appends a slot), so
// the run holds until its earliest claim lapses, for pool reads and fresh decisions alike.

// settled says that every slot of a list up to Seq through named a game server that was
// claimed or UTILIZED when read, and that none of those claims lapses before until (Unix ms).
type settled struct{ through, until int64 }

// claimables is what a read of a slot list found: the game servers claimable at the time,
// in list order; the earliest lapse of the claims it read after the settled run
// (math.MaxInt64 if none); and the settled run as the read leaves it.
type claimables struct {
	ids    []string
	until  int64
	run    settled
	broken bool // the run ended: a claimable game server (or one not read) came after it
}

// claimState is the part of a game server's document that says whether it is claimable.
type claimState struct {
	Claimed  int64 `json:"cl,omitempty"`
	Utilized bool  `json:"u,omitempty"`
}

// readClaimables reads the slot list parent after its settled run, page by page, each page
// with the game servers it names that are in share sh, until it has found want claimable
// game servers in sh or the list ends, and remembers how far the settled run now reaches. A
// page is one read of the list and one of the game servers; on PostgreSQL the second also
// fills the read cache that the claims then read from. With several shares, the game
// servers of the others are not read, and the run ends at the first of them.
func (s *Service) readClaimables(ctx context.Context, parent string, now int64, want int, sh share) (claimables, error) {
	c := s.placements()
	found := claimables{until: math.MaxInt64, run: c.settledRun(parent, now)}
	page := want * max(sh.count, 1)
	for after := found.run.through; ; {
		ids, seqs, err := s.slotPage(ctx, parent, after, page)
		if err != nil {
			return found, err
		}
		owned, own := pageShare(ids, sh)
		recs, err := s.readServers(ctx, own)
		if err != nil {
			return found, err
		}
		if err := found.add(ids, seqs, owned, recs, now); err != nil {
			return found, err
		}
		if len(found.ids) >= want || len(ids) < page {
			c.settle(parent, found.run, now)
			return found, nil
		}
		after = seqs[len(seqs)-1]
	}
}

// pageShare says which of a page's slot IDs are in share sh, and returns those.
func pageShare(ids []string, sh share) (owned []bool, own []string) {
	owned, own = make([]bool, len(ids)), make([]string, 0, len(ids))
	for k, id := range ids {
		if owned[k] = sh.owns(id); owned[k] {
			own = append(own, id)
		}
	}
	return owned, own
}

// add sorts the game servers recs, read for the slots ids that owned marks (with Seqs seqs,
// in list order), into claimable ones and the rest, and extends the settled run while it
// lasts.
func (f *claimables) add(ids []string, seqs []int64, owned []bool, recs []*store.Record, now int64) error {
	byID := make(map[string]*store.Record, len(recs))
	for _, r := range recs {
		byID[r.ID] = r
	}
	for k, id := range ids {
		if !owned[k] {
			f.broken = true // not read: it may be claimable
			continue
		}
		var st claimState
		if r := byID[id]; r != nil {
			if err := jsonInto(r.Data, &st); err != nil {
				return err
			}
		} else {
			st.Utilized = true // deregistered since the list was read: never claimable again
		}
		lapse := int64(math.MaxInt64)
		switch {
		case st.Utilized: // its slot goes with the same write; a list read before still names it
		case claimedAt(st.Claimed, now):
			lapse = st.Claimed + ClaimDuration.Milliseconds()
			f.until = min(f.until, lapse)
		default:
			f.ids, f.broken = append(f.ids, id), true
			continue
		}
		if !f.broken {
			f.run = settled{through: seqs[k], until: min(f.run.until, lapse)}
		}
	}
	return nil
}

// noteExhausted marks instance i exhausted when a read of its slot list found nothing to
// claim in the share it read: until the earliest claim it read lapses, or for ClaimDuration
// when it read no claim either. (A node's pools hold only its share; a fresh decision reads
// every share before OutOfCapacityException.)
func (gp *groupPlacement) noteExhausted(i int, found claimables, now int64) {
	if len(found.ids) > 0 {
		return
	}
	until := min(found.until, found.run.until)
	if until == math.MaxInt64 {
		until = now + ClaimDuration.Milliseconds()
	}
	gp.markExhausted(i, until)
}

// settledRun returns the settled run of the slot list parent, if it still holds at now; the
// empty run (until math.MaxInt64) otherwise.
func (c *placementCache) settledRun(parent string, now int64) settled {
	c.mu.Lock()
	run, ok := c.settled[parent]
	c.mu.Unlock()
	if !ok || now >= run.until {
		return settled{until: math.MaxInt64}
	}
	return run
}

// settle remembers the settled run of the slot list parent, unless one that still holds at
// now reaches further.
func (c *placementCache) settle(parent string, run settled, now int64) {
	if run.through == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.settled == nil || len(c.settled) >= maxInstanceInfos {
		c.settled = map[string]settled{}
	}
	if old, ok := c.settled[parent]; !ok || now >= old.until || run.through > old.through {
		c.settled[parent] = run
	}
}

// slotPage returns the IDs and Seqs of the first limit slots under parent after Seq after.
// With a store that reports records without copying them (versionLister) no record is
// copied.
func (s *Service) slotPage(ctx context.Context, parent string, after int64, limit int) ([]string, []int64, error) {
	ids, seqs := make([]string, 0, limit), make([]int64, 0, limit)
	opt := store.ListOptions{Parent: parent, AfterSeq: after, Limit: limit}
	if vl, ok := s.store.(versionLister); ok {
		err := vl.EachVersion(ctx, kindGameServerSlot, opt, func(id string, seq, _ int64) {
			ids, seqs = append(ids, id), append(seqs, seq)
		})
		return ids, seqs, err
	}
	err := s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindGameServerSlot, opt)
		ids, seqs = ids[:0], seqs[:0]
		for _, r := range recs {
			ids, seqs = append(ids, r.ID), append(seqs, r.Seq)
		}
		return err
	})
	return ids, seqs, err
}

// readServers reads the game servers with these IDs (those that exist), in one statement
// where the store can (prefetcher).
func (s *Service) readServers(ctx context.Context, ids []string) ([]*store.Record, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	if p, ok := s.store.(prefetcher); ok {
		return p.Prefetch(ctx, kindGameServer, ids)
	}
	var recs []*store.Record
	err := s.view(ctx, func(tx store.Tx) error {
		recs = recs[:0]
		for _, id := range ids {
			r, err := tx.Get(kindGameServer, id)
			if err == nil {
				recs = append(recs, r)
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		return nil
	})
	return recs, err
}
