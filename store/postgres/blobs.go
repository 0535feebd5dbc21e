package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/google/uuid"
	"github.com/hoist-gg/hoist/store"
	"github.com/jackc/pgx/v5"
)

// Blobs are rows of blobChunk bytes in hoist_blobs, numbered from 0 within a generation.
// PutBlob writes a new generation's chunks under a temporary key, one statement each, then
// renames them in one transaction that first removes the old generation, so a blob is always
// one whole generation. A reader reads one generation: if the blob is replaced meanwhile, its
// next chunk is gone and the read fails rather than mixing the two.
const blobChunk = 1 << 20

var _ store.Blobs = (*Store)(nil)

// PutBlob stores what r yields under key.
func (s *Store) PutBlob(ctx context.Context, key string, r io.Reader) (int64, error) {
	if key == "" {
		return 0, errors.New("postgres store: empty blob key")
	}
	gen := uuid.NewString()
	tmp := "put\x01" + gen // not a key callers use
	n, err := s.writeChunks(ctx, tmp, gen, r)
	if err == nil {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `DELETE FROM hoist_blobs WHERE key = $1`, key); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE hoist_blobs SET key = $1 WHERE key = $2`, key, tmp)
			return err
		})
	}
	if err != nil {
		_, _ = s.pool.Exec(context.WithoutCancel(ctx), `DELETE FROM hoist_blobs WHERE key = $1`, tmp)
		return 0, fmt.Errorf("postgres store: blob %s: %w", key, classify(err))
	}
	return n, nil
}

// writeChunks inserts r's bytes under key and gen, blobChunk at a time.
func (s *Store) writeChunks(ctx context.Context, key, gen string, r io.Reader) (int64, error) {
	buf := make([]byte, blobChunk)
	var n int64
	for part := 0; ; part++ {
		m, err := io.ReadFull(r, buf)
		if m > 0 || part == 0 {
			if _, err := s.pool.Exec(ctx, `INSERT INTO hoist_blobs (key, gen, part, data) VALUES ($1, $2, $3, $4)`, key, gen, part, buf[:m]); err != nil {
				return n, err
			}
			n += int64(m)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// OpenBlob returns a reader that fetches the blob's chunks one at a time.
func (s *Store) OpenBlob(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	var gen string
	var parts int
	var size int64
	err := retryUnavailable(ctx, func() error {
		return classify(s.pool.QueryRow(ctx, `SELECT gen, count(*), sum(length(data)) FROM hoist_blobs WHERE key = $1
			GROUP BY gen LIMIT 1`, key).Scan(&gen, &parts, &size))
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, 0, fmt.Errorf("%w: blob %s", store.ErrNotFound, key)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("postgres store: blob %s: %w", key, err)
	}
	return &blobReader{ctx: ctx, s: s, key: key, gen: gen, parts: parts}, size, nil
}

// DeleteBlob removes the blob under key.
func (s *Store) DeleteBlob(ctx context.Context, key string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM hoist_blobs WHERE key = $1`, key); err != nil {
		return fmt.Errorf("postgres store: blob %s: %w", key, classify(err))
	}
	return nil
}

// ListBlobs returns the keys under prefix, without the temporary keys of writes under way.
func (s *Store) ListBlobs(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	err := retryUnavailable(ctx, func() error {
		rows, err := s.pool.Query(ctx, `SELECT DISTINCT key FROM hoist_blobs
			WHERE starts_with(key, $1) AND NOT starts_with(key, 'put' || chr(1))`, prefix)
		if err != nil {
			return classify(err)
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		slices.Sort(keys) // byte order, whatever the database's collation
		return classify(err)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres store: blobs under %s: %w", prefix, err)
	}
	return keys, nil
}

// blobReader reads a blob chunk by chunk. A blob replaced while it is read fails the read
// (a chunk is missing, or the number of chunks differs) rather than mixing the two.
type blobReader struct {
	ctx   context.Context
	s     *Store
	key   string
	gen   string
	parts int
	next  int
	buf   []byte
}

func (b *blobReader) Read(p []byte) (int, error) {
	for len(b.buf) == 0 {
		if b.next == b.parts {
			return 0, io.EOF
		}
		err := b.s.pool.QueryRow(b.ctx, `SELECT data FROM hoist_blobs WHERE key = $1 AND gen = $2 AND part = $3`,
			b.key, b.gen, b.next).Scan(&b.buf)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, fmt.Errorf("postgres store: blob %s changed while it was read", b.key)
		}
		if err != nil {
			return 0, fmt.Errorf("postgres store: blob %s: %w", b.key, classify(err))
		}
		b.next++
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	return n, nil
}

func (b *blobReader) Close() error { return nil }
