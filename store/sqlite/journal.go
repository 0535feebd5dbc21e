package sqlite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/hoist-gg/hoist/store"
)

// The journal.
//
// A batch is committed as one entry appended to the log (segments.go): its writes encoded by
// encodeBatch. That is one write system call per commit, whatever the batch holds; a SQLite
// transaction per batch cost about 20 µs more, and writing each record to a keyed table
// costs a random page per record (about 25 µs each with 200,000 records). The records
// themselves live in the newest snapshot (snapshot.go) plus the log after it; opening the
// store loads the snapshot and replays the log.
//
// Snapshot files hold their records as entries of the same form, without deletes.
//
// An entry is: varint Seq, the last Seq handed out when the batch committed (0 in a
// snapshot); uvarint count of deletes, each as kind and ID; then uvarint count of upserts,
// each as kind, ID, parent, varint version, varint Seq and data. Strings and data are a
// uvarint length and the bytes. Upserts are in Seq order and deletes come first, the order in
// which commit applies them to memory, so a replay rebuilds the same memory.

// errCorruptEntry is returned when a log row does not decode.
var errCorruptEntry = errors.New("sqlite store: corrupt log entry")

// encodeBatch encodes the writes of a batch, which handed out Seqs up to seq, as one log
// entry; ups is w.upserts().
func encodeBatch(w layer, ups []*store.Record, seq int64) []byte {
	var dels [][2]string
	size := 16
	for kind, m := range w {
		for id, r := range m {
			if r == nil {
				dels = append(dels, [2]string{kind, id})
				size += len(kind) + len(id) + 4
			}
		}
	}
	buf := binary.AppendVarint(make([]byte, 0, size), seq)
	buf = binary.AppendUvarint(buf, uint64(len(dels)))
	for _, d := range dels {
		buf = appendString(appendString(buf, d[0]), d[1])
	}
	return appendUpserts(buf, ups)
}

// appendUpserts appends the upsert part of an entry: the count and each record.
func appendUpserts(buf []byte, recs []*store.Record) []byte {
	size := 8
	for _, r := range recs {
		size += len(r.Kind) + len(r.ID) + len(r.Parent) + len(r.Data) + 28
	}
	buf = slices.Grow(buf, size)
	buf = binary.AppendUvarint(buf, uint64(len(recs)))
	for _, r := range recs {
		buf = appendString(appendString(appendString(buf, r.Kind), r.ID), r.Parent)
		buf = binary.AppendVarint(binary.AppendVarint(buf, r.Version), r.Seq)
		buf = binary.AppendUvarint(buf, uint64(len(r.Data)))
		buf = append(buf, r.Data...)
	}
	return buf
}

func appendString(buf []byte, s string) []byte {
	return append(binary.AppendUvarint(buf, uint64(len(s))), s...)
}

// entryReader decodes one log entry.
type entryReader struct {
	b   []byte
	err error
}

func (e *entryReader) uvarint() uint64 {
	if e.err != nil {
		return 0
	}
	v, n := binary.Uvarint(e.b)
	if n <= 0 {
		e.err = errCorruptEntry
		return 0
	}
	e.b = e.b[n:]
	return v
}

func (e *entryReader) varint() int64 {
	if e.err != nil {
		return 0
	}
	v, n := binary.Varint(e.b)
	if n <= 0 {
		e.err = errCorruptEntry
		return 0
	}
	e.b = e.b[n:]
	return v
}

func (e *entryReader) bytes() []byte {
	n := e.uvarint()
	if e.err != nil {
		return nil
	}
	if n > uint64(len(e.b)) {
		e.err = errCorruptEntry
		return nil
	}
	v := e.b[:n:n]
	e.b = e.b[n:]
	return v
}

func (e *entryReader) string() string { return string(e.bytes()) }

// replayEntry applies one log entry to m, as commit applied its batch, and returns the
// highest Seq it holds (0 if none).
func replayEntry(m memory, entry []byte) (maxSeq int64, err error) {
	e := &entryReader{b: entry}
	maxSeq = e.varint()
	for n := e.uvarint(); n > 0 && e.err == nil; n-- {
		kind := e.string()
		id := e.string()
		if e.err == nil {
			m.delete(kind, id)
		}
	}
	for n := e.uvarint(); n > 0 && e.err == nil; n-- {
		r := &store.Record{Kind: e.string(), ID: e.string(), Parent: e.string()}
		r.Version, r.Seq = e.varint(), e.varint()
		r.Data = append([]byte{}, e.bytes()...)
		if e.err == nil {
			m.set(r)
			maxSeq = max(maxSeq, r.Seq)
		}
	}
	if e.err == nil && len(e.b) != 0 {
		e.err = errCorruptEntry
	}
	if e.err != nil {
		return 0, fmt.Errorf("%w (%d bytes)", e.err, len(entry))
	}
	return maxSeq, nil
}
