package s3api

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Multipart uploads live in the store's blobs, so that every node sharing the store serves
// every request of an upload:
//
//	upload/<build-id>/<upload-id>      the upload; it holds its start (Unix milliseconds)
//	upload/<build-id>/<upload-id>/<n>  part n: partHeaderSize bytes (its MD5 and when it
//	                                   was received), then the part's bytes
//
// Each blob is written whole, so a part replaced by a retried UploadPart is the old part or
// the new one. A part stored after its upload was completed or aborted is removed by the
// UploadPart that stored it, or by the next sweep.
const uploadBlobs = "upload/"

// partHeaderSize is the size of a part blob's header: the MD5 and a big-endian time.
const partHeaderSize = md5.Size + 8

// StaleUpload is how long a multipart upload that is neither completed nor aborted is kept.
const StaleUpload = 7 * 24 * time.Hour

// upload names one multipart upload.
type upload struct{ buildID, id string }

func (u upload) key() string          { return uploadBlobs + u.buildID + "/" + u.id }
func (u upload) partKey(n int) string { return u.key() + "/" + strconv.Itoa(n) }
func (u upload) partsPrefix() string  { return u.key() + "/" }

// now is the time stored in uploads and parts.
func (h *Handler) now() int64 { return h.clock.Now().UnixMilli() }

func closeQuietly(c io.Closer) { _ = c.Close() }

// startUpload records a new upload.
func (h *Handler) startUpload(ctx context.Context, u upload) error {
	_, err := h.blobs.PutBlob(ctx, u.key(), strings.NewReader(strconv.FormatInt(h.now(), 10)))
	return err
}

// uploadStarted returns when an upload started; store.ErrNotFound when there is no such
// upload (never started, completed or aborted).
func (h *Handler) uploadStarted(ctx context.Context, u upload) (time.Time, error) {
	r, _, err := h.blobs.OpenBlob(ctx, u.key())
	if err != nil {
		return time.Time{}, err
	}
	defer closeQuietly(r)
	data, err := io.ReadAll(io.LimitReader(r, 32))
	if err != nil {
		return time.Time{}, err
	}
	ms, _ := strconv.ParseInt(string(data), 10, 64)
	return time.UnixMilli(ms), nil
}

// putPart stores part n, received into file with the given MD5. When the upload was completed
// or aborted meanwhile (on this node or another), the part is removed and NoSuchUpload
// returned.
func (h *Handler) putPart(ctx context.Context, u upload, n int, sum []byte, file string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer closeQuietly(f)
	header := make([]byte, partHeaderSize)
	copy(header, sum)
	binary.BigEndian.PutUint64(header[md5.Size:], uint64(h.now()))
	if _, err := h.blobs.PutBlob(ctx, u.partKey(n), io.MultiReader(bytes.NewReader(header), f)); err != nil {
		return err
	}
	if _, err := h.uploadStarted(ctx, u); err != nil {
		_ = h.blobs.DeleteBlob(context.WithoutCancel(ctx), u.partKey(n))
		if errors.Is(err, store.ErrNotFound) {
			return noSuchUpload()
		}
		return err
	}
	return nil
}

// storedPart is one part as kept in the blobs, open for reading its bytes.
type storedPart struct {
	md5      []byte
	received time.Time
	size     int64
	body     io.ReadCloser
}

// openPart opens part n after its header; store.ErrNotFound when there is none.
func (h *Handler) openPart(ctx context.Context, u upload, n int) (*storedPart, error) {
	r, size, err := h.blobs.OpenBlob(ctx, u.partKey(n))
	if err != nil {
		return nil, err
	}
	header := make([]byte, partHeaderSize)
	if _, err := io.ReadFull(r, header); err != nil {
		closeQuietly(r)
		return nil, err
	}
	return &storedPart{md5: header[:md5.Size], received: time.UnixMilli(int64(binary.BigEndian.Uint64(header[md5.Size:]))),
		size: size - partHeaderSize, body: r}, nil
}

// partNumbers returns the numbers of the parts stored for an upload, ascending.
func (h *Handler) partNumbers(ctx context.Context, u upload) ([]int, error) {
	keys, err := h.blobs.ListBlobs(ctx, u.partsPrefix())
	if err != nil {
		return nil, err
	}
	var numbers []int
	for _, k := range keys {
		if n, err := strconv.Atoi(strings.TrimPrefix(k, u.partsPrefix())); err == nil {
			numbers = append(numbers, n)
		}
	}
	slices.Sort(numbers)
	return numbers, nil
}

// removeUpload deletes an upload and then its parts: once the upload is gone, no node accepts
// another part of it.
func (h *Handler) removeUpload(ctx context.Context, u upload) error {
	if err := h.blobs.DeleteBlob(ctx, u.key()); err != nil {
		return err
	}
	return h.removeParts(ctx, u)
}

// removeParts deletes the parts stored for an upload.
func (h *Handler) removeParts(ctx context.Context, u upload) error {
	keys, err := h.blobs.ListBlobs(ctx, u.partsPrefix())
	for _, k := range keys {
		err = errors.Join(err, h.blobs.DeleteBlob(ctx, k))
	}
	return err
}

// SweepUploads removes, best effort, what nobody can finish: uploads started more than
// StaleUpload ago, uploads of builds that no longer take one (READY, FAILED or deleted), and
// parts left without their upload. It runs when an upload starts, and a server's leader runs
// it every hour (server/loops.go), so that abandoned uploads go when no upload starts.
func (h *Handler) SweepUploads(ctx context.Context) {
	keys, err := h.blobs.ListBlobs(ctx, uploadBlobs)
	if err != nil {
		h.log.Warn("s3: list multipart uploads", "err", err)
		return
	}
	seen := map[upload]bool{} // upload -> whether it is still live
	for _, k := range keys {
		u, isPart := parseUploadKey(k)
		if _, done := seen[u]; done || u.id == "" {
			continue
		}
		seen[u] = !isPart && h.live(ctx, u) // a part listed first has lost its upload
		if !seen[u] {
			if err := h.removeUpload(ctx, u); err != nil {
				h.log.Warn("s3: remove a stale multipart upload", "upload", u.id, "build", u.buildID, "err", err)
			}
		}
	}
}

// parseUploadKey splits the key of an upload or of one of its parts.
func parseUploadKey(key string) (u upload, isPart bool) {
	parts := strings.Split(strings.TrimPrefix(key, uploadBlobs), "/")
	if len(parts) < 2 {
		return upload{}, false
	}
	return upload{buildID: parts[0], id: parts[1]}, len(parts) > 2
}

// live reports whether an upload can still be completed: it is recent and its build still
// takes an upload. It answers true when that cannot be told (the store failing).
func (h *Handler) live(ctx context.Context, u upload) bool {
	started, err := h.uploadStarted(ctx, u)
	if err != nil {
		return !errors.Is(err, store.ErrNotFound)
	}
	if h.clock.Now().Sub(started) > StaleUpload {
		return false
	}
	files, err := h.builds.BuildFiles(ctx, u.buildID)
	var e *api.Error
	if errors.As(err, &e) && e.Code == api.NotFoundException {
		return false
	}
	return err != nil || files.Status == string(api.BuildStatusInitialized)
}
