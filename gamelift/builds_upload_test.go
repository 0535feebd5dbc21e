package gamelift

import (
	"archive/zip"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

// writeZip writes a zip holding files (name -> content) to a new file in dir.
func writeZip(t *testing.T, dir string, files map[string]string) string {
	t.Helper()
	p := filepath.Join(dir, "build.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, content := range files {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(content))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return p
}

func TestCreateBuildWithoutStorageIssuesUploadCredentials(t *testing.T) {
	f := newFixture(t, "")
	out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{Name: api.String("x"), OperatingSystem: linux()}))(t)
	id := *out.Build.BuildId
	c := out.UploadCredentials
	if c == nil || !strings.HasPrefix(api.Deref(c.AccessKeyId), "ASIA") || api.Deref(c.SecretAccessKey) == "" || api.Deref(c.SessionToken) == "" {
		t.Fatalf("UploadCredentials = %+v", c)
	}
	if api.Deref(out.StorageLocation.Bucket) != UploadBucket || api.Deref(out.StorageLocation.Key) != id+".zip" {
		t.Errorf("StorageLocation = %+v", out.StorageLocation)
	}
	g := ok(f.svc.UploadGrant(f.ctx, *c.AccessKeyId))(t)
	if g.BuildID != id || g.SecretAccessKey != *c.SecretAccessKey || g.SessionToken != *c.SessionToken || !g.Open ||
		!g.Expires.Equal(t0.Add(time.Hour)) || g.Key != id+".zip" {
		t.Errorf("grant = %+v", g)
	}
	f.clock.Advance(time.Hour)
	if _, err := f.svc.UploadGrant(f.ctx, *c.AccessKeyId); !errors.Is(err, ErrUploadKeyExpired) {
		t.Errorf("after an hour: %v, want ErrUploadKeyExpired", err)
	}
	fresh := ok(f.h.RequestUploadCredentials(f.ctx, &api.RequestUploadCredentialsInput{BuildId: out.Build.BuildArn}))(t)
	if *fresh.UploadCredentials.AccessKeyId == *c.AccessKeyId || *fresh.StorageLocation.Key != id+".zip" {
		t.Errorf("RequestUploadCredentials = %+v", fresh)
	}
	if _, err := f.svc.UploadGrant(f.ctx, *c.AccessKeyId); !errors.Is(err, ErrUploadKeyUnknown) {
		t.Errorf("expired key after RequestUploadCredentials: %v, want it removed", err)
	}
	ok(f.svc.UploadGrant(f.ctx, *fresh.UploadCredentials.AccessKeyId))(t)
}

func TestRequestUploadCredentialsErrors(t *testing.T) {
	f := newFixture(t, "")
	wantCode(t, second(f.h.RequestUploadCredentials(f.ctx, &api.RequestUploadCredentialsInput{
		BuildId: api.String("build-00000000-0000-4000-8000-000000000099")})), api.NotFoundException)
	local := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux(),
		StorageLocation: &api.S3Location{Bucket: api.String(LocalBucket), Key: api.String(t.TempDir())}}))(t)
	wantCode(t, second(f.h.RequestUploadCredentials(f.ctx, &api.RequestUploadCredentialsInput{
		BuildId: local.Build.BuildId})), api.InvalidRequestException)
	if _, err := f.svc.UploadGrant(f.ctx, "ASIAUNKNOWN"); !errors.Is(err, ErrUploadKeyUnknown) {
		t.Errorf("unknown key: %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestBuildUploaded(t *testing.T) {
	cases := []struct {
		name, os string
		files    map[string]string // nil: not a zip
		status   string
		size     int64
		script   string
		reason   string
	}{
		{"linux with install.sh", "AMAZON_LINUX_2023", map[string]string{"install.sh": "#!/bin/sh\n", "bin/server": "12345"}, buildReady, 15, "install.sh", ""},
		{"windows with install.bat", "WINDOWS_2016", map[string]string{"install.bat": "@echo off", "install.sh": "x"}, buildReady, 10, "install.bat", ""},
		{"no install script", "AMAZON_LINUX_2023", map[string]string{"sub/install.sh": "x"}, buildReady, 1, "", ""},
		{"not a zip", "AMAZON_LINUX_2023", nil, buildFailed, 0, "", "not a valid zip"},
		{"escaping entry", "AMAZON_LINUX_2023", map[string]string{"../evil": "x"}, buildFailed, 0, "", "outside its root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, "")
			os := api.OperatingSystem(c.os)
			out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: &os}))(t)
			id := *out.Build.BuildId
			file := filepath.Join(t.TempDir(), "build.zip")
			if c.files != nil {
				file = writeZip(t, t.TempDir(), c.files)
			} else if err := osWrite(file, "plain text"); err != nil {
				t.Fatal(err)
			}
			files := ok(f.svc.BuildUploaded(f.ctx, id, file))(t)
			if files.Status != c.status || files.InstallScript != c.script || !strings.Contains(files.FailureReason, c.reason) ||
				files.Path != file || !files.Owned || files.Layout != LayoutZip {
				t.Errorf("files = %+v", files)
			}
			b := ok(f.h.DescribeBuild(f.ctx, &api.DescribeBuildInput{BuildId: &id}))(t).Build
			if string(*b.Status) != c.status || *b.SizeOnDisk != c.size {
				t.Errorf("build status %s size %d, want %s %d", *b.Status, *b.SizeOnDisk, c.status, c.size)
			}
			if _, err := f.svc.BuildUploaded(f.ctx, id, file); !errors.Is(err, ErrUploadClosed) {
				t.Errorf("second upload: %v, want ErrUploadClosed", err)
			}
			g := ok(f.svc.UploadGrant(f.ctx, *out.UploadCredentials.AccessKeyId))(t)
			if g.Open {
				t.Errorf("grant still open after the upload")
			}
		})
	}
}

func osWrite(p, s string) error { return os.WriteFile(p, []byte(s), 0o600) }

func TestLocalBuilds(t *testing.T) {
	f := newFixture(t, "")
	dir := t.TempDir()
	osWrite(filepath.Join(dir, "install.sh"), "#!/bin/sh\n")
	os.Mkdir(filepath.Join(dir, "bin"), 0o700)
	osWrite(filepath.Join(dir, "bin", "server"), "123")
	zipFile := writeZip(t, t.TempDir(), map[string]string{"server": "1234567"})
	notZip := filepath.Join(t.TempDir(), "x.zip")
	osWrite(notZip, "nope")
	cases := []struct {
		key, status string
		size        int64
	}{{dir, buildReady, 13}, {zipFile, buildReady, 7}, {notZip, buildFailed, 0}}
	for _, c := range cases {
		loc := &api.S3Location{Bucket: api.String(LocalBucket), Key: api.String(c.key)}
		out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux(), StorageLocation: loc}))(t)
		if string(*out.Build.Status) != c.status || *out.Build.SizeOnDisk != c.size || out.UploadCredentials != nil ||
			out.StorageLocation != loc {
			t.Errorf("%s: build %s size %d, creds %v", c.key, *out.Build.Status, *out.Build.SizeOnDisk, out.UploadCredentials)
		}
		files := ok(f.svc.BuildFiles(f.ctx, *out.Build.BuildId))(t)
		if files.Owned || files.Path != c.key {
			t.Errorf("%s: files %+v", c.key, files)
		}
		ok(f.h.DeleteBuild(f.ctx, &api.DeleteBuildInput{BuildId: out.Build.BuildId}))(t)
		if _, err := os.Stat(c.key); err != nil {
			t.Errorf("deleting a local build removed its files: %v", err)
		}
	}
	for _, key := range []string{"relative/path.zip", filepath.Join(dir, "missing.zip")} {
		loc := &api.S3Location{Bucket: api.String(LocalBucket), Key: api.String(key)}
		f.unchanged(t, api.InvalidRequestException, func() error {
			return second(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux(), StorageLocation: loc}))
		})
	}
}

func TestDeleteBuildRemovesUploadAndCredentials(t *testing.T) {
	f := newFixture(t, "")
	out := ok(f.h.CreateBuild(f.ctx, &api.CreateBuildInput{OperatingSystem: linux()}))(t)
	id := *out.Build.BuildId
	buildDir := filepath.Join(t.TempDir(), id)
	os.Mkdir(buildDir, 0o700)
	file := writeZip(t, buildDir, map[string]string{"a": "b"})
	ok(f.svc.BuildUploaded(f.ctx, id, file))(t)
	ok(f.h.DeleteBuild(f.ctx, &api.DeleteBuildInput{BuildId: &id}))(t)
	if _, err := os.Stat(buildDir); !os.IsNotExist(err) {
		t.Errorf("build directory still there: %v", err)
	}
	if _, err := f.svc.UploadGrant(f.ctx, *out.UploadCredentials.AccessKeyId); !errors.Is(err, ErrUploadKeyUnknown) {
		t.Errorf("credentials of a deleted build: %v", err)
	}
}
