package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
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
	checkConsoleURL(t, stdout.String(), m[1])
	waitOutput(t, &stdout, regexp.MustCompile(`(?m)^\[[0-9a-f-]{36}\] .*gameserver ready`), 20*time.Second)
	if !strings.Contains(stderr.String(), "processes ACTIVE 2/2") {
		t.Errorf("no progress line with the ACTIVE processes:\n%s", stderr.String())
	}
	stopDev(t, cancel, done)
	if !strings.Contains(stderr.String(), "fleet "+m[4]+" deleted") {
		t.Errorf("the fleet was not deleted:\n%s", stderr.String())
	}
	if len(pidsOfExe(bin)) > 0 {
		t.Error("game server processes outlive hoist dev")
	}
}

// stopDev cancels a running hoist dev (Ctrl-C) and waits for it to return nil.
func stopDev(t *testing.T, cancel context.CancelFunc, done <-chan error) {
	t.Helper()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hoist dev returned %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("hoist dev did not stop")
	}
}

// checkConsoleURL checks that hoist dev printed the console's URL and that it serves the
// console's page.
func checkConsoleURL(t *testing.T, out, endpoint string) {
	t.Helper()
	m := regexp.MustCompile(`console: +(\S+)`).FindStringSubmatch(out)
	if m == nil || m[1] != endpoint+"/console" {
		t.Fatalf("no console URL %s/console in:\n%s", endpoint, out)
	}
	resp, err := http.Get(m[1] + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/: %s", m[1], resp.Status)
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

// TestDevSpec: hoist.json beside the build gives the fleet, the flags win over it, and a
// directory without a launch path is refused.
func TestDevSpec(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "game"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "hoist.json"), []byte(`{"launchPath": "game", "parameters": "-x", "processes": 3}`), 0o644)
	b := devResolve(t, dir, "--processes", "2")
	want := fleetSpec{InstanceType: "c5.large", Instances: 1,
		Processes:   []devProcess{{LaunchPath: "/local/game/game", Parameters: "-x", ConcurrentExecutions: 2}},
		Permissions: []devPermission{{7000, 8000, "0.0.0.0/0", "TCP"}, {7000, 8000, "0.0.0.0/0", "UDP"}}}
	if !reflect.DeepEqual(b.spec, want) || b.binary != filepath.Join(dir, "game") {
		t.Errorf("resolveBuild: %+v, want %+v", b, want)
	}
	os.Remove(filepath.Join(dir, "hoist.json"))
	o, _ := parseDev([]string{dir}, &bytes.Buffer{})
	if _, err := resolveBuild(o); err == nil {
		t.Error("a directory without a launch path was accepted")
	}
}

// devResolve parses hoist dev's arguments and resolves the build.
func devResolve(t *testing.T, args ...string) devBuild {
	t.Helper()
	o, err := parseDev(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := resolveBuild(o)
	if err != nil {
		t.Fatalf("resolveBuild: %v", err)
	}
	return b
}

const devYAML = `# the fleet hoist dev creates
name: arena
instanceType: c5.xlarge
instances: 2
serverProcesses:
  - launchPath: bin/game
    parameters: --mode ranked
    concurrentExecutions: 3
  - launchPath: /local/game/bin/game
    parameters: --mode casual
maxConcurrentGameSessionActivations: 2
gameSessionActivationTimeoutSeconds: 120
inboundPermissions:
  - {fromPort: 7777, toPort: 7780, protocol: udp}
  - {fromPort: 9000, toPort: 9000, ipRange: 10.0.0.0/8, protocol: TCP}
`

// TestDevSpecYAML: hoist.yaml gives every setting — name, instance type, several server
// processes, activation limits, inbound permissions — and flags override each of them.
func TestDevSpecYAML(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.WriteFile(filepath.Join(dir, "bin", "game"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "hoist.yaml"), []byte(devYAML), 0o644)
	want := fleetSpec{Name: "arena", InstanceType: "c5.xlarge", Instances: 2, MaxActivations: 2, ActivationTimeout: 120,
		Processes:   []devProcess{{"/local/game/bin/game", "--mode ranked", 3}, {"/local/game/bin/game", "--mode casual", 1}},
		Permissions: []devPermission{{7777, 7780, "0.0.0.0/0", "UDP"}, {9000, 9000, "10.0.0.0/8", "TCP"}}}
	b := devResolve(t, dir)
	if !reflect.DeepEqual(b.spec, want) || b.binary != filepath.Join(dir, "bin", "game") {
		t.Errorf("from hoist.yaml: %+v\nwant %+v", b.spec, want)
	}
	if b.spec.processCount() != 8 {
		t.Errorf("processCount = %d, want 8", b.spec.processCount())
	}
	b = devResolve(t, dir, "--name", "solo", "--instance-type", "c5.large", "--instances", "1", "--processes", "2",
		"--max-concurrent-activations", "5", "--activation-timeout", "5m", "--port-range", "8000-8001")
	want = fleetSpec{Name: "solo", InstanceType: "c5.large", Instances: 1, MaxActivations: 5, ActivationTimeout: 300,
		Processes:   []devProcess{{"/local/game/bin/game", "--mode ranked", 2}},
		Permissions: []devPermission{{8000, 8001, "0.0.0.0/0", "TCP"}, {8000, 8001, "0.0.0.0/0", "UDP"}}}
	if !reflect.DeepEqual(b.spec, want) {
		t.Errorf("flags over hoist.yaml: %+v\nwant %+v", b.spec, want)
	}
}

// TestDevSpecErrors: a spec file with an unknown field, both forms of a setting, a bad
// protocol, or beside another spec file is refused with an error naming the problem.
func TestDevSpecErrors(t *testing.T) {
	for _, c := range []struct{ file, body, want string }{
		{"hoist.yaml", "launchPath: game\nlaunchpaht: x\n", "launchpaht"},
		{"hoist.json", `{"launchPath": "game", "nmae": "x"}`, "nmae"},
		{"hoist.yaml", "launchPath: game\nserverProcesses: [{launchPath: game}]\n", "not both"},
		{"hoist.yaml", "portRange: 1-2\ninboundPermissions: [{fromPort: 1, toPort: 2, protocol: TCP}]\n", "not both"},
		{"hoist.yaml", "launchPath: game\ninboundPermissions: [{fromPort: 1, toPort: 2, protocol: ICMP}]\n", "ICMP"},
		{"hoist.yaml", "launchPath: [game\n", "hoist.yaml"},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "game"), []byte("#!/bin/sh\n"), 0o755)
		os.WriteFile(filepath.Join(dir, c.file), []byte(c.body), 0o644)
		o, _ := parseDev([]string{dir}, &bytes.Buffer{})
		if _, err := resolveBuild(o); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s %q: %v, want one line naming %q", c.file, c.body, err, c.want)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "game"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "hoist.yaml"), []byte("launchPath: game\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "hoist.json"), []byte(`{}`), 0o644)
	o, _ := parseDev([]string{dir}, &bytes.Buffer{})
	if _, err := resolveBuild(o); err == nil || !strings.Contains(err.Error(), "keep one") {
		t.Errorf("hoist.yaml and hoist.json together: %v", err)
	}
	o, _ = parseDev([]string{filepath.Join(dir, "game"), "--activation-timeout", "1500ms"}, &bytes.Buffer{})
	os.Remove(filepath.Join(dir, "hoist.json"))
	if _, err := resolveBuild(o); err == nil || !strings.Contains(err.Error(), "whole seconds") {
		t.Errorf("--activation-timeout 1500ms: %v", err)
	}
}

// TestDevYAMLFleet: hoist dev with a hoist.yaml beside the example game server creates the
// fleet it describes — name, instance type, two server process entries, activation limits,
// inbound permissions — as the API then shows, with every process ACTIVE.
func TestDevYAMLFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	bin := buildGame(t)
	os.WriteFile(filepath.Join(filepath.Dir(bin), "hoist.yaml"), []byte(`name: yaml-arena
instanceType: c5.xlarge
serverProcesses:
  - {launchPath: gameserver, parameters: --port 0, concurrentExecutions: 2}
  - {launchPath: gameserver, parameters: --port 0 --unhealthy=false}
maxConcurrentGameSessionActivations: 3
gameSessionActivationTimeoutSeconds: 90
inboundPermissions:
  - {fromPort: 7100, toPort: 7200, protocol: UDP}
`), 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- runDev(ctx, []string{bin, "--listen", "127.0.0.1:0"}, &stdout, &stderr) }()
	m := waitOutput(t, &stdout, regexp.MustCompile(`endpoint: +(\S+)\n +access key ID: +(\S+)\n +secret access key: +(\S+)\n +fleet ID: +(\S+)`), 60*time.Second)
	if !strings.Contains(stderr.String(), "processes ACTIVE 3/3") {
		t.Errorf("no progress line with 3 ACTIVE processes:\n%s", stderr.String())
	}
	c := adminClient{endpoint: m[1], region: "us-west-2", creds: aws.Credentials{AccessKeyID: m[2], SecretAccessKey: m[3]}}
	checkYAMLFleet(t, c, m[4])
	stopDev(t, cancel, done)
}

// checkYAMLFleet checks the fleet TestDevYAMLFleet's hoist.yaml describes.
func checkYAMLFleet(t *testing.T, c adminClient, fleet string) {
	t.Helper()
	ctx := context.Background()
	var attrs struct {
		FleetAttributes []struct{ Name, InstanceType string }
	}
	var rc struct {
		RuntimeConfiguration struct {
			ServerProcesses []struct {
				Parameters           string
				ConcurrentExecutions int
			}
			MaxConcurrentGameSessionActivations, GameSessionActivationTimeoutSeconds int
		}
	}
	var ports struct {
		InboundPermissions []struct {
			FromPort, ToPort  int
			IpRange, Protocol string
		}
	}
	err := errors.Join(c.call(ctx, "GameLift.DescribeFleetAttributes", map[string]any{"FleetIds": []string{fleet}}, &attrs),
		c.call(ctx, "GameLift.DescribeRuntimeConfiguration", map[string]any{"FleetId": fleet}, &rc),
		c.call(ctx, "GameLift.DescribeFleetPortSettings", map[string]any{"FleetId": fleet}, &ports))
	if err != nil || len(attrs.FleetAttributes) != 1 {
		t.Fatalf("describing the fleet: %v", err)
	}
	if a := attrs.FleetAttributes[0]; a.Name != "yaml-arena" || a.InstanceType != "c5.xlarge" {
		t.Errorf("fleet attributes %+v", a)
	}
	r := rc.RuntimeConfiguration
	if len(r.ServerProcesses) != 2 || r.ServerProcesses[0].ConcurrentExecutions != 2 || r.ServerProcesses[1].ConcurrentExecutions != 1 ||
		!strings.HasSuffix(r.ServerProcesses[1].Parameters, "gameserver --port 0 --unhealthy=false") ||
		r.MaxConcurrentGameSessionActivations != 3 || r.GameSessionActivationTimeoutSeconds != 90 {
		t.Errorf("runtime configuration %+v", r)
	}
	if len(ports.InboundPermissions) != 1 || ports.InboundPermissions[0].FromPort != 7100 || ports.InboundPermissions[0].Protocol != "UDP" {
		t.Errorf("inbound permissions %+v", ports.InboundPermissions)
	}
}

// TestDevGoSource: `hoist dev ./examples/gameserver` builds the Go command's source with go
// build and brings it up as an ACTIVE fleet whose processes print their output.
func TestDevGoSource(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, []string{"../../examples/gameserver", "--listen", "127.0.0.1:0", "--parameters", "--port 0"}, &stdout, &stderr)
	}()
	m := waitOutput(t, &stdout, regexp.MustCompile(`endpoint: +(\S+)\n +access key ID: +(\S+)\n +secret access key: +(\S+)\n +fleet ID: +(\S+)`), 120*time.Second)
	checkFleetActive(t, m[1], m[2], m[3], m[4])
	waitOutput(t, &stdout, regexp.MustCompile(`(?m)^\[[0-9a-f-]{36}\] .*gameserver ready`), 20*time.Second)
	stopDev(t, cancel, done)
}
