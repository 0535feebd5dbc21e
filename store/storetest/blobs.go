package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/store"
)

// testBlobs checks, for stores that keep blobs, writing, reading, replacing and deleting
// them, empty and multi-megabyte blobs, keys with slashes, and that a failed write leaves the
// old blob.
func testBlobs(t *testing.T, s store.Store) {
	b, ok := s.(store.Blobs)
	if !ok {
		t.Skip("the store keeps no blobs")
	}
	ctx := context.Background()
	read := func(key string) ([]byte, int64, error) {
		r, size, err := b.OpenBlob(ctx, key)
		if err != nil {
			return nil, 0, err
		}
		defer r.Close()
		data, err := io.ReadAll(r)
		return data, size, err
	}
	if _, _, err := read("build/none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("OpenBlob of a missing key: %v, want ErrNotFound", err)
	}
	big := make([]byte, 3<<20+17) // several chunks and a partial one
	rand.Read(big)
	for _, tc := range []struct {
		key  string
		data []byte
	}{{"build/build-1/build.zip", big}, {"empty", nil}, {"log/a b/ü", []byte("small")}} {
		n, err := b.PutBlob(ctx, tc.key, bytes.NewReader(tc.data))
		if err != nil || n != int64(len(tc.data)) {
			t.Fatalf("PutBlob %q: %d bytes, %v", tc.key, n, err)
		}
		got, size, err := read(tc.key)
		if err != nil || size != int64(len(tc.data)) || !bytes.Equal(got, tc.data) {
			t.Fatalf("OpenBlob %q: %d bytes (size %d), %v; want %d", tc.key, len(got), size, err, len(tc.data))
		}
	}
	if _, err := b.PutBlob(ctx, "log/a b/ü", strings.NewReader("replaced")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := read("log/a b/ü"); string(got) != "replaced" {
		t.Errorf("after replacing: %q", got)
	}
	boom := errors.New("the upload broke")
	if _, err := b.PutBlob(ctx, "log/a b/ü", io.MultiReader(strings.NewReader("half"), errReader{boom})); !errors.Is(err, boom) {
		t.Errorf("PutBlob of a failing reader: %v", err)
	}
	if got, _, _ := read("log/a b/ü"); string(got) != "replaced" {
		t.Errorf("a failed write changed the blob to %q", got)
	}
	if keys, err := b.ListBlobs(ctx, "log/"); err != nil || !slices.Equal(keys, []string{"log/a b/ü"}) {
		t.Errorf("ListBlobs(log/) = %q, %v", keys, err)
	}
	if keys, err := b.ListBlobs(ctx, ""); err != nil || !slices.Equal(keys, []string{"build/build-1/build.zip", "empty", "log/a b/ü"}) {
		t.Errorf("ListBlobs() = %q, %v", keys, err)
	}
	if err := b.DeleteBlob(ctx, "build/build-1/build.zip"); err != nil {
		t.Fatal(err)
	}
	if keys, err := b.ListBlobs(ctx, "build/"); err != nil || len(keys) != 0 {
		t.Errorf("ListBlobs(build/) after DeleteBlob = %q, %v", keys, err)
	}
	if _, _, err := read("build/build-1/build.zip"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after DeleteBlob: %v", err)
	}
	if err := b.DeleteBlob(ctx, "build/build-1/build.zip"); err != nil {
		t.Errorf("deleting a missing blob: %v", err)
	}
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }
