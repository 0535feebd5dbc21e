package console_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/chromedp"
)

// TestManagedFleetPage watches, in the browser, a managed (EC2) fleet of the example game
// server come up on a local instance: the fleet, its instance and its server process turn
// ACTIVE on the fleet's page, whose capacity, runtime configuration and ports show too.
func TestManagedFleetPage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs real processes")
	}
	dir := t.TempDir()
	if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, "gameserver"), "../examples/gameserver").CombinedOutput(); err != nil {
		t.Fatalf("go build the example game server: %v\n%s", err, out)
	}
	srv := startServer(t)
	gl := client(srv)
	p := newPage(t) // closed before the server: cleanups run last-in first-out
	ctx := context.Background()
	b, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("example"), OperatingSystem: types.OperatingSystemAmazonLinux2023,
		StorageLocation: &types.S3Location{Bucket: aws.String("hoist-local"), Key: aws.String(dir)}})
	if err != nil {
		t.Fatalf("CreateBuild: %v", err)
	}
	f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("managed"), BuildId: b.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeC5Large,
		EC2InboundPermissions: []types.IpPermission{{FromPort: aws.Int32(7000), ToPort: aws.Int32(8000),
			IpRange: aws.String("0.0.0.0/0"), Protocol: types.IpProtocolTcp}},
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/gameserver"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	fleet := aws.ToString(f.FleetAttributes.FleetId)
	t.Cleanup(func() { gl.DeleteFleet(context.Background(), &gamelift.DeleteFleetInput{FleetId: aws.String(fleet)}) })

	p.run("open the fleet's page", 20*time.Second, chromedp.Navigate(srv.URL()+"/console#/fleets/"+fleet))
	p.waitFor("the login form", "#access-key-id")
	p.run("log in", 10*time.Second, chromedp.SendKeys("#access-key-id", testKeyID), chromedp.SendKeys("#secret-access-key", testSecret),
		chromedp.Click(`#login button[type="submit"]`))
	p.waitFor("the runtime configuration", `//td/code[text()="/local/game/gameserver"]`)
	p.waitFor("the inbound ports", `//td[text()="7000"]`)
	p.waitForLong("the fleet ACTIVE", `[data-field="Status"] .status-ACTIVE`, 2*time.Minute)
	p.waitForLong("an ACTIVE instance", `tr[data-id^="i-"] .status-ACTIVE`, time.Minute)
	p.waitForLong("an ACTIVE, healthy server process", `//tr[td/span[text()="ACTIVE"]]/td/span[text()="HEALTHY"]`, time.Minute)
	p.waitFor("one active instance in the location", `//tr[@data-id="us-west-2"]/td[6][text()="1"]`)
	p.screenshotWhole("managed-fleet")

	p.run("set the desired instances to 2", 10*time.Second, chromedp.SendKeys(`#desired-instances`, "2"), chromedp.Click(`#set-capacity`))
	p.waitFor("2 desired instances", `//tr[@data-id="us-west-2"]/td[3][text()="2"]`)
	p.waitForLong("2 active instances", `//tr[@data-id="us-west-2"]/td[6][text()="2"]`, time.Minute)
}
