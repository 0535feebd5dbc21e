package s3api

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"hash/crc32"
	"hash/crc64"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/hoist-gg/hoist/gamelift"
)

// zipName is the name of an uploaded build's zip inside its directory.
const zipName = "build.zip"

// buildDir is where a build's upload lives.
func (h *Handler) buildDir(buildID string) string { return filepath.Join(h.dir, buildID) }

// checksumAlgorithms are the flexible checksums S3 accepts (x-amz-checksum-<name>), each
// base64 of the big-endian digest.
var checksumAlgorithms = map[string]func() hash.Hash{
	"crc32":     func() hash.Hash { return crc32.NewIEEE() },
	"crc32c":    func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"crc64nvme": func() hash.Hash { return crc64.New(crc64NVME) },
	"sha1":      sha1.New,
	"sha256":    sha256.New,
}

// crc64NVME is the CRC-64/NVME polynomial (0xAD93D23594C93659), bit-reversed as hash/crc64
// wants it.
var crc64NVME = crc64.MakeTable(0x9A6C9329AC4BC9B5)

// checksum is a flexible checksum a request announces, in a header or a trailer.
type checksum struct {
	header  string // e.g. x-amz-checksum-crc32
	h       hash.Hash
	value   string // the header's value; "" for a trailer, read after the body
	trailer bool
}

// announcedChecksum returns the checksum a request carries, or nil.
func announcedChecksum(r *http.Request) (*checksum, error) {
	if t := strings.ToLower(strings.TrimSpace(r.Header.Get("X-Amz-Trailer"))); t != "" {
		return newChecksum(t, "", true)
	}
	for name, values := range r.Header {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, "x-amz-checksum-") && lower != "x-amz-checksum-type" && lower != "x-amz-checksum-algorithm" {
			return newChecksum(lower, values[0], false)
		}
	}
	return nil, nil
}

func newChecksum(header, value string, trailer bool) (*checksum, error) {
	alg, ok := strings.CutPrefix(header, "x-amz-checksum-")
	newHash := checksumAlgorithms[alg]
	if !ok || newHash == nil {
		return nil, errorf("InvalidRequest", "Unsupported checksum %q.", header)
	}
	return &checksum{header: header, h: newHash(), value: value, trailer: trailer}, nil
}

// check compares the computed checksum with the announced one (from trailer when it was a
// trailer).
func (c *checksum) check(trailer http.Header) error {
	want := c.value
	if c.trailer {
		want = trailer.Get(c.header)
		if want == "" {
			return errorf("InvalidRequest", "The trailer %s announced in x-amz-trailer was not sent.", c.header)
		}
	}
	if got := base64.StdEncoding.EncodeToString(c.h.Sum(nil)); got != want {
		alg := strings.ToUpper(strings.TrimPrefix(c.header, "x-amz-checksum-"))
		return errorf("BadDigest", "The %s you specified did not match the calculated checksum.", alg)
	}
	return nil
}

// received is what receive learned about a body it wrote.
type received struct {
	etag     string // quoted hex MD5
	md5      []byte
	size     int64
	checksum *checksum
}

// receive writes the verified body of q to the new file dst and checks Content-MD5 and the
// flexible checksum. On any failure dst is removed.
func (h *Handler) receive(q *request, dst string) (rec *received, err error) {
	ck, err := announcedChecksum(q.r)
	if err != nil {
		return nil, err
	}
	wantMD5, err := contentMD5(q.r)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.Remove(dst)
		}
	}()
	sum := md5.New()
	w := io.MultiWriter(f, sum)
	if ck != nil {
		w = io.MultiWriter(f, sum, ck.h)
	}
	n, err := io.Copy(w, q.body)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	rec = &received{md5: sum.Sum(nil), size: n, checksum: ck}
	rec.etag = `"` + hex.EncodeToString(rec.md5) + `"`
	return rec, rec.verify(q, wantMD5)
}

// verify checks the received body against Content-MD5 and the flexible checksum.
func (rec *received) verify(q *request, wantMD5 []byte) error {
	if wantMD5 != nil && string(wantMD5) != string(rec.md5) {
		return errorf("BadDigest", "The Content-MD5 you specified did not match what we received.")
	}
	if rec.checksum != nil {
		return rec.checksum.check(q.body.Trailer())
	}
	return nil
}

// contentMD5 decodes the Content-MD5 header, nil when absent.
func contentMD5(r *http.Request) ([]byte, error) {
	v := r.Header.Get("Content-MD5")
	if v == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != md5.Size {
		return nil, errorf("InvalidDigest", "The Content-MD5 you specified is not valid.")
	}
	return b, nil
}

// setChecksumHeader echoes the flexible checksum of a received body.
func (q *request) setChecksumHeader(rec *received) {
	if rec.checksum != nil {
		q.w.Header().Set(rec.checksum.header, base64.StdEncoding.EncodeToString(rec.checksum.h.Sum(nil)))
	}
}

// putObject receives the whole zip in one request.
func (h *Handler) putObject(q *request) error {
	staged := filepath.Join(h.buildDir(q.grant.BuildID), "staging-"+randomID())
	rec, err := h.receive(q, staged)
	if err != nil {
		return err
	}
	defer os.Remove(staged)
	if err := h.commit(q, staged); err != nil {
		return err
	}
	q.w.Header().Set("ETag", rec.etag)
	q.setChecksumHeader(rec)
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// lock returns the mutex that serializes commits of a build.
func (h *Handler) lock(buildID string) *sync.Mutex {
	mu, _ := h.locks.LoadOrStore(buildID, &sync.Mutex{})
	return mu.(*sync.Mutex)
}

// commit moves a completely received zip into place and hands it to the domain. Only the
// first commit of a build wins; later ones get AccessDenied.
func (h *Handler) commit(q *request, staged string) error {
	mu := h.lock(q.grant.BuildID)
	mu.Lock()
	defer mu.Unlock()
	final := filepath.Join(h.buildDir(q.grant.BuildID), zipName)
	closed := errorf("AccessDenied", "Access Denied: build %s no longer accepts an upload; create a new build.", q.grant.BuildID)
	if _, err := os.Stat(final); err == nil {
		return closed
	}
	if err := os.Rename(staged, final); err != nil {
		return err
	}
	files, err := h.builds.BuildUploaded(q.r.Context(), q.grant.BuildID, final)
	if errors.Is(err, gamelift.ErrUploadClosed) {
		os.Remove(final)
		return closed
	}
	if err != nil {
		os.Remove(final)
		return err
	}
	if files.FailureReason != "" {
		h.log.Warn("build upload FAILED", "build", files.BuildID, "reason", files.FailureReason)
	} else {
		h.log.Info("build uploaded", "build", files.BuildID, "status", files.Status, "installScript", files.InstallScript)
	}
	return nil
}

// headObject reports the uploaded zip, or 404 before the upload: from this node's disk when
// the upload was completed here, else from the store's blobs.
func (h *Handler) headObject(q *request) error {
	if info, err := os.Stat(filepath.Join(h.buildDir(q.grant.BuildID), zipName)); err == nil {
		q.w.Header().Set("Last-Modified", info.ModTime().UTC().Format(http.TimeFormat))
		return q.replyHead(info.Size())
	}
	files, err := h.builds.BuildFiles(q.r.Context(), q.grant.BuildID)
	if err != nil || files.Blob == "" {
		return errorf("NoSuchKey", "The specified key does not exist.")
	}
	body, size, err := h.blobs.OpenBlob(q.r.Context(), files.Blob)
	if err != nil {
		return err
	}
	closeQuietly(body)
	return q.replyHead(size)
}

// replyHead answers HeadObject for a zip of the given size.
func (q *request) replyHead(size int64) error {
	q.w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	q.w.Header().Set("Content-Type", "application/zip")
	q.w.WriteHeader(http.StatusOK)
	return nil
}
