package s3api_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/s3api"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
)

// env is a GameLift domain with the S3 endpoint in front of it.
type env struct {
	svc    *gamelift.Service
	blobs  store.Blobs
	clock  *clock.Fake
	dir    string
	srv    *httptest.Server
	h      *s3api.Handler
	mu     sync.Mutex
	hashes []string // X-Amz-Content-Sha256 of each request
}

func newEnv(t *testing.T, tls bool) *env {
	t.Helper()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{clock: clock.NewFake(time.Now()), dir: t.TempDir()}
	e.svc = gamelift.New(gamelift.Config{Store: st, Clock: e.clock})
	e.blobs = st
	h := s3api.New(s3api.Config{Builds: e.svc, Blobs: st, Dir: e.dir, Clock: e.clock})
	e.h = h
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.mu.Lock()
		e.hashes = append(e.hashes, r.Header.Get("X-Amz-Content-Sha256"))
		e.mu.Unlock()
		h.ServeHTTP(w, r)
	})
	if tls {
		e.srv = httptest.NewTLSServer(record)
	} else {
		e.srv = httptest.NewServer(record)
	}
	t.Cleanup(e.srv.Close)
	return e
}

// createBuild creates a build to upload, returning its output.
func (e *env) createBuild(t *testing.T) *api.CreateBuildOutput {
	t.Helper()
	os := api.OperatingSystem("AMAZON_LINUX_2023")
	out, err := e.svc.CreateBuild(context.Background(), &api.CreateBuildInput{Name: api.String("b"), OperatingSystem: &os})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// httpClient is the SDK's default HTTP client (it sends Expect: 100-continue with large
// bodies, so a refused upload is answered before its body is sent), trusting the test server.
func (e *env) httpClient() aws.HTTPClient {
	tlsConfig := e.srv.Client().Transport.(*http.Transport).TLSClientConfig
	return awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) { tr.TLSClientConfig = tlsConfig })
}

// client is an S3 client with the given upload credentials, path-style against the endpoint.
func (e *env) client(c *api.AwsCredentials) *s3.Client {
	return s3.New(s3.Options{
		Region:       "us-west-2",
		BaseEndpoint: aws.String(e.srv.URL),
		UsePathStyle: true,
		HTTPClient:   e.httpClient(),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: *c.AccessKeyId, SecretAccessKey: *c.SecretAccessKey, SessionToken: *c.SessionToken}, nil
		}),
		RetryMaxAttempts: 1,
		// What config.LoadDefaultConfig gives: checksums whenever the operation supports them.
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenSupported,
	})
}

func (e *env) status(t *testing.T, id string) *api.Build {
	t.Helper()
	out, err := e.svc.DescribeBuild(context.Background(), &api.DescribeBuildInput{BuildId: &id})
	if err != nil {
		t.Fatal(err)
	}
	return out.Build
}

// zipOf returns a zip holding files (name -> content).
func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range files {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(content)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func put(c *s3.Client, loc *api.S3Location, body []byte) error {
	_, err := c.PutObject(context.Background(), &s3.PutObjectInput{Bucket: loc.Bucket, Key: loc.Key, Body: bytes.NewReader(body)})
	return err
}

func TestPutObjectMakesTheBuildReady(t *testing.T) {
	for _, tls := range []bool{false, true} {
		name := map[bool]string{false: "http", true: "https (aws-chunked with a trailing checksum)"}[tls]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, tls)
			out := e.createBuild(t)
			body := zipOf(t, map[string][]byte{"install.sh": []byte("#!/bin/sh\n"), "bin/server": []byte("binary")})
			// Over TLS the SDK streams a body it cannot seek as aws-chunked, with a trailing
			// checksum; over plain HTTP it signs the body's SHA-256.
			var reader io.Reader = bytes.NewReader(body)
			if tls {
				reader = struct{ io.Reader }{reader}
			}
			_, err := e.client(out.UploadCredentials).PutObject(context.Background(), &s3.PutObjectInput{
				Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key, Body: reader, ContentLength: aws.Int64(int64(len(body)))})
			if err != nil {
				t.Fatalf("PutObject: %v", err)
			}
			b := e.status(t, *out.Build.BuildId)
			if *b.Status != api.BuildStatusReady || *b.SizeOnDisk != 16 {
				t.Errorf("build %s, SizeOnDisk %d; want READY, 16", *b.Status, *b.SizeOnDisk)
			}
			got, err := os.ReadFile(filepath.Join(e.dir, *out.Build.BuildId, "build.zip"))
			if err != nil || !bytes.Equal(got, body) {
				t.Errorf("stored zip differs (%v)", err)
			}
			files, _ := e.svc.BuildFiles(context.Background(), *out.Build.BuildId)
			if files.InstallScript != "install.sh" {
				t.Errorf("InstallScript = %q", files.InstallScript)
			}
			want := map[bool]string{false: "^[0-9a-f]{64}$", true: "^STREAMING-UNSIGNED-PAYLOAD-TRAILER$"}[tls]
			if h := e.hashes[len(e.hashes)-1]; !regexp.MustCompile(want).MatchString(h) {
				t.Errorf("the client sent X-Amz-Content-Sha256 %q, want %s", h, want)
			}
		})
	}
}

func TestMultipartUploadWithTheManager(t *testing.T) {
	e := newEnv(t, false)
	out := e.createBuild(t)
	big := make([]byte, 17<<20)
	rand.Read(big)
	body := zipOf(t, map[string][]byte{"server.bin": big})
	up := manager.NewUploader(e.client(out.UploadCredentials), func(u *manager.Uploader) { u.PartSize = 5 << 20 })
	res, err := up.Upload(context.Background(), &s3.PutObjectInput{Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key,
		Body: bytes.NewReader(body)})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if res.UploadID == "" || !strings.HasSuffix(aws.ToString(res.ETag), `-4"`) {
		t.Errorf("not a 4-part multipart upload: %+v", res)
	}
	b := e.status(t, *out.Build.BuildId)
	if *b.Status != api.BuildStatusReady || *b.SizeOnDisk != int64(len(big)) {
		t.Errorf("build %s, SizeOnDisk %d", *b.Status, *b.SizeOnDisk)
	}
	// A small body: a server that refuses a large one before reading it may have to reset the
	// connection, as S3 does, and the client then sees the reset rather than the answer.
	if err := put(e.client(out.UploadCredentials), out.StorageLocation, body[:1000]); s3Code(err) != "AccessDenied" {
		t.Errorf("second upload: %v, want AccessDenied", err)
	}
	entries, _ := os.ReadDir(filepath.Join(e.dir, *out.Build.BuildId))
	if len(entries) != 1 { // build.zip
		t.Errorf("left in the build directory: %v", entries)
	}
	if keys := e.uploadBlobs(t); len(keys) != 0 {
		t.Errorf("left in the blobs: %q", keys)
	}
}

// uploadBlobs returns the keys of the multipart uploads and parts kept in the store.
func (e *env) uploadBlobs(t *testing.T) []string {
	t.Helper()
	keys, err := e.blobs.ListBlobs(context.Background(), "upload/")
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// TestStaleUploadsAreSwept: starting an upload removes the uploads nobody can finish any more
// (started over StaleUpload ago, or of a build that is READY) and leaves the live ones.
func TestStaleUploadsAreSwept(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	start := func(out *api.CreateBuildOutput) *string {
		loc := out.StorageLocation
		cr, err := e.client(out.UploadCredentials).CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: loc.Bucket, Key: loc.Key})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.client(out.UploadCredentials).UploadPart(ctx, &s3.UploadPartInput{Bucket: loc.Bucket, Key: loc.Key,
			UploadId: cr.UploadId, PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
		if err != nil {
			t.Fatal(err)
		}
		return cr.UploadId
	}
	done, live := e.createBuild(t), e.createBuild(t)
	start(done)
	if err := put(e.client(done.UploadCredentials), done.StorageLocation, zipOf(t, map[string][]byte{"a": []byte("b")})); err != nil {
		t.Fatal(err)
	}
	// An upload started before StaleUpload (S3 clients sign with the real time, so the fake
	// clock cannot be moved a week on): written as uploads.go keeps them.
	old := strconv.FormatInt(e.clock.Now().Add(-s3api.StaleUpload-time.Minute).UnixMilli(), 10)
	// And a part whose upload is gone.
	for key, data := range map[string]string{"upload/build-old/0ld": old, "upload/build-old/0ld/1": "a part", "upload/build-x/gone/1": "a part"} {
		if _, err := e.blobs.PutBlob(ctx, key, strings.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(e.uploadBlobs(t)); n != 5 {
		t.Fatalf("%d upload blobs before the sweep, want 5", n)
	}
	id := start(live)
	want := []string{"upload/" + *live.Build.BuildId + "/" + *id, "upload/" + *live.Build.BuildId + "/" + *id + "/1"}
	if keys := e.uploadBlobs(t); !slices.Equal(keys, want) {
		t.Errorf("after the sweep: %q, want %q", keys, want)
	}
}

// TestSweepUploadsOnItsOwn: a sweep without a new upload (the server's hourly one) leaves a
// live upload and removes it once it is StaleUpload old.
func TestSweepUploadsOnItsOwn(t *testing.T) {
	e := newEnv(t, false)
	ctx := context.Background()
	out := e.createBuild(t)
	loc, c := out.StorageLocation, e.client(out.UploadCredentials)
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: loc.Bucket, Key: loc.Key})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.UploadPart(ctx, &s3.UploadPartInput{Bucket: loc.Bucket, Key: loc.Key, UploadId: cr.UploadId,
		PartNumber: aws.Int32(1), Body: bytes.NewReader([]byte("part"))})
	if err != nil {
		t.Fatal(err)
	}
	e.h.SweepUploads(ctx)
	if n := len(e.uploadBlobs(t)); n != 2 {
		t.Fatalf("%d upload blobs after a sweep of a live upload, want 2 (the upload and its part)", n)
	}
	e.clock.Advance(s3api.StaleUpload + time.Minute)
	e.h.SweepUploads(ctx)
	if keys := e.uploadBlobs(t); len(keys) != 0 {
		t.Fatalf("upload blobs after a sweep of a stale upload: %q, want none", keys)
	}
}

// s3Code returns the S3 error code of err, "" for none.
func s3Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestCredentialsAreChecked(t *testing.T) {
	e := newEnv(t, false)
	out := e.createBuild(t)
	other := e.createBuild(t)
	body := zipOf(t, map[string][]byte{"a": []byte("b")})
	creds := func(f func(c *api.AwsCredentials)) *api.AwsCredentials {
		c := *out.UploadCredentials
		f(&c)
		return &c
	}
	cases := []struct {
		name  string
		creds *api.AwsCredentials
		loc   *api.S3Location
		code  string
	}{
		{"wrong secret", creds(func(c *api.AwsCredentials) { c.SecretAccessKey = api.String("wrong") }), out.StorageLocation, "SignatureDoesNotMatch"},
		{"unknown key", creds(func(c *api.AwsCredentials) { c.AccessKeyId = api.String("ASIAUNKNOWN") }), out.StorageLocation, "InvalidAccessKeyId"},
		{"wrong session token", creds(func(c *api.AwsCredentials) { c.SessionToken = api.String("x") }), out.StorageLocation, "InvalidToken"},
		{"another build's object", out.UploadCredentials, other.StorageLocation, "AccessDenied"},
		{"another bucket", out.UploadCredentials, &api.S3Location{Bucket: api.String("elsewhere"), Key: out.StorageLocation.Key}, "AccessDenied"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := put(e.client(c.creds), c.loc, body); s3Code(err) != c.code {
				t.Errorf("PutObject: %v, want %s", err, c.code)
			}
		})
	}
	if b := e.status(t, *out.Build.BuildId); *b.Status != api.BuildStatusInitialized {
		t.Errorf("build is %s after refused uploads", *b.Status)
	}
	e.clock.Advance(gamelift.UploadCredentialsLifetime)
	if err := put(e.client(out.UploadCredentials), out.StorageLocation, body); s3Code(err) != "ExpiredToken" {
		t.Errorf("after the lifetime: %v, want ExpiredToken", err)
	}
}

func TestNotAZipFails(t *testing.T) {
	e := newEnv(t, false)
	out := e.createBuild(t)
	if err := put(e.client(out.UploadCredentials), out.StorageLocation, []byte("this is not a zip")); err != nil {
		t.Fatalf("PutObject: %v", err)
	}
	files, _ := e.svc.BuildFiles(context.Background(), *out.Build.BuildId)
	if b := e.status(t, *out.Build.BuildId); *b.Status != api.BuildStatusFailed || !strings.Contains(files.FailureReason, "not a valid zip") {
		t.Errorf("build %s, reason %q", *b.Status, files.FailureReason)
	}
}

func TestMultipartErrors(t *testing.T) {
	e := newEnv(t, false)
	out := e.createBuild(t)
	c := e.client(out.UploadCredentials)
	ctx := context.Background()
	loc := out.StorageLocation
	cr, err := c.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: loc.Bucket, Key: loc.Key})
	if err != nil {
		t.Fatal(err)
	}
	part := func(n int32, body []byte) (*s3.UploadPartOutput, error) {
		return c.UploadPart(ctx, &s3.UploadPartInput{Bucket: loc.Bucket, Key: loc.Key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(n), Body: bytes.NewReader(body)})
	}
	p1, err := part(1, []byte("small"))
	if err != nil {
		t.Fatal(err)
	}
	p2, _ := part(2, []byte("tail"))
	parts, err := c.ListParts(ctx, &s3.ListPartsInput{Bucket: loc.Bucket, Key: loc.Key, UploadId: cr.UploadId})
	if err != nil || len(parts.Parts) != 2 || aws.ToInt64(parts.Parts[0].Size) != 5 {
		t.Errorf("ListParts: %+v, %v", parts, err)
	}
	complete := func(ps ...partRef) error {
		_, err := c.CompleteMultipartUpload(ctx, completeInput(loc, cr.UploadId, ps))
		return err
	}
	for name, want := range map[string]struct {
		parts []partRef
		code  string
	}{
		"wrong etag":   {[]partRef{{1, p2.ETag}}, "InvalidPart"},
		"out of order": {[]partRef{{2, p2.ETag}, {1, p1.ETag}}, "InvalidPartOrder"},
		"small part":   {[]partRef{{1, p1.ETag}, {2, p2.ETag}}, "EntityTooSmall"},
	} {
		if err := complete(want.parts...); s3Code(err) != want.code {
			t.Errorf("%s: %v, want %s", name, err, want.code)
		}
	}
	if _, err := c.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: loc.Bucket, Key: loc.Key, UploadId: cr.UploadId}); err != nil {
		t.Fatal(err)
	}
	if _, err := part(3, []byte("x")); s3Code(err) != "NoSuchUpload" {
		t.Errorf("UploadPart after abort: %v, want NoSuchUpload", err)
	}
}

// TestErrorTable checks that every S3 error code the endpoint and the verifier can send has an
// HTTP status in the table.
func TestErrorTable(t *testing.T) {
	codes := regexp.MustCompile(`(?:errorf|s3Errorf)\("([A-Za-z0-9]+)"`)
	files, _ := filepath.Glob("*.go")
	more, _ := filepath.Glob("../wire/sigv4/*.go")
	seen := 0
	for _, f := range append(files, more...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, _ := os.ReadFile(f)
		for _, m := range codes.FindAllSubmatch(src, -1) {
			seen++
			if !s3api.KnownError(string(m[1])) {
				t.Errorf("%s: error code %s has no HTTP status", f, m[1])
			}
		}
	}
	if seen < 20 {
		t.Errorf("found only %d error codes; is the pattern stale?", seen)
	}
}

// partRef is a part number and ETag for CompleteMultipartUpload.
type partRef struct {
	n    int32
	etag *string
}

func completeInput(loc *api.S3Location, uploadID *string, ps []partRef) *s3.CompleteMultipartUploadInput {
	in := &s3.CompleteMultipartUploadInput{Bucket: loc.Bucket, Key: loc.Key, UploadId: uploadID,
		MultipartUpload: &s3types.CompletedMultipartUpload{}}
	for _, p := range ps {
		in.MultipartUpload.Parts = append(in.MultipartUpload.Parts, s3types.CompletedPart{PartNumber: aws.Int32(p.n), ETag: p.etag})
	}
	return in
}
