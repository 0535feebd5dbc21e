package gamelift

import (
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// LocalBucket is the StorageLocation bucket that names a build already on the server's host:
// its Key is the absolute path of a zip file or a directory there. Hoist reads it in place.
const LocalBucket = "hoist-local"

// Build file layouts.
const (
	// LayoutZip: the build is a zip file.
	LayoutZip = "zip"
	// LayoutDir: the build is a directory.
	LayoutDir = "dir"
)

// buildReady and buildFailed are the statuses a build's files lead to.
const (
	buildReady  = string(api.BuildStatusReady)
	buildFailed = string(api.BuildStatusFailed)
)

// BuildFiles says where a build's files are and what is in them; managed fleets install from it.
type BuildFiles struct {
	// BuildID is the build.
	BuildID string
	// Status is INITIALIZED, READY or FAILED.
	Status string
	// FailureReason says why a FAILED build failed.
	FailureReason string
	// OperatingSystem is the build's OperatingSystem.
	OperatingSystem string
	// Path is the zip file or directory on the server's host; "" before the upload.
	Path string
	// Layout is LayoutZip or LayoutDir.
	Layout string
	// InstallScript is the install script at the root of the build (install.sh, or
	// install.bat for Windows builds), "" when there is none.
	InstallScript string
	// Owned reports whether Hoist keeps the files (an upload under the data directory) rather
	// than reading them where the operator put them.
	Owned bool
	// Blob, for an upload, is the key of the zip in the store's blobs (OpenBuildBlob): every
	// node reads it there when Path is not on its disk.
	Blob string
}

// buildContent is what an inspection of build files found.
type buildContent struct {
	size    int64  // uncompressed bytes
	script  string // install script at the root, if any
	problem string // why the files are not a usable build; "" when they are
}

// installScriptName is the install script GameLift runs from a build's root: install.bat on
// Windows, install.sh elsewhere.
func installScriptName(operatingSystem string) string {
	if strings.HasPrefix(operatingSystem, "WINDOWS") {
		return "install.bat"
	}
	return "install.sh"
}

// inspectZip reads a zip's directory: its uncompressed size and install script, or why it is
// not a usable build.
func inspectZip(file, operatingSystem string) buildContent {
	zr, err := zip.OpenReader(file)
	if err != nil {
		return buildContent{problem: "the build is not a valid zip file: " + err.Error()}
	}
	defer zr.Close()
	var c buildContent
	files := 0
	for _, f := range zr.File {
		name := strings.TrimPrefix(strings.ReplaceAll(f.Name, `\`, "/"), "./")
		if path.IsAbs(name) || name == ".." || strings.HasPrefix(name, "../") || strings.Contains(name, "/../") {
			return buildContent{problem: fmt.Sprintf("the zip file has an entry outside its root: %q", f.Name)}
		}
		if f.FileInfo().IsDir() {
			continue
		}
		files++
		c.size += int64(f.UncompressedSize64)
		if name == installScriptName(operatingSystem) {
			c.script = name
		}
	}
	if files == 0 {
		return buildContent{problem: "the zip file holds no files"}
	}
	return c
}

// inspectDir walks a build directory: the size of its files and its install script.
func inspectDir(dir, operatingSystem string) buildContent {
	var c buildContent
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		c.size += info.Size()
		return nil
	})
	if err != nil {
		return buildContent{problem: "the build directory cannot be read: " + err.Error()}
	}
	if files == 0 {
		return buildContent{problem: "the build directory holds no files"}
	}
	if info, err := os.Stat(filepath.Join(dir, installScriptName(operatingSystem))); err == nil && info.Mode().IsRegular() {
		c.script = installScriptName(operatingSystem)
	}
	return c
}

// settle sets a build's status from an inspection of its files at file.
func (d *buildDoc) settle(c buildContent, file, layout string, owned bool) {
	d.Files, d.Layout, d.Owned = file, layout, owned
	if c.problem != "" {
		d.Status, d.FailureReason, d.SizeOnDisk, d.InstallScript = buildFailed, c.problem, 0, ""
		return
	}
	d.Status, d.FailureReason, d.SizeOnDisk, d.InstallScript = buildReady, "", c.size, c.script
}

// localBuild settles a build whose StorageLocation is in LocalBucket: the Key must be the
// absolute path of a zip file or a directory on this host.
func localBuild(d *buildDoc) error {
	p := d.Storage.Key
	if !filepath.IsAbs(p) {
		return api.Errorf(api.InvalidRequestException,
			"StorageLocation Key must be an absolute path on the Hoist server's host when Bucket is %s, got %q.", LocalBucket, p)
	}
	info, err := os.Stat(p)
	if err != nil {
		return api.Errorf(api.InvalidRequestException, "StorageLocation Key %q cannot be read on the Hoist server's host: %v", p, err)
	}
	if info.IsDir() {
		d.settle(inspectDir(p, d.OperatingSystem), p, LayoutDir, false)
	} else {
		d.settle(inspectZip(p, d.OperatingSystem), p, LayoutZip, false)
	}
	return nil
}

// BuildUploaded records that the zip of build buildID has been uploaded to file (a path the
// build then owns): the build becomes READY with SizeOnDisk its uncompressed size and its
// install script noted, or FAILED with a reason when the file is not a usable zip. It returns
// ErrUploadClosed when the build no longer takes an upload (it is READY, FAILED or deleted).
func (s *Service) BuildUploaded(ctx context.Context, buildID, file string) (*BuildFiles, error) {
	var doc buildDoc
	if err := s.read(ctx, kindBuild, buildID, &doc, func() error { return ErrUploadClosed }); err != nil {
		return nil, err
	}
	content := inspectZip(file, doc.OperatingSystem)
	blob, err := s.putBuildBlob(ctx, buildID, file, content)
	if err != nil {
		return nil, err
	}
	err = s.update(ctx, func(tx store.Tx) error {
		doc = buildDoc{}
		rec, err := getDoc(tx, kindBuild, buildID, &doc, func() error { return ErrUploadClosed })
		if err != nil {
			return err
		}
		if doc.Status != buildInitialized || doc.Storage != nil {
			return ErrUploadClosed
		}
		doc.settle(content, file, LayoutZip, true)
		doc.Blob = blob
		return putDoc(tx, rec, &doc)
	})
	if err != nil {
		s.deleteBlob(ctx, blob) // another upload of the build won, or nothing was recorded
		return nil, err
	}
	return doc.files(), nil
}

// putBuildBlob copies a usable uploaded zip into the store's blobs, under a key of its own
// (so that a losing concurrent upload cannot overwrite the winner's), and returns the key; ""
// when the store keeps no blobs or the zip is not a usable build.
func (s *Service) putBuildBlob(ctx context.Context, buildID, file string, c buildContent) (string, error) {
	b, ok := s.store.(store.Blobs)
	if !ok || c.problem != "" {
		return "", nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	key := "build/" + buildID + "/" + s.newID() + ".zip"
	_, err = b.PutBlob(ctx, key, f)
	return key, err
}

// deleteBlob removes a blob, best effort: a leftover blob costs space, nothing else.
func (s *Service) deleteBlob(ctx context.Context, key string) {
	if b, ok := s.store.(store.Blobs); ok && key != "" {
		_ = b.DeleteBlob(context.WithoutCancel(ctx), key)
	}
}

// OpenBuildBlob opens an uploaded build's zip (BuildFiles.Blob) from the store's blobs.
func (s *Service) OpenBuildBlob(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	b, ok := s.store.(store.Blobs)
	if !ok {
		return nil, 0, errors.New("the store keeps no blobs")
	}
	return b.OpenBlob(ctx, key)
}

// BuildFiles returns where a build's files are and what they hold.
func (s *Service) BuildFiles(ctx context.Context, buildID string) (*BuildFiles, error) {
	var doc buildDoc
	if err := s.read(ctx, kindBuild, buildID, &doc, buildNotFound(buildID)); err != nil {
		return nil, err
	}
	return doc.files(), nil
}

func (d *buildDoc) files() *BuildFiles {
	return &BuildFiles{BuildID: d.ID, Status: d.Status, FailureReason: d.FailureReason, OperatingSystem: d.OperatingSystem,
		Path: d.Files, Layout: d.Layout, InstallScript: d.InstallScript, Owned: d.Owned, Blob: d.Blob}
}

// removeOwnedFiles deletes the files Hoist keeps for a deleted build: the uploaded zip, and its
// directory when that is named after the build. Files read in place are never touched.
func removeOwnedFiles(d *buildDoc) {
	if !d.Owned || d.Files == "" {
		return
	}
	if dir := filepath.Dir(d.Files); filepath.Base(dir) == d.ID {
		os.RemoveAll(dir)
		return
	}
	os.Remove(d.Files)
}
