package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/internal/testwait"
	"github.com/hoist-gg/hoist/store"
)

// state is every record of a store, by kind and ID, as "parent version seq data".
func state(t *testing.T, s *Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	s.mu.RLock()
	defer s.mu.RUnlock()
	for kind, tb := range s.mem {
		for id, r := range tb.byID {
			out[kind+"/"+id] = fmt.Sprintf("%s %d %d %s", r.Parent, r.Version, r.Seq, r.Data)
		}
	}
	return out
}

// writeRandom makes n random writes: inserts, Puts that move records between parents, deletes.
func writeRandom(t *testing.T, s *Store, rng *rand.Rand, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		id := fmt.Sprint("r", rng.IntN(200))
		err := s.Update(ctx, func(tx store.Tx) error {
			r, err := tx.Get("k", id)
			switch {
			case err != nil:
				return tx.Insert(&store.Record{Kind: "k", ID: id, Parent: fmt.Sprint("p", i%3), Data: []byte(fmt.Sprint("v", i))})
			case i%5 == 0:
				return tx.Delete("k", id)
			default:
				r.Parent, r.Data = fmt.Sprint("p", i%3), []byte(fmt.Sprint("v", i))
				return tx.Put(r)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// files returns the numbers of dir's snapshots, unfinished snapshots and segments.
func files(t *testing.T, dir string) (snaps, tmps, segs []int64) {
	t.Helper()
	var err1, err2, err3 error
	snaps, err1 = numbered(dir, "snap-", ".db")
	tmps, err2 = numbered(dir, "snap-", ".db.tmp")
	segs, err3 = numbered(dir, "log-", ".seg")
	if err := errors.Join(err1, err2, err3); err != nil {
		t.Fatal(err)
	}
	return snaps, tmps, segs
}

// TestSnapshotsAndReplay: with snapshots after nearly every commit, older snapshots and the
// segments they cover are removed, and reopening rebuilds exactly the state that was in
// memory, Seq counter included.
func TestSnapshotsAndReplay(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	s.snap.minLog = 1
	rng := rand.New(rand.NewPCG(1, 2))
	writeUntilSnapshot(t, s, rng, 3)
	want, seq := state(t, s), s.seq
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	snaps, tmps, segs := files(t, dir)
	if len(snaps) != 1 || len(tmps) != 0 || len(segs) == 0 || len(segs) > 2 {
		t.Errorf("after Close: snapshots %v, unfinished %v, segments %v; want one snapshot and its segments", snaps, tmps, segs)
	}
	s = openTest(t, dir)
	if got := state(t, s); !maps.Equal(got, want) {
		t.Fatalf("after reopen %d records, want %d; differences in %v", len(got), len(want), diff(got, want))
	}
	if s.seq != seq {
		t.Errorf("Seq counter after reopen %d, want %d", s.seq, seq)
	}
}

// writeUntilSnapshot makes random writes until snapshot num is in force (a snapshot starts
// only after a commit, and one at a time).
func writeUntilSnapshot(t *testing.T, s *Store, rng *rand.Rand, num int64) {
	t.Helper()
	testwait.Until(t, 20*time.Second, time.Millisecond, fmt.Sprint("snapshot ", num), func() bool {
		writeRandom(t, s, rng, 20)
		return snapNum(s) >= num
	})
}

func snapNum(s *Store) int64 {
	num, _ := s.snap.inForce()
	return num
}
func diff(got, want map[string]string) []string {
	var out []string
	for k, v := range want {
		if got[k] != v {
			out = append(out, fmt.Sprintf("%s: got %q want %q", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			out = append(out, fmt.Sprintf("%s: got %q, not expected", k, v))
		}
	}
	return out[:min(len(out), 5)]
}

// TestSchemaV1Upgrade opens a directory that schema version 1 wrote (every record in
// hoist.db): the records load and become snapshot 1, hoist.db goes, and the Seq counter
// continues after the old reservation.
func TestSchemaV1Upgrade(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, legacyName))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{legacySchema, `PRAGMA user_version = 1`,
		`INSERT INTO records VALUES ('k', 'old', 'p0', 3, 7, 'v-old')`,
		`INSERT INTO meta VALUES ('seq', 1031)`} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	s := openTest(t, dir)
	if got := state(t, s)["k/old"]; got != "p0 3 7 v-old" {
		t.Fatalf("record from schema 1: %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, legacyName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there after the upgrade: %v", legacyName, err)
	}
	writeRandom(t, s, rand.New(rand.NewPCG(3, 4)), 50)
	if r, err := s.Get(context.Background(), "k", "r1"); err == nil && r.Seq <= 1031 {
		t.Errorf("new record's Seq %d, want after the old reservation 1031", r.Seq)
	}
	want := state(t, s)
	s.Close()
	s = openTest(t, dir)
	if got := state(t, s); !maps.Equal(got, want) {
		t.Fatalf("after reopen: differences in %v", diff(got, want))
	}
}

// TestCorruptSnapshotFails: a newest snapshot that does not read fails Open rather than
// opening an empty or older store.
func TestCorruptSnapshotFails(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	s.snap.minLog = 1
	writeUntilSnapshot(t, s, rand.New(rand.NewPCG(5, 6)), 1)
	s.Close()
	snaps, _, _ := files(t, dir)
	if err := os.WriteFile(snapshotPath(dir, snaps[len(snaps)-1]), []byte("not a database"), 0o644); err != nil {
		t.Fatal(err)
	}
	if s2, err := Open(dir); err == nil {
		s2.Close()
		t.Fatal("Open succeeded with a corrupt snapshot")
	}
}

// TestStraySnapshotRemoved: an unfinished snapshot (a crash while it was written) is removed
// on open and does not affect what loads.
func TestStraySnapshotRemoved(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	writeRandom(t, s, rand.New(rand.NewPCG(7, 8)), 20)
	want := state(t, s)
	s.Close()
	stray := snapshotPath(dir, 1) + ".tmp"
	if err := os.WriteFile(stray, []byte("half a snapshot"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	if _, err := os.Stat(stray); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("unfinished snapshot still there: %v", err)
	}
	if got := state(t, s); !maps.Equal(got, want) {
		t.Errorf("differences %v", diff(got, want))
	}
}

// TestTornTail: a frame cut short or garbled at the end of the last segment (a write a kill
// interrupted) is dropped and cut off, and the store goes on appending after it.
func TestTornTail(t *testing.T) {
	for name, tail := range map[string][]byte{
		"short header": {9, 0, 0},
		"short body":   {200, 0, 0, 0, 1, 2, 3, 4, 5},
		"bad checksum": append([]byte{3, 0, 0, 0, 0, 0, 0, 0}, 1, 2, 3),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			writeRandom(t, s, rand.New(rand.NewPCG(9, 10)), 30)
			want := state(t, s)
			s.Close()
			seg := segmentPath(dir, 1)
			good, _ := os.Stat(seg)
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(tail)
			f.Close()
			s = openTest(t, dir)
			if got := state(t, s); !maps.Equal(got, want) {
				t.Fatalf("differences %v", diff(got, want))
			}
			if now, _ := os.Stat(seg); now.Size() != good.Size() {
				t.Errorf("segment is %d bytes after open, want the %d of its whole frames", now.Size(), good.Size())
			}
			writeRandom(t, s, rand.New(rand.NewPCG(11, 12)), 30)
			want = state(t, s)
			s.Close()
			if got := state(t, openTest(t, dir)); !maps.Equal(got, want) {
				t.Errorf("after appending past the cut: differences %v", diff(got, want))
			}
		})
	}
}

// TestBadEarlierSegmentFails: damage in a segment that is not the last, or a missing one, is
// corruption, not a torn write: Open fails.
func TestBadEarlierSegmentFails(t *testing.T) {
	for _, damage := range []string{"flip", "remove"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			writeRandom(t, s, rand.New(rand.NewPCG(13, 14)), 20)
			if _, err := s.log.rotate(); err != nil { // no Update runs: the test is the committer
				t.Fatal(err)
			}
			writeRandom(t, s, rand.New(rand.NewPCG(15, 16)), 20)
			s.Close()
			seg := segmentPath(dir, 1)
			if damage == "remove" {
				os.Remove(seg)
			} else {
				b, _ := os.ReadFile(seg)
				b[len(b)/2] ^= 0xff
				os.WriteFile(seg, b, 0o644)
			}
			if s2, err := Open(dir); err == nil {
				s2.Close()
				t.Fatal("Open succeeded")
			} else {
				t.Log(err)
			}
		})
	}
}

func TestReplayRejectsCorruptEntry(t *testing.T) {
	w := layer{"k": {"a": &store.Record{Kind: "k", ID: "a", Version: 1, Seq: 1, Data: []byte("x")}}}
	entry := encodeBatch(w, w.upserts(), 4)
	for _, bad := range [][]byte{entry[:len(entry)-1], append(entry, 0), {0xff}} {
		if _, err := replayEntry(memory{}, bad); err == nil {
			t.Errorf("entry %x replayed without error", bad)
		}
	}
	m := memory{}
	if seq, err := replayEntry(m, entry); err != nil || seq != 4 || string(m.get("k", "a").Data) != "x" {
		t.Errorf("good entry: seq %d, err %v", seq, err)
	}
}

// TestFailedAppend: when the log cannot be written, the Update fails, memory is unchanged,
// later Updates fail rather than write behind a partial frame, and reopening finds exactly
// what was committed before.
func TestFailedAppend(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	writeRandom(t, s, rand.New(rand.NewPCG(17, 18)), 20)
	want := state(t, s)
	ro, err := os.Open(segmentPath(dir, s.log.num)) // writes to it fail, and so does Truncate
	if err != nil {
		t.Fatal(err)
	}
	s.log.f.Close()
	s.log.f = ro
	for range 2 {
		err := s.Update(context.Background(), func(tx store.Tx) error {
			return tx.Insert(&store.Record{Kind: "k", ID: "lost"})
		})
		if err == nil {
			t.Fatal("Update succeeded though the log cannot be written")
		}
	}
	if got := state(t, s); !maps.Equal(got, want) {
		t.Errorf("memory changed by failed commits: %v", diff(got, want))
	}
	s.Close()
	if got := state(t, openTest(t, dir)); !maps.Equal(got, want) {
		t.Errorf("after reopen: %v", diff(got, want))
	}
}
