package sqlite

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Log segments.
//
// The log is a sequence of files log-<K>.seg, K = 1, 2, ...; a new one starts when a snapshot
// is taken, so that a snapshot covers whole segments. A segment is a sequence of frames: the
// payload's length (4 bytes, little-endian), its CRC-32C (4 bytes, little-endian), and the
// payload, one log entry (journal.go). A commit appends its frame with one write system call,
// which puts it in the operating system's page cache: from then on it survives kill -9.
//
// A kill can still cut a write short (Linux stops copying a multi-page write when a fatal
// signal is pending), and a power loss can leave the end of the file unwritten. Opening the
// store therefore stops at the first frame of the last segment that is cut short or fails its
// checksum, and truncates the segment there: that commit never returned to its caller, or the
// loss is the power-loss window the package comment describes. A bad frame in an earlier
// segment, which the snapshot writer synced before relying on it, is reported as corruption.

// frameHeader is the length and checksum in front of each payload.
const frameHeader = 8

// maxEntry bounds a payload's length, so that a corrupt length cannot make Open allocate
// without limit.
const maxEntry = 1 << 30

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// segmentLog is the segment commits append to. It is the committer's alone.
type segmentLog struct {
	dir  string
	num  int64 // the segment's number
	f    *os.File
	size int64 // bytes of whole frames in it
	buf  []byte
}

func segmentPath(dir string, num int64) string {
	return filepath.Join(dir, "log-"+strconv.FormatInt(num, 10)+".seg")
}

// openSegment opens segment num for appending after its first size bytes, creating it if
// needed.
func openSegment(dir string, num, size int64) (*segmentLog, error) {
	f, err := os.OpenFile(segmentPath(dir, num), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, err
	}
	return &segmentLog{dir: dir, num: num, f: f, size: size}, nil
}

// append writes one entry as a frame. If the write fails the segment is cut back to the frames
// before it, so that a later append does not land behind a partial frame; if that fails too,
// the segment is unusable and every later append fails.
func (l *segmentLog) append(entry []byte) error {
	if l.f == nil {
		return errors.New("sqlite store: the log segment is unusable after a failed write")
	}
	if len(entry) > maxEntry {
		return fmt.Errorf("sqlite store: a commit of %d bytes is over the %d-byte limit", len(entry), maxEntry)
	}
	l.buf = binary.LittleEndian.AppendUint32(l.buf[:0], uint32(len(entry)))
	l.buf = binary.LittleEndian.AppendUint32(l.buf, crc32.Checksum(entry, castagnoli))
	l.buf = append(l.buf, entry...)
	if _, err := l.f.WriteAt(l.buf, l.size); err != nil {
		if terr := l.f.Truncate(l.size); terr != nil {
			l.f.Close()
			l.f = nil
		}
		return err
	}
	l.size += int64(len(l.buf))
	if cap(l.buf) > 1<<20 {
		l.buf = nil // do not keep one huge commit's buffer
	}
	return nil
}

// rotate closes the segment and starts the next one; it returns the closed one's number.
func (l *segmentLog) rotate() (int64, error) {
	next, err := openSegment(l.dir, l.num+1, 0)
	if err != nil {
		return 0, err
	}
	old := l.num
	l.close(false)
	*l = *next
	return old, nil
}

// close closes the segment, synced first when sync is set.
func (l *segmentLog) close(sync bool) error {
	if l.f == nil {
		return nil
	}
	var err error
	if sync {
		err = l.f.Sync()
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}

// syncFile syncs a closed file to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// numbered returns the numbers N of the files prefix<N>suffix in dir, in increasing order.
func numbered(dir, prefix, suffix string) ([]int64, error) {
	names, err := filepath.Glob(filepath.Join(dir, prefix+"*"+suffix))
	if err != nil {
		return nil, err
	}
	var nums []int64
	for _, name := range names {
		s := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(name), prefix), suffix)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			nums = append(nums, n)
		}
	}
	slices.Sort(nums)
	return nums, nil
}

// replaySegments calls apply with every entry of segments from on, in order, and returns the
// last segment and the size of its whole frames (from and 0 when there is none). Segments
// must be consecutive.
func replaySegments(dir string, from int64, apply func([]byte) error) (last, size int64, err error) {
	nums, err := numbered(dir, "log-", ".seg")
	if err != nil {
		return 0, 0, err
	}
	nums = slices.DeleteFunc(nums, func(n int64) bool { return n < from })
	last = from
	for i, n := range nums {
		if n != from+int64(i) {
			return 0, 0, fmt.Errorf("log segment %d is missing (found %d)", from+int64(i), n)
		}
		isLast := i == len(nums)-1
		if size, err = replaySegment(segmentPath(dir, n), apply, isLast); err != nil {
			return 0, 0, fmt.Errorf("log segment %d: %w", n, err)
		}
		last = n
	}
	return last, size, nil
}

// replaySegment applies the whole frames of one segment and returns their size. A bad frame
// ends the segment when mayBeTorn is set, and is an error otherwise.
func replaySegment(path string, apply func([]byte) error, mayBeTorn bool) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var size int64
	var head [frameHeader]byte
	for {
		entry, err := readFrame(r, head[:])
		if err == io.EOF {
			return size, nil
		}
		if err != nil {
			if mayBeTorn {
				return size, nil
			}
			return 0, fmt.Errorf("%w at offset %d", err, size)
		}
		if err := apply(entry); err != nil {
			return 0, fmt.Errorf("entry at offset %d: %w", size, err)
		}
		size += frameHeader + int64(len(entry))
	}
}

// errBadFrame is a frame cut short or failing its checksum.
var errBadFrame = errors.New("bad frame")

// readFrame reads one frame's payload; io.EOF at a clean end, errBadFrame otherwise.
func readFrame(r *bufio.Reader, head []byte) ([]byte, error) {
	if _, err := io.ReadFull(r, head); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, errBadFrame
	}
	n := binary.LittleEndian.Uint32(head)
	if n > maxEntry {
		return nil, errBadFrame
	}
	entry := make([]byte, n)
	if _, err := io.ReadFull(r, entry); err != nil {
		return nil, errBadFrame
	}
	if crc32.Checksum(entry, castagnoli) != binary.LittleEndian.Uint32(head[4:]) {
		return nil, errBadFrame
	}
	return entry, nil
}
