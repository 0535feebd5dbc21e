// Package s3api is the small S3 endpoint builds are uploaded to: the subset of the Amazon S3
// REST API that `aws gamelift upload-build` (through s3transfer) and the aws-sdk-go-v2 upload
// manager use to put one object, in one request or as a multipart upload. It is a transport: it
// authenticates requests with the temporary credentials the GameLift domain issued
// (gamelift.Service.UploadGrant), writes the object under Config.Dir and hands the finished
// file to the domain (gamelift.Service.BuildUploaded), which decides what the build becomes.
//
// Operations: PutObject, CreateMultipartUpload, UploadPart, CompleteMultipartUpload,
// AbortMultipartUpload, ListParts and HeadObject, path-style (http://host/bucket/key) or
// virtual-hosted-style for the upload bucket (http://hoist-builds.host/key). Anything else is
// answered with S3's NotImplemented error. Errors are S3's XML error documents.
//
// Files: <Dir>/<build-id>/build.zip is the uploaded zip; objects being received are staged
// beside it. A multipart upload and its parts are kept in the store's blobs (Config.Blobs,
// uploads.go) until the upload is completed or aborted, so each request of an upload may reach
// a different node sharing the store, and an interrupted upload survives a restart. cmd/hoist
// (through server) wires it; tests use real S3 clients against it.
package s3api

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/wire/sigv4"
)

// Builds is what the endpoint needs of the GameLift domain; *gamelift.Service implements it.
type Builds interface {
	// UploadGrant returns what upload credentials allow, or gamelift.ErrUploadKeyUnknown /
	// gamelift.ErrUploadKeyExpired.
	UploadGrant(ctx context.Context, accessKeyID string) (*gamelift.UploadGrant, error)
	// BuildUploaded hands over the uploaded zip; gamelift.ErrUploadClosed when the build no
	// longer takes one.
	BuildUploaded(ctx context.Context, buildID, file string) (*gamelift.BuildFiles, error)
	// BuildFiles returns what a build holds, or a NotFoundException.
	BuildFiles(ctx context.Context, buildID string) (*gamelift.BuildFiles, error)
}

// Config is what a Handler depends on.
type Config struct {
	// Builds is the domain. Required.
	Builds Builds
	// Blobs keeps multipart uploads and their parts, shared by every node of the store.
	// Required.
	Blobs store.Blobs
	// Dir is where uploads are received (<Dir>/<build-id>/...). Required.
	Dir string
	// Clock is what request dates are checked against; clock.Real{} when nil.
	Clock clock.Clock
	// Logger receives failures; slog.Default() when nil.
	Logger *slog.Logger
}

// Handler serves the S3 subset. It is safe for concurrent use.
type Handler struct {
	builds   Builds
	blobs    store.Blobs
	dir      string
	clock    clock.Clock
	log      *slog.Logger
	verifier *sigv4.Verifier
	locks    sync.Map // build ID -> *sync.Mutex, held while an upload is committed
}

// New returns a Handler for cfg.
func New(cfg Config) *Handler {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Handler{builds: cfg.Builds, blobs: cfg.Blobs, dir: cfg.Dir, clock: cfg.Clock, log: cfg.Logger,
		verifier: &sigv4.Verifier{Clock: cfg.Clock, Service: sigv4.S3Service}}
}

// request is one S3 request being served.
type request struct {
	w           http.ResponseWriter
	r           *http.Request
	id          string // x-amz-request-id
	bucket, key string
	grant       *gamelift.UploadGrant
	keyID       string
	body        *sigv4.Payload
}

// operation is the handler of one S3 operation.
type operation struct {
	name  string
	write bool // needs a build that still takes an upload
	serve func(h *Handler, q *request) error
}

// route picks the operation of a request, or nil.
func route(method, key string, r *http.Request) *operation {
	if key == "" {
		return nil // no bucket-level operations
	}
	query := r.URL.Query()
	_, uploads := query["uploads"]
	uploadID := query.Has("uploadId")
	switch {
	case method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		return nil
	case method == http.MethodPut && uploadID:
		return &operation{"UploadPart", true, (*Handler).uploadPart}
	case method == http.MethodPut:
		return &operation{"PutObject", true, (*Handler).putObject}
	case method == http.MethodPost && uploads:
		return &operation{"CreateMultipartUpload", true, (*Handler).createMultipart}
	case method == http.MethodPost && uploadID:
		return &operation{"CompleteMultipartUpload", true, (*Handler).completeMultipart}
	case method == http.MethodDelete && uploadID:
		return &operation{"AbortMultipartUpload", false, (*Handler).abortMultipart}
	case method == http.MethodGet && uploadID:
		return &operation{"ListParts", false, (*Handler).listParts}
	case method == http.MethodHead:
		return &operation{"HeadObject", false, (*Handler).headObject}
	}
	return nil
}

// ServeHTTP answers one S3 request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r, id: newRequestID()}
	w.Header().Set("X-Amz-Request-Id", q.id)
	w.Header().Set("Server", "Hoist")
	q.bucket, q.key = target(r)
	op := route(r.Method, q.key, r)
	if op == nil {
		q.fail(errorf("NotImplemented", "A header or operation you provided implies functionality that is not implemented."))
		return
	}
	if err := h.authenticate(q, op); err != nil {
		q.fail(err)
		return
	}
	if err := op.serve(h, q); err != nil {
		h.logInternal(q, op, err)
		q.fail(err)
	}
}

// target returns the bucket and key of a request: from the Host header for the upload bucket in
// virtual-hosted style (hoist-builds.<host>), else from the path (/bucket/key).
func target(r *http.Request) (bucket, key string) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if strings.HasPrefix(host, gamelift.UploadBucket+".") {
		return gamelift.UploadBucket, strings.TrimPrefix(r.URL.Path, "/")
	}
	bucket, key, _ = strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	return bucket, key
}

// logInternal logs an error that is not one of S3's: a warning while the store is
// unavailable, else an error.
func (h *Handler) logInternal(q *request, op *operation, err error) {
	if _, ok := err.(*Error); ok {
		return
	}
	if errors.Is(err, store.ErrUnavailable) {
		h.log.Warn("s3: store unavailable; answered ServiceUnavailable", "operation", op.name, "request", q.id, "err", err)
		return
	}
	h.log.Error("s3: internal error", "operation", op.name, "request", q.id, "build", q.grant.BuildID, "err", err)
}

// newRequestID returns a random request ID.
func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// randomID returns a random identifier for upload IDs and staging files.
func randomID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
