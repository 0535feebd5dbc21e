package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/store"
)

// Blobs live as files in <dir>/blobs, one per key (the key path-escaped into one name). A
// blob is written to a temporary file, synced and renamed over the old one, so readers see
// one blob or the other and a crash leaves the old one.
const blobDir = "blobs"

var _ store.Blobs = (*Store)(nil)

func (s *Store) blobPath(key string) string {
	return filepath.Join(s.snap.dir, blobDir, url.PathEscape(key))
}

// PutBlob stores what r yields under key.
func (s *Store) PutBlob(ctx context.Context, key string, r io.Reader) (int64, error) {
	if key == "" {
		return 0, errors.New("sqlite store: empty blob key")
	}
	dir := filepath.Join(s.snap.dir, blobDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	f, err := os.CreateTemp(dir, ".put-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(f.Name()) // after the rename, a no-op
	n, err := io.Copy(f, ctxReader{ctx, r})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.blobPath(key))
	}
	if err == nil {
		err = syncFile(dir) // the rename, durable
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite store: blob %s: %w", key, err)
	}
	return n, nil
}

// OpenBlob opens the blob under key.
func (s *Store) OpenBlob(_ context.Context, key string) (io.ReadCloser, int64, error) {
	f, err := os.Open(s.blobPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, fmt.Errorf("%w: blob %s", store.ErrNotFound, key)
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}

// DeleteBlob removes the blob under key.
func (s *Store) DeleteBlob(_ context.Context, key string) error {
	if err := os.Remove(s.blobPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ListBlobs returns the keys under prefix: the unescaped names of the blob files, without
// the temporary files of writes under way.
func (s *Store) ListBlobs(_ context.Context, prefix string) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.snap.dir, blobDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, e := range entries {
		key, err := url.PathUnescape(e.Name())
		if err == nil && !strings.HasPrefix(e.Name(), ".put-") && strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
