package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// wrapperName is the script `hoist dev` adds at the root of each staged build and launches in
// place of the launch path: it runs the launch path with its output appended to
// <work>/logs/<process-id>.log (in the instance when it is isolated), which tailLogs follows.
const wrapperName = "hoist-dev-run.sh"

const wrapperScript = `#!/bin/sh
# Added by hoist dev: runs the launch path with its output in the dev session's log directory.
bin="$1"; shift
logs=%q
case "$HOIST_INSTANCE_ROOT" in
/) logs=/local/` + devLogsDir + `; mkdir -p "$logs";; # isolated: the sandbox is all it sees
*) case "$bin" in /local/game/*) bin="$HOIST_INSTANCE_ROOT$bin";; esac;;
esac
cd "$(dirname "$bin")" || exit 1
exec "$bin" "$@" >>"$logs/$GAMELIFT_SDK_PROCESS_ID.log" 2>&1
`

// devLogsDir is where the wrapper of an isolated instance (docs/isolation.md) writes the
// processes' output, inside the instance's local directory, since it cannot reach <work>/logs.
const devLogsDir = "hoist-dev-logs"

// logPatterns are the files tailLogs follows: <work>/logs and, for isolated instances, the
// log directory of every instance of the data directory.
func logPatterns(logs, dataDir string) []string {
	return []string{filepath.Join(logs, "*.log"), filepath.Join(dataDir, "instances", "*", "local", devLogsDir, "*.log")}
}

// stage copies the build directory to <work>/builds/<rev> and adds the wrapper script, so
// that each deployment is a snapshot and the processes' output lands in <work>/logs.
func (d *devSession) stage(rev int) (string, error) {
	dst := filepath.Join(d.work, "builds", fmt.Sprint(rev))
	if err := copyTree(d.build.dir, dst); err != nil {
		return "", fmt.Errorf("staging the build: %w", err)
	}
	script := fmt.Sprintf(wrapperScript, filepath.Join(d.work, "logs"))
	return dst, os.WriteFile(filepath.Join(dst, wrapperName), []byte(script), 0o755)
}

// copyTree copies the regular files, directories and symbolic links under src to dst.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		info, err := e.Info()
		switch {
		case err != nil:
			return err
		case e.IsDir():
			return os.MkdirAll(to, 0o755)
		case e.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, to)
		case e.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}

// copyFile copies the file src to dst with mode perm.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// tailLogs follows every <process-id>.log matching patterns until ctx ends, printing each
// complete line as "[process-id] line" on w (under mu, shared with the other output).
func tailLogs(ctx context.Context, patterns []string, w io.Writer, mu *sync.Mutex) {
	offsets := map[string]int64{}
	for {
		var files []string
		for _, p := range patterns {
			m, _ := filepath.Glob(p)
			files = append(files, m...)
		}
		sort.Strings(files)
		for _, f := range files {
			offsets[f] = tailFile(f, offsets[f], w, mu)
		}
		if sleepCtx(ctx, 200*time.Millisecond) != nil {
			for _, f := range files {
				tailFile(f, offsets[f], w, mu) // the last lines
			}
			return
		}
	}
}

// tailFile prints the complete lines of file from offset and returns the offset after them.
func tailFile(file string, offset int64, w io.Writer, mu *sync.Mutex) int64 {
	f, err := os.Open(file)
	if err != nil {
		return offset
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<40))
	if err != nil && len(data) == 0 {
		return offset
	}
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return offset
	}
	prefix := "[" + strings.TrimSuffix(filepath.Base(file), ".log") + "] "
	mu.Lock()
	defer mu.Unlock()
	for _, line := range strings.Split(string(data[:end]), "\n") {
		fmt.Fprintln(w, prefix+line)
	}
	return offset + int64(end) + 1
}

// watch redeploys whenever the binary's modification time changes, until ctx ends: a new
// build and fleet come up, then the old fleet is deleted (a failed deployment is deleted and
// the old fleet kept).
func (d *devSession) watch(ctx context.Context) {
	last := modTime(d.build.binary)
	d.errf("watching %s for changes", d.build.binary)
	for sleepCtx(ctx, time.Second) == nil {
		mt := modTime(d.build.binary)
		if mt.Equal(last) || time.Since(mt) < time.Second { // wait for the writer to finish
			continue
		}
		last = mt
		d.errf("%s changed: deploying it", d.build.binary)
		fleet, err := d.deploy(ctx)
		if err != nil {
			d.errf("redeploy failed, keeping fleet %s: %v", d.fleet, err)
			d.cleanup(fleet)
			continue
		}
		old := d.fleet
		d.fleet = fleet
		d.printReady()
		d.cleanup(old)
	}
}

// modTime is file's modification time, zero when it cannot be read.
func modTime(file string) time.Time {
	st, err := os.Stat(file)
	if err != nil {
		return time.Time{}
	}
	return st.ModTime()
}

// dataDir is the data directory of the server running the session's instances: the
// embedded one under work, or the local server's.
func (d *devSession) dataDir() string {
	if d.srv != nil {
		return filepath.Join(d.work, "data")
	}
	return d.opts.client.dataDir
}
