package gamelift

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// defaultPageSize is the page size of a List operation called without Limit. GameLift does not
// document one; clients that follow NextToken see every item either way.
const defaultPageSize = 100

// startCursor is the cursor of a request without NextToken: before every record (store Seqs
// are positive) and before ListLocations' home-Region entry, which sits at Seq 0.
const startCursor int64 = -1

// pageToken is what an opaque NextToken carries: the store Seq of the last item returned and
// a hash of the operation and filters it belongs to.
type pageToken struct {
	After  int64  `json:"after"`
	Filter string `json:"filter"`
}

// filterHash identifies an operation and its filter values, so that a token is refused by
// another operation or under other filters.
func filterHash(op string, filters ...string) string {
	sum := sha256.Sum256([]byte(op + "\x00" + strings.Join(filters, "\x00")))
	return base64.RawURLEncoding.EncodeToString(sum[:9])
}

// encodeToken returns the NextToken resuming after Seq after.
func encodeToken(after int64, hash string) *string {
	data, _ := json.Marshal(pageToken{After: after, Filter: hash}) // cannot fail: two plain fields
	tok := base64.StdEncoding.EncodeToString(data)
	return &tok
}

// decodeToken returns the cursor a request starts from: startCursor without a token, else the
// token's cursor. A token that does not decode or was issued for other filters is an
// InvalidRequestException.
func decodeToken(tok *string, hash string) (int64, error) {
	if tok == nil {
		return startCursor, nil
	}
	invalid := api.Errorf(api.InvalidRequestException, "Invalid NextToken: %s", *tok)
	data, err := base64.StdEncoding.DecodeString(*tok)
	if err != nil {
		return 0, invalid
	}
	var t pageToken
	if err := json.Unmarshal(data, &t); err != nil || t.Filter != hash || t.After < 0 {
		return 0, invalid
	}
	return t.After, nil
}

// pageSize is the Limit of a request, or defaultPageSize when absent.
func pageSize(limit *int32) int {
	if limit == nil || *limit <= 0 {
		return defaultPageSize
	}
	return int(*limit)
}

// scanned is one page of documents found by scan.
type scanned[T any] struct {
	Items []*T
	// Last is the Seq of the last item in Items.
	Last int64
	// More reports that at least one more accepted document follows Last.
	More bool
}

// scan walks the records of kind in Seq order after cursor, decoding each into a T and
// keeping those keep accepts, until it has limit of them and knows whether another follows.
// Filtering happens here, above the store, which only pages by Seq.
func scan[T any](tx store.Tx, kind string, cursor int64, limit int, keep func(*T) bool) (scanned[T], error) {
	return scanChildren(tx, kind, "", cursor, limit, keep)
}

// scanChildren is scan over the records of kind with Parent parent ("" for every record).
func scanChildren[T any](tx store.Tx, kind, parent string, cursor int64, limit int, keep func(*T) bool) (scanned[T], error) {
	var page scanned[T]
	batch := max(limit+1, defaultPageSize)
	after := max(cursor, 0)
	for {
		recs, err := tx.List(kind, store.ListOptions{Parent: parent, AfterSeq: after, Limit: batch})
		if err != nil {
			return page, err
		}
		for _, r := range recs {
			after = r.Seq
			doc := new(T)
			if err := json.Unmarshal(r.Data, doc); err != nil {
				return page, err
			}
			if !keep(doc) {
				continue
			}
			if len(page.Items) == limit {
				page.More = true
				return page, nil
			}
			page.Items = append(page.Items, doc)
			page.Last = r.Seq
		}
		if len(recs) < batch {
			return page, nil
		}
	}
}

// next is the NextToken for a scanned page: present only when more items follow.
func next[T any](page scanned[T], hash string) *string {
	if !page.More {
		return nil
	}
	return encodeToken(page.Last, hash)
}

// pageKind pages through the records of kind that keep accepts, in creation order, converting
// each: the common body of the Describe operations that list everything.
func pageKind[D, T any](s *Service, ctx context.Context, kind, hash string, token *string, limit int,
	keep func(*D) bool, conv func(*D) T) ([]T, *string, error) {
	cursor, err := decodeToken(token, hash)
	if err != nil {
		return nil, nil, err
	}
	var page scanned[D]
	err = s.view(ctx, func(tx store.Tx) error {
		page, err = scan(tx, kind, cursor, limit, keep)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	out := make([]T, len(page.Items))
	for i, d := range page.Items {
		out[i] = conv(d)
	}
	return out, next(page, hash), nil
}

// pageNames pages through names in the order given, reading each (a name that names nothing
// fails the call, as read says); the token's cursor is an index into the names.
func pageNames[T any](s *Service, ctx context.Context, names []string, hash string, token *string, limit int,
	read func(store.Tx, string) (T, error)) ([]T, *string, error) {
	cursor, err := decodeToken(token, hash)
	if err != nil {
		return nil, nil, err
	}
	from := int(max(cursor, 0))
	to := min(len(names), from+limit)
	out := []T{}
	err = s.view(ctx, func(tx store.Tx) error {
		out = out[:0]
		for _, name := range names[min(from, to):to] {
			v, err := read(tx, name)
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var tok *string
	if to < len(names) {
		tok = encodeToken(int64(to), hash)
	}
	return out, tok, nil
}
