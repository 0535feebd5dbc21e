package hostd

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/hoist-gg/hoist/agent/supervisor"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/contain"
)

// Sandbox layout: <Dir>/<instance-id>/ stands for the instance's root directory, so a launch
// path written as on GameLift (/local/game/... on Linux, C:\game\... on Windows) names a file
// under it; the build is installed in <sandbox>/local/game.

// gameDir is where the build is installed inside a sandbox.
func gameDir(sandbox string) string { return filepath.Join(sandbox, "local", "game") }

// sandboxPath resolves a launch path inside the sandbox: an absolute Linux path is taken
// from the sandbox root, a Windows C:\game\ path and a relative path from the game
// directory. ".." never leads out of the sandbox.
func sandboxPath(sandbox, launchPath string) string {
	p := strings.ReplaceAll(launchPath, `\`, "/")
	inside := func(base, rel string) string { return filepath.Join(base, path.Clean("/"+rel)) }
	if len(p) >= 3 && p[1] == ':' && p[2] == '/' { // C:/game/...
		rest := p[3:]
		if strings.HasPrefix(strings.ToLower(rest), "game/") {
			return inside(gameDir(sandbox), rest[len("game/"):])
		}
		return inside(sandbox, rest)
	}
	if strings.HasPrefix(p, "/") {
		return inside(sandbox, p)
	}
	return inside(gameDir(sandbox), p)
}

// buildCacheDir is where a node keeps the uploaded builds it fetched from the shared store,
// beside the instances' directory (<data>/build-cache).
const buildCacheDir = "build-cache"

// localBuild returns b with Path on this host: an uploaded zip that is not on this node's
// disk (another node received the upload) is fetched from the shared store into the build
// cache once.
func (h *Host) localBuild(ctx context.Context, b gamelift.BuildFiles) (gamelift.BuildFiles, error) {
	if b.Blob == "" || b.Layout != gamelift.LayoutZip {
		return b, nil
	}
	if _, err := os.Stat(b.Path); err == nil {
		return b, nil
	}
	h.fetchMu.Lock()
	defer h.fetchMu.Unlock()
	cached := filepath.Join(filepath.Dir(h.cfg.Dir), buildCacheDir, url.PathEscape(b.Blob))
	if _, err := os.Stat(cached); err == nil {
		b.Path = cached
		return b, nil
	}
	r, _, err := h.cfg.Control.OpenBuildBlob(ctx, b.Blob)
	if err != nil {
		return b, fmt.Errorf("build %s: %w", b.BuildID, err)
	}
	defer r.Close()
	if err := os.MkdirAll(filepath.Dir(cached), 0o700); err != nil {
		return b, err
	}
	if err := writeFile(cached+".tmp", r, 0o600); err != nil {
		return b, err
	}
	b.Path = cached
	return b, os.Rename(cached+".tmp", cached)
}

// installBuild puts a fresh copy of the build in the sandbox: a zip is unpacked, a directory
// copied.
func installBuild(b gamelift.BuildFiles, sandbox string) error {
	if err := os.RemoveAll(sandbox); err != nil {
		return err
	}
	dst := gameDir(sandbox)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	switch b.Layout {
	case gamelift.LayoutZip:
		return unzip(b.Path, dst)
	case gamelift.LayoutDir:
		return copyTree(b.Path, dst)
	}
	return fmt.Errorf("build %s has no files on this host", b.BuildID)
}

// unzip extracts a zip into dst, refusing entries outside it and keeping file modes.
func unzip(src, dst string) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return err
	}
	defer zr.Close()
	for _, f := range zr.File {
		name := filepath.FromSlash(strings.ReplaceAll(f.Name, `\`, "/"))
		target := filepath.Join(dst, name)
		if !strings.HasPrefix(target, dst+string(filepath.Separator)) && target != dst {
			return fmt.Errorf("zip entry %q is outside the build", f.Name)
		}
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := extract(f, target); err != nil {
			return err
		}
	}
	return nil
}

func extract(f *zip.File, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	r, err := f.Open()
	if err != nil {
		return err
	}
	defer r.Close()
	mode := f.Mode().Perm()
	if mode == 0 {
		mode = 0o644
	}
	return writeFile(target, r, mode|0o600)
}

func writeFile(target string, r io.Reader, mode fs.FileMode) error {
	w, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// copyTree copies a build directory into dst, keeping modes and symbolic links.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			r, err := os.Open(p)
			if err != nil {
				return err
			}
			defer r.Close()
			return writeFile(target, r, info.Mode().Perm()|0o600)
		}
		return nil // sockets, devices: not part of a build
	})
}

// runInstallScript runs the build's install script from the game directory, as GameLift does
// after extracting the build, and fails with its output when it exits non-zero or runs
// longer than the install timeout.
func (in *instance) runInstallScript(ctx context.Context) error {
	dir, script := gameDir(in.dir), in.li.Build.InstallScript
	cmd := exec.Command("/bin/sh", script)
	if strings.HasSuffix(script, ".bat") {
		return fmt.Errorf("install script %s: Windows install scripts cannot run on this host", script)
	}
	var out bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = in.inside(dir), &out, &out
	env := []string{"HOIST_INSTANCE_ROOT=" + in.root(), "HOIST_INSTANCE_IP_ADDRESS=" + in.li.IPAddress}
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if in.contained() {
		if err := in.wrap(cmd, env); err != nil {
			return fmt.Errorf("install script %s: %w", script, err)
		}
	}
	err := cmd.Start()
	contain.Started(cmd)
	if err != nil {
		return fmt.Errorf("install script %s could not start: %w", script, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-in.h.cfg.Clock.After(in.h.cfg.InstallTimeout):
		err = fmt.Errorf("timed out after %s", in.h.cfg.InstallTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // nothing the script started outlives it
	in.killUser()                                       // not even what left the process group
	if err != nil {
		return fmt.Errorf("install script %s on instance %s failed (%v): %s", script, in.li.InstanceID, err, tail(out.String(), 800))
	}
	return nil
}

// tail returns the end of s, at most n bytes.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// checkLaunchPaths checks that every launch path names an executable file in the sandbox.
func checkLaunchPaths(sandbox string, procs []supervisor.ServerProcess) error {
	for _, p := range procs {
		info, err := os.Stat(sandboxPath(sandbox, p.LaunchPath))
		if err != nil || !info.Mode().IsRegular() {
			return fmt.Errorf("launch path %s does not exist in the build", p.LaunchPath)
		}
		if info.Mode().Perm()&0o111 == 0 {
			return fmt.Errorf("launch path %s is not executable", p.LaunchPath)
		}
	}
	return nil
}

// removeSandbox deletes an instance's sandbox; a missing one is fine.
func removeSandbox(dir string) error {
	if err := os.RemoveAll(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
