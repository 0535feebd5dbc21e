package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// syncBuffer is a bytes.Buffer safe for one writer and one reader at a time.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// buildGame builds the example game server into a directory of its own.
func buildGame(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gameserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/gameserver").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// waitOutput waits until re matches buf, and returns the submatches.
func waitOutput(t *testing.T, buf *syncBuffer, re *regexp.Regexp, within time.Duration) []string {
	t.Helper()
	for end := time.Now().Add(within); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		if m := re.FindStringSubmatch(buf.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no %s in the output within %v:\n%s", re, within, buf.String())
	return nil
}

// TestDev: hoist dev brings the example game server up as an ACTIVE fleet, prints an endpoint
// and keys that answer DescribeFleetAttributes, streams the processes' output with their
// process ID, and on cancel (Ctrl-C) deletes the fleet and returns nil.
func TestDev(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	bin := buildGame(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, []string{bin, "--listen", "127.0.0.1:0", "--parameters", "--port 0", "--processes", "2"}, &stdout, &stderr)
	}()
	m := waitOutput(t, &stdout, regexp.MustCompile(`endpoint: +(\S+)\n +access key ID: +(\S+)\n +secret access key: +(\S+)\n +fleet ID: +(\S+)`), 60*time.Second)
	checkFleetActive(t, m[1], m[2], m[3], m[4])
	waitOutput(t, &stdout, regexp.MustCompile(`(?m)^\[[0-9a-f-]{36}\] .*gameserver ready`), 20*time.Second)
	if !strings.Contains(stderr.String(), "processes ACTIVE 2/2") {
		t.Errorf("no progress line with the ACTIVE processes:\n%s", stderr.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hoist dev returned %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("hoist dev did not stop")
	}
	if !strings.Contains(stderr.String(), "fleet "+m[4]+" deleted") {
		t.Errorf("the fleet was not deleted:\n%s", stderr.String())
	}
	if len(pidsOfExe(bin)) > 0 {
		t.Error("game server processes outlive hoist dev")
	}
}

// checkFleetActive calls DescribeFleetAttributes on endpoint with the printed keys.
func checkFleetActive(t *testing.T, endpoint, key, secret, fleet string) {
	t.Helper()
	c := adminClient{endpoint: endpoint, region: "us-west-2", creds: aws.Credentials{AccessKeyID: key, SecretAccessKey: secret}}
	var out struct {
		FleetAttributes []struct{ FleetId, Status string }
	}
	err := c.call(context.Background(), "GameLift.DescribeFleetAttributes", map[string]any{"FleetIds": []string{fleet}}, &out)
	if err != nil || len(out.FleetAttributes) != 1 || out.FleetAttributes[0].Status != "ACTIVE" {
		t.Fatalf("DescribeFleetAttributes: %v %+v", err, out)
	}
}

// pidsOfExe returns the live processes whose executable has the base name of bin and lies in
// a hoist dev work directory.
func pidsOfExe(bin string) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && strings.Contains(exe, "hoist-dev-") && filepath.Base(exe) == filepath.Base(bin) &&
			!strings.Contains(string(stat), ") Z ") {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// TestDevSpec: hoist.json beside the build gives the runtime configuration, the flags win
// over it, and a directory without a launch path is refused.
func TestDevSpec(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "game"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "hoist.json"), []byte(`{"launchPath": "game", "parameters": "-x", "processes": 3}`), 0o644)
	o, err := parseDev([]string{dir, "--processes", "2"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := resolveBuild(o)
	want := devSpec{LaunchPath: "/local/game/game", Parameters: "-x", Processes: 2, Instances: 1, PortRange: "7000-8000"}
	if err != nil || b.spec != want || b.binary != filepath.Join(dir, "game") {
		t.Errorf("resolveBuild: %v %+v, want %+v", err, b, want)
	}
	os.Remove(filepath.Join(dir, "hoist.json"))
	o, _ = parseDev([]string{dir}, &bytes.Buffer{})
	if _, err := resolveBuild(o); err == nil {
		t.Error("a directory without a launch path was accepted")
	}
}
