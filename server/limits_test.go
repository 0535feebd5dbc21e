package server_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/hostd"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/contain"
	"github.com/hoist-gg/hoist/internal/netguard"
	"github.com/hoist-gg/hoist/internal/netns"
	"github.com/hoist-gg/hoist/server"
)

// limitsBuild is a build of the example game server behind a launch script that first
// records where its binds land, and a second process that takes more memory than a t2.micro
// has, once (later launches only sleep).
func limitsBuild(t *testing.T) string {
	dir := t.TempDir()
	files := map[string]string{
		"run.sh": "#!/bin/sh\n./limitprobe bind bind.txt\nexec ./gameserver \"$@\"\n",
		"hog.sh": "#!/bin/sh\n[ -e hogged ] && exec sleep 100000\ntouch hogged\nexec ./limitprobe hog 3072\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, pkg := range map[string]string{"gameserver": "../examples/gameserver", "limitprobe": "./testdata/limitprobe"} {
		bin, err := os.ReadFile(goBuild(t, pkg, name))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name), bin, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// skipWithoutLimits skips t on a host where instances cannot be isolated, limited and
// guarded (not root, no cgroups, no BPF).
func skipWithoutLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	if p := contain.Probe(); !p.Available {
		t.Skip("this host cannot isolate instances: " + p.Reason)
	}
	res := hostd.NewResources(hostd.ResourcesConfig{Parent: "hoist-probe-" + strconv.Itoa(os.Getpid())})
	defer res.Close()
	if !res.Limited() {
		t.Skip("this host cannot limit instances: " + res.Reason())
	}
	if ok, why := netguard.Supported(); !ok {
		t.Skip("this host cannot guard instances' binds: " + why)
	}
}

// An isolated instance gets its instance type's memory and its own address: a process that
// takes more memory than a t2.micro has is killed out of memory and reported as a crash with
// a fleet event naming the limit, while the game server beside it keeps working; a bind to
// the wildcard lands on the instance's address and a bind to the server's 127.0.0.1 is
// refused.
func TestInstanceLimits(t *testing.T) {
	skipWithoutLimits(t)
	r := &managedRig{t: t, data: t.TempDir()}
	t.Cleanup(func() { killSandboxProcesses(r.data) })
	r.srv = startServer(t, server.Config{Clock: clock.NewFake(time.Now()), DataDir: r.data, Isolation: server.IsolationOn})
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	b, err := r.gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("limits"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(limitsBuild(t))}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("limits"), BuildId: b.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeT2Micro,
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
			{LaunchPath: aws.String("/local/game/run.sh"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)},
			{LaunchPath: aws.String("/local/game/hog.sh"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(out.FleetAttributes.FleetId)
	var oom string
	r.waitFor("an out-of-memory crash event", func() bool {
		for _, e := range r.events(fleet) {
			if e.EventCode == types.EventCodeServerProcessCrashed && strings.Contains(aws.ToString(e.Message), "out of memory") {
				oom = aws.ToString(e.Message)
			}
		}
		return oom != ""
	})
	if !strings.Contains(oom, "1 GiB") {
		t.Errorf("event %q does not name the t2.micro's 1 GiB", oom)
	}
	r.waitFor("fleet ACTIVE", func() bool { return r.fleetStatus(fleet) == types.FleetStatusActive })
	id := aws.ToString(r.instances(fleet)[0].InstanceId)
	ip := aws.ToString(r.instances(fleet)[0].IpAddress)
	var binds string
	r.waitFor("the bind report", func() bool {
		got, err := os.ReadFile(filepath.Join(r.data, "instances", id, "local", "game", "bind.txt"))
		binds = string(got)
		return err == nil
	})
	for _, want := range []string{"wildcard bound " + ip + ":", "server refused", "instance bound " + ip + ":"} {
		if !strings.Contains(binds, want) {
			t.Errorf("binds: want %q in\n%s", want, binds)
		}
	}
	checkSessionReachable(t, r, fleet, ip)
}

// fleetStatus is a fleet's status.
func (r *managedRig) fleetStatus(fleet string) types.FleetStatus {
	out, err := r.gl.DescribeFleetAttributes(context.Background(), &gamelift.DescribeFleetAttributesInput{FleetIds: []string{fleet}})
	if err != nil || len(out.FleetAttributes) != 1 {
		r.t.Fatalf("DescribeFleetAttributes: %v", err)
	}
	return out.FleetAttributes[0].Status
}

// checkSessionReachable creates a game session on fleet and dials its port on ip.
func checkSessionReachable(t *testing.T, r *managedRig, fleet, ip string) {
	gs, err := r.gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	if got := aws.ToString(gs.GameSession.IpAddress); got != ip {
		t.Errorf("game session address %s, want the instance's %s", got, ip)
	}
	addr := net.JoinHostPort(ip, strconv.Itoa(int(aws.ToInt32(gs.GameSession.Port))))
	r.waitFor("the game server's port "+addr, func() bool {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// With --enforce-inbound, a fleet's EC2InboundPermissions decide which ports of its isolated
// instances are reachable: the game server's port is closed until UpdateFleetPortSettings
// opens it, and closed again when the permission is revoked.
func TestInstanceInboundPermissions(t *testing.T) {
	skipWithoutLimits(t)
	r := &managedRig{t: t, data: t.TempDir()}
	t.Cleanup(func() { killSandboxProcesses(r.data) })
	r.srv = startServer(t, server.Config{Clock: clock.NewFake(time.Now()), DataDir: r.data, Isolation: server.IsolationOn,
		EnforceInbound: true})
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	b, err := r.gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("inbound"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(limitsBuild(t))}})
	if err != nil {
		t.Fatal(err)
	}
	port := int32(20000 + os.Getpid()%20000) // one instance address per server: distinct per test process
	other := types.IpPermission{FromPort: aws.Int32(1024), ToPort: aws.Int32(2000), IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolTcp}
	game := types.IpPermission{FromPort: aws.Int32(port), ToPort: aws.Int32(port), IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolTcp}
	out, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("inbound"), BuildId: b.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeC5Large, EC2InboundPermissions: []types.IpPermission{other},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
			{LaunchPath: aws.String("/local/game/run.sh"), Parameters: aws.String("--port " + strconv.Itoa(int(port))), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(out.FleetAttributes.FleetId)
	r.waitFor("fleet ACTIVE", func() bool { return r.settled(fleet, 1, 1) })
	addr := net.JoinHostPort(aws.ToString(r.instances(fleet)[0].IpAddress), strconv.Itoa(int(port)))
	reachable := func() bool {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err == nil {
			c.Close()
		}
		return err == nil
	}
	if reachable() {
		t.Fatalf("%s is reachable without an inbound permission for it", addr)
	}
	update := func(in *gamelift.UpdateFleetPortSettingsInput) {
		in.FleetId = aws.String(fleet)
		if _, err := r.gl.UpdateFleetPortSettings(ctx, in); err != nil {
			t.Fatalf("UpdateFleetPortSettings: %v", err)
		}
		r.srv.StepLoops(ctx)
	}
	update(&gamelift.UpdateFleetPortSettingsInput{InboundPermissionAuthorizations: []types.IpPermission{game}})
	r.waitFor(addr+" reachable once permitted", reachable)
	update(&gamelift.UpdateFleetPortSettingsInput{InboundPermissionRevocations: []types.IpPermission{game}})
	r.waitFor(addr+" closed once revoked", func() bool { return !reachable() })
}

// With --instance-network netns, an isolated instance lives in a network namespace of its
// own: its address is on the instances' subnet, its processes reach the Server SDK on the
// gateway (the process goes ACTIVE), and players reach its game server on that address; the
// namespace goes with the instance.
func TestInstanceNetworkNamespace(t *testing.T) {
	skipWithoutLimits(t)
	cfg := netns.Config{Bridge: fmt.Sprintf("hst%d", os.Getpid()%1000000), Prefix: netip.MustParsePrefix("10.252.0.0/24"),
		Dir: t.TempDir()}
	r := &managedRig{t: t, data: t.TempDir()}
	t.Cleanup(func() { killSandboxProcesses(r.data) })
	r.srv = startServer(t, server.Config{Clock: clock.NewFake(time.Now()), DataDir: r.data, Isolation: server.IsolationOn,
		InstanceNetwork: server.InstanceNetworkNetns, NetnsConfig: &cfg})
	t.Cleanup(func() {
		if n, err := netns.Open(cfg); err == nil {
			n.DeleteBridge()
		}
	})
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	b, err := r.gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("netns"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(limitsBuild(t))}})
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("netns"), BuildId: b.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeC5Large,
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{
			{LaunchPath: aws.String("/local/game/run.sh"), Parameters: aws.String("--port 7777"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(out.FleetAttributes.FleetId)
	r.waitFor("fleet ACTIVE with its process", func() bool { return r.settled(fleet, 1, 1) })
	inst := r.instances(fleet)[0]
	ip := aws.ToString(inst.IpAddress)
	if want, _ := cfg.Addr(0); ip != want.String() {
		t.Fatalf("instance address %s, want the subnet's first instance address %s", ip, want)
	}
	binds, _ := os.ReadFile(filepath.Join(r.data, "instances", aws.ToString(inst.InstanceId), "local", "game", "bind.txt"))
	if !strings.Contains(string(binds), "wildcard bound "+ip+":") || !strings.Contains(string(binds), "server refused") {
		t.Errorf("binds in the namespace:\n%s", binds)
	}
	checkSessionReachable(t, r, fleet, ip)
	if names, _ := os.ReadDir(cfg.Dir); len(names) != 1 {
		t.Fatalf("namespaces %v, want the instance's", names)
	}
	r.deleteFleet(fleet)
	r.waitFor("the instance's namespace removed", func() bool {
		names, _ := os.ReadDir(cfg.Dir)
		return len(names) == 0
	})
}
