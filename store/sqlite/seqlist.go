package sqlite

import (
	"slices"
	"sort"

	"github.com/hoist-gg/hoist/store"
)

// chunkMax is the most records one chunk of a seqList holds before it is split in two.
const chunkMax = 256

// seqList is a set of records ordered by Seq: a directory of chunks, each a Seq-sorted slice
// of at most chunkMax records, every record of a chunk below every record of the next. Finding
// a Seq is two binary searches; inserting or removing one record moves at most chunkMax
// pointers, plus the directory's chunk pointers when a chunk splits, merges or empties (rare:
// at most once per chunkMax/8 changes of a chunk). Appending the newest record, the common
// case, touches the last chunk only. So a change costs O(chunkMax + n/chunkMax) instead of
// the O(n) of shifting one flat slice, which made deleting from a 100,000-record kind slow.
type seqList struct {
	chunks [][]*store.Record
	n      int
}

// len returns the number of records in l.
func (l *seqList) len() int { return l.n }

// locate returns the position of the first record with Seq >= seq: chunk ci, index i. With
// none, ci is len(l.chunks).
func (l *seqList) locate(seq int64) (ci, i int) {
	ci = sort.Search(len(l.chunks), func(c int) bool {
		ch := l.chunks[c]
		return ch[len(ch)-1].Seq >= seq
	})
	if ci < len(l.chunks) {
		i = searchSeq(l.chunks[ci], seq)
	}
	return ci, i
}

// insert adds r, whose Seq must not be in l yet.
func (l *seqList) insert(r *store.Record) {
	l.n++
	last := len(l.chunks) - 1
	if last < 0 {
		l.chunks = append(l.chunks, append(make([]*store.Record, 0, 8), r))
		return
	}
	ci, i := last, len(l.chunks[last])
	if tail := l.chunks[last]; tail[len(tail)-1].Seq > r.Seq {
		ci, i = l.locate(r.Seq)
	}
	l.chunks[ci] = slices.Insert(l.chunks[ci], i, r)
	if len(l.chunks[ci]) > chunkMax {
		l.split(ci)
	}
}

// split cuts chunk ci into two halves. A chunk that grew by appending keeps most of its
// records (new records usually arrive at the end), so it is cut near its end.
func (l *seqList) split(ci int) {
	ch := l.chunks[ci]
	at := len(ch) / 2
	if ci == len(l.chunks)-1 {
		at = len(ch) - chunkMax/8
	}
	tail := make([]*store.Record, len(ch)-at, chunkMax)
	copy(tail, ch[at:])
	clear(ch[at:])
	l.chunks[ci] = ch[:at]
	l.chunks = slices.Insert(l.chunks, ci+1, tail)
}

// remove deletes the record with the given Seq, if l has it.
func (l *seqList) remove(seq int64) {
	ci, i := l.locate(seq)
	if ci == len(l.chunks) || l.chunks[ci][i].Seq != seq {
		return
	}
	l.n--
	ch := slices.Delete(l.chunks[ci], i, i+1)
	l.chunks[ci] = ch
	switch {
	case len(ch) == 0:
		l.chunks = slices.Delete(l.chunks, ci, ci+1)
	case len(ch) < chunkMax/4:
		l.mergeSmall(ci)
	}
	if len(l.chunks) == 0 {
		l.chunks = nil
	}
}

// mergeSmall merges small chunk ci into a neighbour when the two fit in half a chunk, so
// that deletions cannot leave a long directory of tiny chunks.
func (l *seqList) mergeSmall(ci int) {
	fits := func(a, b int) bool { return len(l.chunks[a])+len(l.chunks[b]) <= chunkMax/2 }
	switch {
	case ci > 0 && fits(ci-1, ci):
		ci--
	case ci+1 < len(l.chunks) && fits(ci, ci+1):
	default:
		return
	}
	l.chunks[ci] = append(l.chunks[ci], l.chunks[ci+1]...)
	l.chunks = slices.Delete(l.chunks, ci+1, ci+2)
}

// replace puts r in place of the record with the same Seq, which l must hold.
func (l *seqList) replace(r *store.Record) {
	ci, i := l.locate(r.Seq)
	l.chunks[ci][i] = r
}

// after returns, in a new slice, up to limit (0: all) records with Seq > afterSeq.
func (l *seqList) after(afterSeq int64, limit int) []*store.Record {
	if l == nil {
		return nil
	}
	n := l.n
	if limit > 0 {
		n = min(n, limit)
	}
	var out []*store.Record
	ci, i := l.locate(afterSeq + 1)
	for ; ci < len(l.chunks) && len(out) < n; ci, i = ci+1, 0 {
		ch := l.chunks[ci][i:]
		if out == nil {
			out = make([]*store.Record, 0, n)
		}
		out = append(out, ch[:min(len(ch), n-len(out))]...)
	}
	return out
}
