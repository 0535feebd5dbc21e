package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

// probeScript tries, from inside an instance, to read Hoist's secrets and data and to write
// outside the sandbox; it writes what succeeded into the file named by its argument.
const probeScript = `#!/bin/sh
out=$1
{
echo "uid $(id -u) groups $(id -G)"
for f in %[1]s/credentials.json %[1]s/tls/ca.key %[1]s/node-id %[2]s /proc/1/root%[1]s/credentials.json; do
	cat "$f" >/dev/null 2>&1 && echo "READ $f"
done
ls %[1]s/instances >/dev/null 2>&1 && echo "READ other sandboxes"
for f in /proc/[0-9]*/root/local/game/whoami %[1]s/instances/*/local/game/whoami; do
	id=$(cat "$f" 2>/dev/null) && [ -n "$id" ] && [ "$id" != "$GAMELIFT_SDK_HOST_ID" ] && echo "READ other instance $id"
done
outside="%[3]s/x %[1]s/x"
# the host's own directories only when isolated: unisolated, a root probe would write there
[ "$HOIST_INSTANCE_ROOT" = / ] && outside="$outside /x /etc/x /usr/x /usr/bin/x /local/../x"
for f in $outside; do
	(echo x > "$f") 2>/dev/null && echo "WROTE $f"
done
tmp=$(mktemp) && rm "$tmp" && echo x > "$HOIST_INSTANCE_ROOT/local/game/written" && echo "wrote inside"
test -r "$HOIST_INSTANCE_ROOT/local/certificates/certificate.pem" && echo "certificate readable"
test -n "$HOIST_TEST_SECRET" && echo "READ the server's environment"
echo "probe done"
} > "$out" 2>&1
`

// runScript is the probe build's launch path: it names its instance, runs the probe, and
// when isolated leaves a process outside its process group (which must not outlive the
// instance), then becomes the example game server.
const runScript = `#!/bin/sh
echo $GAMELIFT_SDK_HOST_ID > whoami
./probe.sh probe-run.txt
if [ "$HOIST_INSTANCE_ROOT" = / ]; then setsid sleep 600 < /dev/null > /dev/null 2>&1 & echo $! > daemon.pid; fi
exec ./gameserver "$@"
`

// isolationRig is a server with isolation set as given, whose log is kept, and a build whose
// install script and launch path run probeScript before the example game server.
func isolationRig(t *testing.T, isolation string) (*managedRig, *syncBuffer, *clock.Fake) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	t.Setenv("HOIST_TEST_SECRET", "the server's own environment")
	r := &managedRig{t: t, data: t.TempDir()}
	// A key pair file as a generated one would be (left readable: the server must tighten it).
	if err := os.WriteFile(filepath.Join(r.data, "credentials.json"), []byte(`{"AccessKeyId": "AKIAFILE", "SecretAccessKey": "file"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r.game = goBuild(t, "../examples/gameserver", "gameserver")
	t.Cleanup(func() { killSandboxProcesses(r.data) })
	logs, clk := &syncBuffer{}, clock.NewFake(time.Now())
	r.srv = startServer(t, server.Config{Clock: clk, DataDir: r.data, Isolation: isolation,
		Logger: slog.New(slog.NewTextHandler(io.MultiWriter(logs, testLogOut()), nil))})
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	dir := t.TempDir()
	bin, _ := os.ReadFile(r.game)
	probe := fmt.Sprintf(probeScript, r.data, storeFile(t, r.data), t.TempDir())
	files := map[string]string{"gameserver": string(bin), "probe.sh": probe,
		"install.sh": "#!/bin/sh\n./probe.sh probe-install.txt\n",
		"run.sh":     runScript}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := r.gl.CreateBuild(context.Background(), &gamelift.CreateBuildInput{Name: aws.String("probe"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(dir)}})
	if err != nil {
		t.Fatalf("CreateBuild: %v", err)
	}
	r.build = aws.ToString(out.Build.BuildId)
	return r, logs, clk
}

// storeFile is one of the embedded store's files in data.
func storeFile(t *testing.T, data string) string {
	t.Helper()
	var found string
	filepath.WalkDir(data, func(p string, d os.DirEntry, err error) error {
		if err == nil && found == "" && !d.IsDir() && strings.HasSuffix(p, ".seg") {
			found = p
		}
		return nil
	})
	if found == "" {
		t.Fatalf("no store file in %s", data)
	}
	return found
}

// probeFleet creates a fleet of the probe build with a generated certificate and waits until
// its instance's process is ACTIVE; it returns the fleet and instance IDs.
func (r *managedRig) probeFleet() (string, string) {
	out, err := r.gl.CreateFleet(context.Background(), &gamelift.CreateFleetInput{Name: aws.String("probe"),
		BuildId: aws.String(r.build), EC2InstanceType: types.EC2InstanceTypeC5Large,
		CertificateConfiguration: &types.CertificateConfiguration{CertificateType: types.CertificateTypeGenerated},
		EC2InboundPermissions: []types.IpPermission{{FromPort: aws.Int32(1024), ToPort: aws.Int32(60000),
			IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolTcp}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/run.sh"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		r.t.Fatalf("CreateFleet: %v", err)
	}
	fleet := aws.ToString(out.FleetAttributes.FleetId)
	r.waitFor("fleet ACTIVE", func() bool { return r.settled(fleet, 1, 1) })
	return fleet, aws.ToString(r.instances(fleet)[0].InstanceId)
}

// probed reads what the probe found from the install script ("install") or the launch
// ("run"), through the host path, and fails t on anything it should not have managed.
func (r *managedRig) probed(id, which string) string {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.data, "instances", id, "local", "game", "probe-"+which+".txt"))
	got := string(b)
	if err != nil || !strings.Contains(got, "probe done") || !strings.Contains(got, "wrote inside") {
		r.t.Fatalf("%s probe: %v\n%s", which, err, got)
	}
	return got
}

// With isolation on, an instance's install script and game server cannot read the server's
// credentials, CA key, store, environment or other sandboxes, nor write outside their sandbox;
// they run as the instance's user; and the game still works: SDK connection (ACTIVE),
// certificate at its GameLift path, its port, its log readable through the host path.
func TestIsolatedInstance(t *testing.T) {
	if !contain.Probe().Available {
		t.Skip("this host cannot isolate instances: " + contain.Probe().Reason)
	}
	r, _, clk := isolationRig(t, server.IsolationOn)
	fleet, id := r.probeFleet()
	for _, which := range []string{"install", "run"} {
		got := r.probed(id, which)
		for _, bad := range []string{"READ", "WROTE", "uid 0 "} {
			if strings.Contains(got, bad) {
				t.Errorf("%s probe: %s", which, got)
			}
		}
		if !strings.Contains(got, "certificate readable") {
			t.Errorf("%s probe: the certificate is not readable inside:\n%s", which, got)
		}
	}
	if info, err := os.Stat(filepath.Join(r.data, "credentials.json")); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("credentials.json: %v, mode %v; want 0600", err, info.Mode())
	}
	pids := sandboxPIDs(r.data)
	if len(pids) != 1 {
		t.Fatalf("processes %v", pids)
	}
	status, _ := os.ReadFile("/proc/" + strconv.Itoa(pids[0]) + "/status")
	if strings.Contains(string(status), "\nUid:\t0\t") {
		t.Fatalf("the game server runs as root:\n%s", status)
	}
	checkGameWorks(t, r, fleet, id, pids[0], "/local/certificates/certificate.pem")
	if second := r.secondInstance(fleet, id); strings.Contains(second, "READ") {
		t.Errorf("second instance's probe:\n%s", second)
	}
	b, _ := os.ReadFile(filepath.Join(r.data, "instances", id, "local", "game", "daemon.pid"))
	daemon, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if daemon <= 0 || !alive(daemon) {
		t.Fatalf("the process that left its group does not run (pid file %q)", b)
	}
	if _, err := r.gl.DeleteFleet(context.Background(), &gamelift.DeleteFleetInput{FleetId: aws.String(fleet)}); err != nil {
		t.Fatal(err)
	}
	r.waitFor("instances torn down", func() bool { // the game session ends with its process's grace period
		clk.Advance(time.Minute)
		r.srv.StepLoops(context.Background())
		left, _ := os.ReadDir(filepath.Join(r.data, "instances"))
		return len(left) == 0
	})
	r.waitFor("the process that left its group killed with its instance", func() bool { return !alive(daemon) })
}

// alive reports whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// secondInstance scales the fleet to two instances and returns what the new instance's probe
// found, while the first instance's game server runs (its whoami file names it).
func (r *managedRig) secondInstance(fleet, first string) string {
	r.t.Helper()
	r.setCapacity(fleet, 2)
	r.waitFor("2 ACTIVE instances", func() bool { return r.settled(fleet, 2, 1) })
	for _, in := range r.instances(fleet) {
		if id := aws.ToString(in.InstanceId); id != first {
			return r.probed(id, "run")
		}
	}
	r.t.Fatal("no second instance")
	return ""
}

// checkGameWorks checks the certificate path the SDK hands out, a game session on the
// process's port, and the process's log file through the host path.
func checkGameWorks(t *testing.T, r *managedRig, fleet, id string, pid int, certPath string) {
	ctx := context.Background()
	tok, err := r.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleet), ComputeName: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	sdk := serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: environOf(pid, "GAMELIFT_SDK_WEBSOCKET_URL"),
		ProcessID: "probe-client", HostID: id, FleetID: fleet, AuthToken: aws.ToString(tok.AuthToken)}); err != nil {
		t.Fatalf("InitSDK: %v", err)
	}
	defer sdk.Destroy()
	cert, err := sdk.GetComputeCertificate(ctx)
	if err != nil || cert.CertificatePath != certPath {
		t.Fatalf("GetComputeCertificate = %+v, %v; want %s", cert, err, certPath)
	}
	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	addr := net.JoinHostPort(aws.ToString(gs.GameSession.IpAddress), strconv.Itoa(int(aws.ToInt32(gs.GameSession.Port))))
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("the game server's port %s: %v", addr, err)
	}
	c.Close()
	logFile := filepath.Join(r.data, "instances", id, "local", "game", "gameserver.log")
	r.waitFor("the game's log", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Contains(string(b), "gameserver ready")
	})
}

// With isolation off, instances run as before (as Hoist's user, the server's files in reach),
// the server says so once in its log, and each instance adds a fleet event saying so.
func TestUnisolatedInstance(t *testing.T) {
	r, logs, _ := isolationRig(t, server.IsolationOff)
	fleet, id := r.probeFleet()
	if got := r.probed(id, "run"); os.Geteuid() == 0 && !strings.Contains(got, "READ "+r.data+"/credentials.json") {
		t.Errorf("isolation off, yet the game could not read the credentials:\n%s", got)
	}
	if n := strings.Count(logs.String(), "local instances are NOT isolated"); n != 1 {
		t.Errorf("%d warnings about isolation in the log:\n%s", n, logs.String())
	}
	found := false
	for _, e := range r.events(fleet) {
		found = found || e.EventCode == types.EventCodeGenericEvent && strings.Contains(aws.ToString(e.Message), id+" is not isolated")
	}
	if !found {
		t.Errorf("no fleet event says instance %s is not isolated: %v", id, codes(r.events(fleet)))
	}
	pids := sandboxPIDs(r.data)
	if len(pids) != 1 {
		t.Fatalf("processes %v", pids)
	}
	checkGameWorks(t, r, fleet, id, pids[0], filepath.Join(r.data, "instances", id, "local", "certificates", "certificate.pem"))
	if second := r.secondInstance(fleet, id); os.Geteuid() == 0 && !strings.Contains(second, "READ other instance "+id) {
		t.Errorf("isolation off, yet the second instance could not read the first's files:\n%s", second)
	}
}

// A data directory other users can write to is refused; one they can read is tightened to
// 0700; isolation modes other than auto, on and off, and instance user IDs among the system
// users are refused.
func TestDataDirPermissions(t *testing.T) {
	data := t.TempDir()
	os.Chmod(data, 0o777)
	cfg := server.Config{Listen: "127.0.0.1:0", DataDir: data, AccessKeyID: testKeyID, SecretAccessKey: testSecret,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Isolation: server.IsolationOff}
	if _, err := server.New(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "writable by other users") {
		t.Fatalf("world-writable data directory: %v", err)
	}
	os.Chmod(data, 0o755)
	startServer(t, cfg)
	if info, err := os.Stat(data); err != nil || info.Mode().Perm() != 0o700 {
		t.Fatalf("data directory mode %v, %v; want 0700", info.Mode(), err)
	}
	cfg.DataDir, cfg.Isolation = t.TempDir(), "sometimes"
	if _, err := server.New(context.Background(), cfg); err == nil {
		t.Fatal("isolation \"sometimes\" accepted")
	}
	cfg.DataDir, cfg.Isolation, cfg.InstanceUIDBase = t.TempDir(), server.IsolationOff, 10
	if _, err := server.New(context.Background(), cfg); err == nil {
		t.Fatal("instance UID base 10 accepted")
	}
}
