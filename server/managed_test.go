package server_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"github.com/hoist-gg/hoist/internal/testwait"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
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

// managedRig is a server on a fake clock and a local build of the example game server.
type managedRig struct {
	t     *testing.T
	srv   *server.Server
	gl    *gamelift.Client
	data  string
	game  string // the game server binary the build was made from
	build string // BuildId
}

// newManagedRig builds the example game server into a build directory with an install
// script (which must succeed unless failInstall), and registers it as a hoist-local build.
func newManagedRig(t *testing.T, failInstall bool) *managedRig {
	script := "#!/bin/sh\necho installed on $HOIST_INSTANCE_IP_ADDRESS > installed.txt\n"
	if failInstall {
		script = "#!/bin/sh\necho cannot install >&2\nexit 3\n"
	}
	return newRig(t, script, clock.NewFake(time.Now()))
}

// newRig is a server on clk (or in dev mode when clk is nil) with the example game server registered as a hoist-local build,
// with install as its install script ("" for none).
func newRig(t *testing.T, install string, clk *clock.Fake) *managedRig {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	r := &managedRig{t: t, data: t.TempDir()}
	dir := t.TempDir()
	r.game = goBuild(t, "../examples/gameserver", "gameserver")
	bin, err := os.ReadFile(r.game)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "gameserver"), bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if install != "" {
		if err := os.WriteFile(filepath.Join(dir, "install.sh"), []byte(install), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { killSandboxProcesses(r.data) })
	cfg := server.Config{Dev: true, DataDir: r.data} // nil clk: dev mode on its virtual clock
	if clk != nil {
		cfg = server.Config{Clock: clk, DataDir: r.data}
	}
	r.srv = startServer(t, cfg)
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	out, err := r.gl.CreateBuild(context.Background(), &gamelift.CreateBuildInput{Name: aws.String("example"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(dir)}})
	if err != nil || out.Build.Status != types.BuildStatusReady {
		t.Fatalf("CreateBuild: %v", err)
	}
	r.build = aws.ToString(out.Build.BuildId)
	return r
}

// killSandboxProcesses kills whatever still runs from a sandbox under data (test cleanup).
func killSandboxProcesses(data string) {
	for _, pid := range sandboxPIDs(data) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
}

// sandboxPIDs returns the live processes whose executable lies under data/instances.
func sandboxPIDs(data string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	prefix := filepath.Join(data, "instances") + "/"
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err == nil && (strings.HasPrefix(exe, prefix) || containedIn(e.Name(), exe, prefix)) && !strings.Contains(string(stat), ") Z ") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// containedIn reports whether the process pid runs isolated (its executable under /local)
// in a sandbox under instances: whether its /local is one of their local directories.
func containedIn(pid, exe, instances string) bool {
	if !strings.HasPrefix(exe, "/local/") {
		return false
	}
	local, err := os.Stat(filepath.Join("/proc", pid, "root", "local"))
	if err != nil {
		return false
	}
	ids, _ := os.ReadDir(instances)
	for _, id := range ids {
		if sb, err := os.Stat(filepath.Join(instances, id.Name(), "local")); err == nil && os.SameFile(local, sb) {
			return true
		}
	}
	return false
}

// instancePath is the path an instance's processes use for rel in their sandbox: /rel when
// they run isolated (the server's default wherever this host can isolate), else the host path.
func instancePath(data, instanceID, rel string) string {
	if contain.Probe().Available {
		return "/" + rel
	}
	return filepath.Join(data, "instances", instanceID, filepath.FromSlash(rel))
}

// environOf reads a process's environment variable.
func environOf(pid int, key string) string {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "environ"))
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

func (r *managedRig) createFleet(processes int32) string {
	r.t.Helper()
	out, err := r.gl.CreateFleet(context.Background(), &gamelift.CreateFleetInput{Name: aws.String("managed"),
		BuildId: aws.String(r.build), EC2InstanceType: types.EC2InstanceTypeC5Large,
		EC2InboundPermissions: []types.IpPermission{{FromPort: aws.Int32(7000), ToPort: aws.Int32(8000),
			IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolTcp}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/gameserver"), Parameters: aws.String("--port 0"),
			ConcurrentExecutions: aws.Int32(processes)}}}})
	if err != nil {
		r.t.Fatalf("CreateFleet: %v", err)
	}
	fa := out.FleetAttributes
	if fa.Status != types.FleetStatusNew || fa.ComputeType != types.ComputeTypeEc2 ||
		fa.InstanceType != types.EC2InstanceTypeC5Large || aws.ToString(fa.BuildId) != r.build {
		r.t.Fatalf("CreateFleet answered %+v", fa)
	}
	return aws.ToString(fa.FleetId)
}

func (r *managedRig) fleet(id string) types.FleetAttributes {
	out, err := r.gl.DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{id}})
	if err != nil || len(out.FleetAttributes) != 1 {
		r.t.Fatalf("DescribeFleetAttributes: %v", err)
	}
	return out.FleetAttributes[0]
}

func (r *managedRig) instances(fleet string) []types.Instance {
	out, err := r.gl.DescribeInstances(context.Background(), &gamelift.DescribeInstancesInput{FleetId: aws.String(fleet)})
	if err != nil {
		r.t.Fatalf("DescribeInstances: %v", err)
	}
	return out.Instances
}

// settled reports whether the fleet has exactly instances ACTIVE instances and
// instances*processes ACTIVE processes, all running in sandboxes.
func (r *managedRig) settled(fleet string, instances, processes int) bool {
	r.srv.StepLoops(context.Background())
	insts := r.instances(fleet)
	if len(insts) != instances {
		return false
	}
	for _, in := range insts {
		if in.Status != types.InstanceStatusActive {
			return false
		}
	}
	u, err := r.gl.DescribeFleetUtilization(context.Background(), &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
	return err == nil && len(u.FleetUtilization) == 1 &&
		int(aws.ToInt32(u.FleetUtilization[0].ActiveServerProcessCount)) == instances*processes &&
		len(sandboxPIDs(r.data)) == instances*processes
}

func (r *managedRig) events(fleet string) []types.Event {
	out, err := r.gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
	if err != nil {
		r.t.Fatalf("DescribeFleetEvents: %v", err)
	}
	return out.Events
}

func codes(evs []types.Event) []types.EventCode {
	var out []types.EventCode
	for _, e := range evs {
		out = append(out, e.EventCode)
	}
	return out
}

func (r *managedRig) setCapacity(fleet string, desired int32) {
	r.t.Helper()
	_, err := r.gl.UpdateFleetCapacity(context.Background(), &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
		DesiredInstances: aws.Int32(desired), MinSize: aws.Int32(0), MaxSize: aws.Int32(10)})
	if err != nil {
		r.t.Fatalf("UpdateFleetCapacity(%d): %v", desired, err)
	}
}

// deleteFleet deletes a fleet and checks it reaches TERMINATED leaving no process and no
// sandbox behind.
func (r *managedRig) deleteFleet(fleet string) {
	r.t.Helper()
	if _, err := r.gl.DeleteFleet(context.Background(), &gamelift.DeleteFleetInput{FleetId: aws.String(fleet)}); err != nil {
		r.t.Fatalf("DeleteFleet: %v", err)
	}
	eventually(r.t, 60*time.Second, "fleet TERMINATED, no process, no sandbox", func() bool {
		r.srv.StepLoops(context.Background())
		left, _ := os.ReadDir(filepath.Join(r.data, "instances"))
		return r.fleet(fleet).Status == types.FleetStatusTerminated && len(sandboxPIDs(r.data)) == 0 && len(left) == 0
	})
}

// TestManagedFleetLifecycle: a fleet of the example game server on local instances reaches
// ACTIVE through every creation status, runs its processes in the instance's sandbox with the
// instance's SDK environment, scales to 3 instances and back to 1, keeps an instance hosting a
// protected game session when asked to scale to 0, and is deleted without a trace.
func TestManagedFleetLifecycle(t *testing.T) {
	r := newManagedRig(t, false)
	fleet := r.createFleet(2)
	eventually(t, 60*time.Second, "fleet ACTIVE with 1 instance and 2 ACTIVE processes", func() bool {
		return r.fleet(fleet).Status == types.FleetStatusActive && r.settled(fleet, 1, 2)
	})
	want := []types.EventCode{types.EventCodeFleetCreated, types.EventCodeFleetStateDownloading,
		types.EventCodeFleetCreationExtractingBuild, types.EventCodeFleetCreationRunningInstaller,
		types.EventCodeFleetStateValidating, types.EventCodeFleetCreationValidatingRuntimeConfig,
		types.EventCodeFleetStateBuilding, types.EventCodeFleetStateActivating, types.EventCodeFleetStateActive}
	got := slices.DeleteFunc(codes(r.events(fleet)), func(c types.EventCode) bool { return !slices.Contains(want, c) })
	if !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	inst := r.instances(fleet)[0]
	id, ip := aws.ToString(inst.InstanceId), aws.ToString(inst.IpAddress)
	if !strings.HasPrefix(id, "i-") || len(id) != 19 || !strings.HasPrefix(ip, "127.0.") || ip == "127.0.0.1" ||
		inst.Type != types.EC2InstanceTypeC5Large {
		t.Fatalf("instance %+v", inst)
	}
	marker, err := os.ReadFile(filepath.Join(r.data, "instances", id, "local", "game", "installed.txt"))
	if err != nil || strings.TrimSpace(string(marker)) != "installed on "+ip {
		t.Fatalf("install script output %q, %v", marker, err)
	}
	for _, pid := range sandboxPIDs(r.data) {
		cwd, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		if environOf(pid, "GAMELIFT_SDK_HOST_ID") != id || environOf(pid, "GAMELIFT_SDK_FLEET_ID") != fleet ||
			cwd != instancePath(r.data, id, "local/game") {
			t.Fatalf("process %d: host %q fleet %q cwd %q", pid, environOf(pid, "GAMELIFT_SDK_HOST_ID"), environOf(pid, "GAMELIFT_SDK_FLEET_ID"), cwd)
		}
	}

	r.setCapacity(fleet, 3)
	eventually(t, 60*time.Second, "3 ACTIVE instances with 2 processes each", func() bool { return r.settled(fleet, 3, 2) })
	ips := map[string]bool{}
	for _, in := range r.instances(fleet) {
		ips[aws.ToString(in.IpAddress)] = true
	}
	if len(ips) != 3 {
		t.Fatalf("instance addresses %v, want 3 distinct", ips)
	}
	r.checkCapacity(fleet, 3, 3)

	host := r.protectedSession(fleet)
	r.setCapacity(fleet, 1)
	eventually(t, 60*time.Second, "back to 1 instance", func() bool { return r.settled(fleet, 1, 2) })
	r.setCapacity(fleet, 0)
	for range 3 {
		r.srv.StepLoops(context.Background())
	}
	if insts := r.instances(fleet); len(insts) != 1 || aws.ToString(insts[0].InstanceId) != host {
		t.Fatalf("after scaling to 0 with a protected game session on %s: %+v", host, insts)
	}
	r.deleteFleet(fleet)
}

// protectedSession makes the fleet protect new game sessions, starts one, waits until it is
// ACTIVE and returns the instance hosting it.
func (r *managedRig) protectedSession(fleet string) string {
	t, ctx := r.t, context.Background()
	_, err := r.gl.UpdateFleetAttributes(ctx, &gamelift.UpdateFleetAttributesInput{FleetId: aws.String(fleet),
		NewGameSessionProtectionPolicy: types.ProtectionPolicyFullProtection})
	if err != nil {
		t.Fatalf("UpdateFleetAttributes: %v", err)
	}
	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(4)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	sid := gs.GameSession.GameSessionId
	eventually(t, 30*time.Second, "game session ACTIVE", func() bool {
		out, err := r.gl.DescribeGameSessions(ctx, &gamelift.DescribeGameSessionsInput{GameSessionId: sid})
		return err == nil && len(out.GameSessions) == 1 && out.GameSessions[0].Status == types.GameSessionStatusActive
	})
	ip := aws.ToString(gs.GameSession.IpAddress)
	for _, in := range r.instances(fleet) {
		if aws.ToString(in.IpAddress) == ip {
			return aws.ToString(in.InstanceId)
		}
	}
	t.Fatalf("game session at %s is on no instance", ip)
	return ""
}

func (r *managedRig) checkCapacity(fleet string, desired, active int32) {
	r.t.Helper()
	out, err := r.gl.DescribeFleetCapacity(context.Background(), &gamelift.DescribeFleetCapacityInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetCapacity) != 1 {
		r.t.Fatalf("DescribeFleetCapacity: %v", err)
	}
	c := out.FleetCapacity[0].InstanceCounts
	if aws.ToInt32(c.DESIRED) != desired || aws.ToInt32(c.ACTIVE) != active || out.FleetCapacity[0].InstanceType != types.EC2InstanceTypeC5Large {
		r.t.Fatalf("capacity %+v", c)
	}
}

// TestManagedFleetFailedInstall: an install script that fails puts the fleet in ERROR with
// the installer's event and output, removes the instance and its sandbox, and the fleet can
// still be deleted.
func TestManagedFleetFailedInstall(t *testing.T) {
	r := newManagedRig(t, true)
	fleet := r.createFleet(1)
	eventually(t, 30*time.Second, "fleet ERROR and the instance removed", func() bool {
		r.srv.StepLoops(context.Background())
		left, _ := os.ReadDir(filepath.Join(r.data, "instances"))
		return r.fleet(fleet).Status == types.FleetStatusError && len(r.instances(fleet)) == 0 && len(left) == 0
	})
	var failure string
	for _, e := range r.events(fleet) {
		if e.EventCode == types.EventCodeFleetCreationRunningInstaller && strings.Contains(aws.ToString(e.Message), "cannot install") {
			failure = aws.ToString(e.Message)
		}
	}
	if failure == "" || !slices.Contains(codes(r.events(fleet)), types.EventCodeFleetStateError) {
		t.Fatalf("events %v: want the installer's failure and FLEET_STATE_ERROR", codes(r.events(fleet)))
	}
	r.deleteFleet(fleet)
}

// TestManagedFleetTimings measures, with real processes, the time from CreateFleet to ACTIVE
// for an instance of 10 processes (and until all 10 are ACTIVE), and the time to scale a
// fleet from 1 to 10 instances (until every instance is ACTIVE with its process ACTIVE). It
// reports the figures; it asserts only that the fleet gets there.
func TestManagedFleetTimings(t *testing.T) {
	r := newManagedRig(t, false)
	start := time.Now()
	fleet := r.createFleet(10)
	r.waitFor("fleet ACTIVE", func() bool { return r.fleet(fleet).Status == types.FleetStatusActive })
	active := time.Since(start)
	r.waitFor("10 ACTIVE processes", func() bool { return r.settled(fleet, 1, 10) })
	t.Logf("10-process instance: CreateFleet to ACTIVE %v, to all 10 processes ACTIVE %v", active, time.Since(start))
	r.deleteFleet(fleet)

	fleet = r.createFleet(1)
	r.waitFor("fleet ACTIVE", func() bool { return r.settled(fleet, 1, 1) })
	start = time.Now()
	r.setCapacity(fleet, 10)
	r.waitFor("10 ACTIVE instances", func() bool { return r.settled(fleet, 10, 1) })
	t.Logf("scaling 1 to 10 instances (1 process each): %v", time.Since(start))
	r.deleteFleet(fleet)
}

// waitFor polls cond every 2 ms (a measurement's resolution) for up to two minutes.
func (r *managedRig) waitFor(what string, cond func() bool) {
	r.t.Helper()
	testwait.Until(r.t, 2*time.Minute, 2*time.Millisecond, what, cond)
}

// TestManagedFleetCertificate: a fleet with CertificateConfiguration GENERATED gets a
// certificate from Hoist's CA in each instance's sandbox; a Server SDK client on the instance
// gets its path with GetComputeCertificate, and instances and game sessions carry the
// instance's DNS name, which the certificate covers.
func TestManagedFleetCertificate(t *testing.T) {
	r := newManagedRig(t, false)
	ctx := context.Background()
	out, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("tls"), BuildId: aws.String(r.build),
		EC2InstanceType:          types.EC2InstanceTypeC5Large,
		CertificateConfiguration: &types.CertificateConfiguration{CertificateType: types.CertificateTypeGenerated},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/gameserver"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	fleet := aws.ToString(out.FleetAttributes.FleetId)
	r.waitFor("fleet ACTIVE", func() bool { return r.settled(fleet, 1, 1) })
	inst := r.instances(fleet)[0]
	id, dns := aws.ToString(inst.InstanceId), aws.ToString(inst.DnsName)
	if dns != id+".us-west-2.hoist.localhost" {
		t.Fatalf("instance DnsName %q", dns)
	}
	pids := sandboxPIDs(r.data)
	if len(pids) != 1 || environOf(pids[0], "HOIST_INSTANCE_DNS_NAME") != dns {
		t.Fatalf("processes %v, HOIST_INSTANCE_DNS_NAME not %s", pids, dns)
	}
	tok, err := r.gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleet), ComputeName: aws.String(id)})
	if err != nil {
		t.Fatal(err)
	}
	sdk := serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err := sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: environOf(pids[0], "GAMELIFT_SDK_WEBSOCKET_URL"),
		ProcessID: "cert-client", HostID: id, FleetID: fleet, AuthToken: aws.ToString(tok.AuthToken)}); err != nil {
		t.Fatalf("InitSDK: %v", err)
	}
	defer sdk.Destroy()
	cert, err := sdk.GetComputeCertificate(ctx)
	want := instancePath(r.data, id, "local/certificates/certificate.pem")
	if err != nil || cert.CertificatePath != want || cert.ComputeName != id {
		t.Fatalf("GetComputeCertificate = %+v, %v; want %s", cert, err, want)
	}
	verifyFleetCertificate(t, filepath.Join(r.data, "instances", id, "local", "certificates"), filepath.Join(r.data, "tls", "ca.crt"), dns)

	gs, err := r.gl.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil || aws.ToString(gs.GameSession.DnsName) != dns || aws.ToString(gs.GameSession.IpAddress) != aws.ToString(inst.IpAddress) {
		t.Fatalf("CreateGameSession: %+v, %v; want DnsName %s", gs, err, dns)
	}
}

// verifyFleetCertificate checks that the key pair in dir loads and that the certificate
// chains to the CA in caFile (Hoist's) and to rootCertificate.pem, for dnsName.
func verifyFleetCertificate(t *testing.T, dir, caFile, dnsName string) {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "certificate.pem"), filepath.Join(dir, "privateKey.pem"))
	if err != nil {
		t.Fatalf("fleet certificate: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{caFile, filepath.Join(dir, "rootCertificate.pem")} {
		pemBytes, err := os.ReadFile(f)
		roots := x509.NewCertPool()
		if err != nil || !roots.AppendCertsFromPEM(pemBytes) {
			t.Fatalf("CA %s: %v", f, err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: dnsName}); err != nil {
			t.Errorf("certificate against %s for %s: %v", f, dnsName, err)
		}
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), DNSName: dnsName}); err == nil {
		t.Error("the certificate verified without Hoist's CA")
	}
}
