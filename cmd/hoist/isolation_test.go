package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Run by an ordinary user (who cannot isolate instances), `hoist server --isolation on`
// refuses to start and says why, a mode that does not exist is refused, and the default
// (auto) starts with one warning saying why instances are not isolated.
func TestIsolationOnRefusedWithoutRoot(t *testing.T) {
	if testing.Short() || os.Geteuid() != 0 {
		t.Skip("needs root to run hoist as another user")
	}
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755)
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "hoist")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	const user = 2000000077
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o700)
	os.Chown(data, user, user)
	run := func(args ...string) (string, error) {
		cmd := exec.Command(bin, append([]string{"server", "--data", data, "--listen", "127.0.0.1:0", "--tls-listen", "",
			"--s3-listen", "", "--statsd-listen", "off"}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: user, Gid: user, Groups: []uint32{}}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("--isolation", "on")
	if err == nil || !strings.Contains(out, "isolation is on but this host cannot isolate instances") || !strings.Contains(out, "root") {
		t.Fatalf("--isolation on as an ordinary user: %v\n%s", err, out)
	}
	out, err = run("--isolation", "bogus")
	if err == nil || !strings.Contains(out, "want auto, on or off") {
		t.Fatalf("--isolation bogus: %v\n%s", err, out)
	}
	if log := startLog(t, bin, data, user); strings.Count(log, "local instances are NOT isolated") != 1 || !strings.Contains(log, "root") {
		t.Fatalf("--isolation auto as an ordinary user, log up to listening:\n%s", log)
	}
}

// startLog starts `hoist server` as user and returns its log up to the line saying it
// listens, then stops it.
func startLog(t *testing.T, bin, data string, user uint32) string {
	cmd := exec.Command(bin, "server", "--data", data, "--listen", "127.0.0.1:0", "--tls-listen", "", "--s3-listen", "", "--statsd-listen", "off")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: user, Gid: user, Groups: []uint32{}}}
	stderr, err := cmd.StderrPipe()
	if err != nil || cmd.Start() != nil {
		t.Fatal("cannot start hoist server", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	stop := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // bounds a failing test
	defer stop.Stop()
	var log strings.Builder
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "hoist server listening") {
			break
		}
	}
	return log.String()
}
