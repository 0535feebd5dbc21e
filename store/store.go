// Package store is the contract between Hoist's domain and its storage. A store persists
// records and does compare-and-set; it holds no business rules. Two implementations exist,
// store/sqlite (embedded, the default) and store/postgres, and both pass the one conformance
// suite in store/storetest.
//
// Durability: when Update returns nil, its writes are committed and survive a crash of the
// process (kill -9).
package store

import (
	"context"
	"errors"
	"io"
)

// Errors a store returns. Callers test for them with errors.Is.
var (
	// ErrNotFound: no record of that kind and ID.
	ErrNotFound = errors.New("store: record not found")
	// ErrExists: Insert found a record of that kind and ID already there.
	ErrExists = errors.New("store: record already exists")
	// ErrConflict: Put found a different version than the one the caller read. Update retries
	// its function when the function returns an error wrapping ErrConflict.
	ErrConflict = errors.New("store: version conflict")
	// ErrUnavailable: the store cannot be reached (its database is down, restarting or cut
	// off). The operation may succeed if tried again later; a write that failed with it at
	// commit may or may not have committed.
	ErrUnavailable = errors.New("store: unavailable")
)

// Record is one stored resource: an opaque document the domain owns, addressed by kind and ID.
type Record struct {
	// Kind is the resource type, e.g. "alias", "build", "location".
	Kind string
	// ID is unique within Kind.
	ID string
	// Parent optionally groups records of a kind for List (e.g. the fleet of a game session).
	Parent string
	// Version is set by the store: 1 on insert, incremented on every Put.
	Version int64
	// Seq is set by the store on insert: increasing in insertion order within the store. List
	// returns records in Seq order.
	Seq int64
	// Data is the document, usually JSON.
	Data []byte
}

// ListOptions selects records for Tx.List.
type ListOptions struct {
	// Parent, when not empty, keeps only records with this Parent.
	Parent string
	// AfterSeq keeps only records with Seq > AfterSeq (a pagination cursor).
	AfterSeq int64
	// Limit caps the number of records returned; 0 means no cap.
	Limit int
}

// Store opens transactions.
type Store interface {
	// Get reads one record outside any transaction: the cheapest consistent read, for
	// operations that need a single record. ErrNotFound if there is none.
	Get(ctx context.Context, kind, id string) (*Record, error)
	// View runs fn in a read-only transaction that sees one consistent state.
	View(ctx context.Context, fn func(Tx) error) error
	// Update runs fn in a read-write transaction and commits it when fn returns nil. When fn
	// returns an error wrapping ErrConflict (a concurrent writer won a compare-and-set), the
	// transaction is rolled back and fn runs again, a bounded number of times, so fn must have
	// no effects outside the Tx. Any other error rolls back and is returned as it is.
	Update(ctx context.Context, fn func(Tx) error) error
	// Close releases the store.
	Close() error
}

// Tx reads and writes records inside one transaction. A Tx must not be used after the
// function it was given to returns. Records returned are the caller's to keep.
type Tx interface {
	// Get returns the record, or ErrNotFound.
	Get(kind, id string) (*Record, error)
	// Insert adds a new record and sets its Version (1) and Seq; ErrExists if the kind and ID
	// are taken.
	Insert(r *Record) error
	// Put replaces a record read earlier, if its stored Version still equals r.Version; it
	// then increments r.Version. ErrConflict on a version mismatch, ErrNotFound if it is gone.
	// Seq is kept.
	Put(r *Record) error
	// Delete removes a record; ErrNotFound if it is not there.
	Delete(kind, id string) error
	// List returns records of a kind in Seq order, filtered by opt.
	List(kind string, opt ListOptions) ([]*Record, error)
}

// AnnouncedPrefix marks the record kinds whose writes (inserts and puts) are announced to watchers (see
// Watcher): the outbox of consequences that must leave the store, such as pushes to
// processes and events for subscribers.
const AnnouncedPrefix = "outbox"

// Announced reports whether writes of records of kind are announced to watchers.
func Announced(kind string) bool {
	return len(kind) >= len(AnnouncedPrefix) && kind[:len(AnnouncedPrefix)] == AnnouncedPrefix
}

// Announcement tells a watcher that a committed transaction inserted or replaced a record of
// Kind with Parent. Missed is set instead when announcements may have been lost (the store's
// notification channel was re-established); the watcher should then reread everything.
type Announcement struct {
	Kind, Parent string
	Missed       bool
}

// Watcher is implemented by stores that announce, to every process sharing the store, the
// writes of records of announced kinds (Announced) once they are committed: the embedded store within
// its process, PostgreSQL through LISTEN/NOTIFY. Announcements are a wake-up, not a log: a
// watcher reads the records themselves and must also read on its own from time to time.
type Watcher interface {
	// Watch calls fn for every announcement until ctx is done. fn runs on the store's
	// goroutine and must not block or call the store.
	Watch(ctx context.Context, fn func(Announcement))
}

// Elector is implemented by stores that several server processes share (PostgreSQL): it
// chooses one leader among the processes that campaign, with the database's own locking, so
// that work which must happen once in the cluster (the timer loops) runs on one process. A
// store only one process can open (the embedded store) does not implement it: its process
// always leads.
type Elector interface {
	// Lead campaigns until ctx is done. Each time this process wins, it calls lead with a
	// context that is cancelled as soon as leadership is lost (the database connection that
	// holds it failed, or ctx ended), and waits for lead to return before campaigning again.
	// At most one process in the cluster runs lead at a time, except that a process cut off
	// from the database notices within a few seconds: work done under lead must still commit
	// with compare-and-set.
	Lead(ctx context.Context, lead func(ctx context.Context))
}

// Blobs is implemented by stores that keep files too large for a record — uploaded builds,
// game session logs — where every process sharing the store can read them: the embedded
// store in its directory, PostgreSQL in a table of chunks. A blob is written whole and read
// whole; writing a key again replaces the blob, and readers see the old one or the new one,
// never a mix.
type Blobs interface {
	// PutBlob stores everything r yields under key and returns its size. The blob is visible
	// once PutBlob returns nil, and not before.
	PutBlob(ctx context.Context, key string, r io.Reader) (int64, error)
	// OpenBlob returns a reader over the blob and its size, or ErrNotFound.
	OpenBlob(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// DeleteBlob removes a blob; a missing one is not an error.
	DeleteBlob(ctx context.Context, key string) error
	// ListBlobs returns the keys of the visible blobs that begin with prefix, in ascending
	// byte order.
	ListBlobs(ctx context.Context, prefix string) ([]string, error)
}

type casOnlyKey struct{}

// CompareAndSetOnly marks ctx for an Update whose correctness rests only on Put's
// compare-and-set and Insert's uniqueness: nothing it decides depends on a record being
// absent, or on two of its reads showing one moment. A store may then run it with less
// isolation than serializable and defer its writes (PostgreSQL: each read is one statement
// seeing the latest committed state, and the writes are sent together when the function
// returns, committed all or none; that spares the hot paths round trips and the serialization
// failures of unrelated neighbours). The function still reads its own writes (Get and List
// show them), but a write's own failure may come from Update instead of from the write: a
// stale Put makes Update run the function again (ErrConflict), and a Put or Delete of a record
// that is gone, or an Insert of a taken ID, fails the Update with ErrNotFound or ErrExists,
// none of its writes applied. A deferred Insert sets the record's Seq only when the Update
// commits. The embedded store runs every Update alone and ignores the mark.
func CompareAndSetOnly(ctx context.Context) context.Context {
	return context.WithValue(ctx, casOnlyKey{}, true)
}

// IsCompareAndSetOnly reports whether ctx carries the CompareAndSetOnly mark.
func IsCompareAndSetOnly(ctx context.Context) bool {
	v, _ := ctx.Value(casOnlyKey{}).(bool)
	return v
}
