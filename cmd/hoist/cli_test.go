package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/internal/cli"
	"github.com/hoist-gg/hoist/server"
)

var update = flag.Bool("update", false, "rewrite docs/cli.md's flag table from the flag sets")

// runCLI runs the CLI entry with args and returns the exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := exitCode(run(context.Background(), args, &stdout, &stderr), &stderr)
	return code, stdout.String(), stderr.String()
}

// TestHelpExitsZero: hoist, hoist help and every command's -h/--help print usage, exit 0.
func TestHelpExitsZero(t *testing.T) {
	cases := map[string]string{
		"": "Usage:", "help": "Usage:", "-h": "Usage:", "--help": "Usage:",
		"server -h": "-listen", "server --help": "-s3-listen", "agent -h": "-fleet-id", "agent --help": "-server",
		"bench -h": "-endpoint", "matchsim --help": "-rule-set", "bench --help": "-config", "dev -h": "-watch",
		"time -h": "-endpoint", "fault --help": "failing-store",
	}
	for args, want := range cases {
		code, stdout, stderr := runCLI(t, strings.Fields(args)...)
		if code != 0 || !strings.Contains(stdout+stderr, want) {
			t.Errorf("hoist %s: exit %d, output %q; want 0 and %q", args, code, stdout+stderr, want)
		}
	}
}

// TestBadFlagsExitTwo: unknown flags, bad values and stray arguments give one line and exit 2.
func TestBadFlagsExitTwo(t *testing.T) {
	cases := map[string]string{
		"server --nope":                        "hoist: server: flag provided but not defined: -nope (hoist server -h)",
		"server --allow-any-credentials=maybe": `hoist: server: invalid boolean value "maybe" for -allow-any-credentials`,
		"server stray":                         `hoist: server: unexpected argument "stray"`,
		"agent --grace-period soon":            `hoist: agent: invalid value "soon" for flag -grace-period`,
		"bench --concurrency many":             `hoist: bench: invalid value "many" for flag -concurrency`,
		"matchsim --players x":                 `hoist: matchsim: invalid value "x" for flag -players`,
		"time advance 1m --nope":               "hoist: time: flag provided but not defined: -nope (hoist time -h)",
		"fault failing-store --for soon":       `hoist: fault: invalid value "soon" for flag -for`,
		"nonsense":                             `hoist: unknown command "nonsense"`,
	}
	for args, want := range cases {
		code, stdout, stderr := runCLI(t, strings.Fields(args)...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != 2 || !strings.HasPrefix(lines[len(lines)-1], want) {
			t.Errorf("hoist %s: exit %d, stderr %q; want 2 and %q", args, code, stderr, want)
		}
		if args != "nonsense" && (len(lines) != 1 || stdout != "") {
			t.Errorf("hoist %s: want one line on stderr, got %q / %q", args, stdout, stderr)
		}
	}
}

// TestServerFlagSources: environment variables (the old HOIST_ACCESS_KEY_ID among them) and a
// config file set server flags; the command line wins.
func TestServerFlagSources(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "hoist.json")
	os.WriteFile(cfg, []byte(`{"listen": "127.0.0.1:7000", "region": "eu-west-1", "allow-any-credentials": true, "tls-hosts": "a,b"}`), 0o600)
	t.Setenv("HOIST_ACCESS_KEY_ID", "AKIAENV")
	t.Setenv("HOIST_SECRET_ACCESS_KEY", "secret-from-env")
	t.Setenv("HOIST_REGION", "ap-south-1")
	c, _, err := serverFlags([]string{"--config", cfg, "--listen", "127.0.0.1:7001"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:7001" || c.Region != "ap-south-1" || !c.AllowAnyCredentials || c.AccessKeyID != "AKIAENV" ||
		c.SecretAccessKey != "secret-from-env" || strings.Join(c.TLSHosts, ",") != "a,b" {
		t.Errorf("config %+v", c)
	}
}

// TestVersion: hoist version prints the version, the Go version and a revision.
func TestVersion(t *testing.T) {
	code, stdout, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(stdout, "hoist dev ("+runtime.Version()+", revision ") {
		t.Errorf("hoist version: %d %q", code, stdout)
	}
}

// TestBinary builds hoist with a version set by -ldflags and runs it.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "hoist")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.9.9", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "hoist v9.9.9 (go") {
		t.Errorf("hoist version: %v %q", err, out)
	}
	for args, want := range map[string]int{"server --help": 0, "server --nope": 2, "": 0} {
		err := exec.Command(bin, strings.Fields(args)...).Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if code != want {
			t.Errorf("hoist %s: exit %d (%v), want %d", args, code, err, want)
		}
	}
}

// flagTable is the flag reference generated from the commands' own flag sets.
func flagTable(t *testing.T) string {
	for _, k := range []string{"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		t.Setenv(k, "")
	}
	names := []string{"server", "agent", "bench", "dev", "matchsim", "time", "fault"}
	var cmds []cli.Command
	for _, name := range names {
		sets := cli.Capture(func() { run(context.Background(), []string{name}, &bytes.Buffer{}, &bytes.Buffer{}) })
		if len(sets) != 1 {
			t.Fatalf("hoist %s: captured %d flag sets", name, len(sets))
		}
		cmds = append(cmds, cli.Command{Name: "hoist " + name, Flags: sets[0], Defaults: machineDefaults[name]})
	}
	return cli.Table(cmds)
}

// machineDefaults are the shown defaults of flags whose default depends on the machine or
// its environment.
var machineDefaults = map[string]map[string]string{
	"agent": {"region": "$AWS_REGION, else $AWS_DEFAULT_REGION, else us-west-2", "access-key-id": "$AWS_ACCESS_KEY_ID",
		"secret-access-key": "$AWS_SECRET_ACCESS_KEY", "session-token": "$AWS_SESSION_TOKEN"},
	"bench": {"concurrency": "2 × GOMAXPROCS"},
	"time":  adminDefaults,
	"fault": adminDefaults,
}

const (
	tableBegin = "<!-- flags:begin (generated: go test ./cmd/hoist -run TestCLIDoc -update) -->\n"
	tableEnd   = "<!-- flags:end -->"
)

// TestCLIDoc: docs/cli.md's table is the commands' flags; -update rewrites it.
func TestCLIDoc(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "cli.md")
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok1 := strings.Cut(string(doc), tableBegin)
	_, after, ok2 := strings.Cut(rest, tableEnd)
	if !ok1 || !ok2 {
		t.Fatalf("%s lacks the table markers", path)
	}
	want := before + tableBegin + flagTable(t) + tableEnd + after
	if *update {
		os.WriteFile(path, []byte(want), 0o644)
		return
	}
	if string(doc) != want {
		t.Errorf("%s and the flags disagree; run go test ./cmd/hoist -run TestCLIDoc -update", path)
	}
}

// TestAdminFlagSources: hoist time and hoist fault take their flags from HOIST_* variables
// and --config like every command, over the AWS variables, under the command line: against a
// real dev-mode server, the endpoint comes from HOIST_ENDPOINT (a wrong AWS_ENDPOINT_URL is
// ignored), the keys from the config file, and a fault's duration from HOIST_FOR.
func TestAdminFlagSources(t *testing.T) {
	srv, err := server.New(context.Background(), server.Config{Dev: true, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		AccessKeyID: "AKIAHOISTCLITEST0001", SecretAccessKey: "cli-test-secret-0123456789abcdefghijklmn",
		TLSListen: "", S3Listen: "", StatsDListen: server.StatsDOff})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	defer srv.Shutdown(context.Background())
	cfg := filepath.Join(t.TempDir(), "admin.json")
	os.WriteFile(cfg, []byte(`{"access-key-id": "AKIAHOISTCLITEST0001", "secret-access-key": "cli-test-secret-0123456789abcdefghijklmn"}`), 0o600)
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:1")
	t.Setenv("HOIST_ENDPOINT", srv.URL())
	t.Setenv("HOIST_CONFIG", cfg)
	code, stdout, stderr := runCLI(t, "time", "advance", "90s")
	if code != 0 || !strings.Contains(stdout, "1m30s ahead") {
		t.Fatalf("hoist time advance 90s: %d %q %q", code, stdout, stderr)
	}
	t.Setenv("HOIST_FOR", "45s")
	code, stdout, stderr = runCLI(t, "fault", "slow-store", "--delay", "1ms")
	if code != 0 || !strings.Contains(stdout, "SlowStore injected: until") {
		t.Fatalf("hoist fault slow-store: %d %q %q", code, stdout, stderr)
	}
	t.Setenv("HOIST_FOR", "")
	code, _, stderr = runCLI(t, "fault", "failing-store", "--for", "10s", "--endpoint", "http://127.0.0.1:1")
	if code != 2 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("the command line's --endpoint did not win over HOIST_ENDPOINT: %d %q", code, stderr)
	}
}
