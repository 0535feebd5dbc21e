package hostd

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/gamelift"
)

func TestSandboxPath(t *testing.T) {
	cases := map[string]string{
		"/local/game/bin/server":   "/sb/local/game/bin/server",
		`C:\game\bin\server.exe`:   "/sb/local/game/bin/server.exe",
		"bin/server":               "/sb/local/game/bin/server",
		"/local/game/../../../etc": "/sb/etc", // Join cleans it, and it stays inside the sandbox
	}
	for in, want := range cases {
		if got := sandboxPath("/sb", in); got != want {
			t.Errorf("sandboxPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// writeZip makes a zip with the given entries (name -> content; mode 0755 for names ending in
// ".sh").
func writeZip(t *testing.T, entries map[string]string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "build.zip")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for name, body := range entries {
		h := &zip.FileHeader{Name: name, Method: zip.Deflate}
		h.SetMode(0o644)
		if strings.HasSuffix(name, ".sh") {
			h.SetMode(0o755)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(body))
	}
	zw.Close()
	f.Close()
	return p
}

func TestInstallBuildFromZipAndDirectory(t *testing.T) {
	sb := filepath.Join(t.TempDir(), "i-1")
	zipped := writeZip(t, map[string]string{"run.sh": "#!/bin/sh\n", "data/level.txt": "1"})
	if err := installBuild(gamelift.BuildFiles{Path: zipped, Layout: gamelift.LayoutZip}, sb); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(sb, "local", "game", "run.sh"))
	if err != nil || info.Mode().Perm()&0o111 == 0 {
		t.Fatalf("run.sh: %v, mode %v", err, info)
	}
	if err := checkLaunchPaths(sb, []supervisor.ServerProcess{{LaunchPath: "/local/game/run.sh"}}); err != nil {
		t.Fatal(err)
	}
	if err := checkLaunchPaths(sb, []supervisor.ServerProcess{{LaunchPath: "/local/game/data/level.txt"}}); err == nil {
		t.Fatal("a file that is not executable passed as a launch path")
	}
	if err := checkLaunchPaths(sb, []supervisor.ServerProcess{{LaunchPath: "/local/game/missing"}}); err == nil {
		t.Fatal("a missing launch path passed")
	}

	dir := filepath.Join(sb, "local", "game") // reinstalling from a directory starts from scratch
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "other.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("other.sh", filepath.Join(src, "link.sh"))
	if err := installBuild(gamelift.BuildFiles{Path: src, Layout: gamelift.LayoutDir}, sb); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "run.sh")); err == nil {
		t.Fatal("files of the previous install survived a reinstall")
	}
	if l, err := os.Readlink(filepath.Join(dir, "link.sh")); err != nil || l != "other.sh" {
		t.Fatalf("symlink %q, %v", l, err)
	}
}

func TestUnzipRefusesEntriesOutsideTheBuild(t *testing.T) {
	zipped := writeZip(t, map[string]string{"../escape.txt": "x"})
	sb := filepath.Join(t.TempDir(), "i-2")
	if err := installBuild(gamelift.BuildFiles{Path: zipped, Layout: gamelift.LayoutZip}, sb); err == nil {
		t.Fatal("a zip entry outside the build was extracted")
	}
	if _, err := os.Stat(filepath.Join(sb, "local", "escape.txt")); err == nil {
		t.Fatal("escape.txt was written")
	}
}
