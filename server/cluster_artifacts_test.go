package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// gameZip returns a zip of the example game server built for the test.
func gameZip(t *testing.T) []byte {
	t.Helper()
	game, err := os.ReadFile(goBuild(t, "../examples/gameserver", "gameserver"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	hdr := &zip.FileHeader{Name: "gameserver", Method: zip.Deflate}
	hdr.SetMode(0o755)
	w, err := zw.CreateHeader(hdr)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(game)
	zw.Close()
	return b.Bytes()
}

// TestBuildUploadedThroughOneNodeRunsOnAnother uploads a build through node a's S3 endpoint,
// removes a's own copy of it (as if it were another host's disk), and runs a managed fleet of
// two instances, one on each node: both install the build from the shared store.
func TestBuildUploadedThroughOneNodeRunsOnAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("runs game servers")
	}
	dsn := pgtest.DSN(t)
	dataA, dataB := t.TempDir(), t.TempDir()
	t.Cleanup(func() { killSandboxProcesses(dataA); killSandboxProcesses(dataB) })
	a := startServer(t, server.Config{Store: dsn, DataDir: dataA, S3Listen: "127.0.0.1:0"})
	b := startServer(t, server.Config{Store: dsn, DataDir: dataB})
	ctx := context.Background()
	ga, gb := client(a.URL(), testKeyID, testSecret), client(b.URL(), testKeyID, testSecret)
	out, err := ga.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("shared"), OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	_, err = manager.NewUploader(s3Client(a, out.UploadCredentials)).Upload(ctx, &s3.PutObjectInput{Bucket: out.StorageLocation.Bucket,
		Key: out.StorageLocation.Key, Body: bytes.NewReader(gameZip(t))})
	if err != nil {
		t.Fatalf("Upload: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dataA, "builds")); err != nil {
		t.Fatal(err)
	}
	f, err := gb.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("shared-build"), BuildId: out.Build.BuildId,
		EC2InstanceType: types.EC2InstanceTypeC5Large,
		RuntimeConfiguration: &types.RuntimeConfiguration{ServerProcesses: []types.ServerProcess{{
			LaunchPath: aws.String("/local/game/gameserver"), Parameters: aws.String("--port 0"), ConcurrentExecutions: aws.Int32(1)}}}})
	if err != nil {
		t.Fatal(err)
	}
	fleet := aws.ToString(f.FleetAttributes.FleetId)
	if _, err := gb.UpdateFleetCapacity(ctx, &gamelift.UpdateFleetCapacityInput{FleetId: aws.String(fleet),
		DesiredInstances: aws.Int32(2), MaxSize: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			ev, _ := ga.DescribeFleetEvents(ctx, &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
			for _, e := range ev.Events {
				t.Logf("event %s %s", e.EventCode, aws.ToString(e.Message))
			}
		}
	})
	eventually(t, 60*time.Second, "a game process on each node", func() bool {
		return len(sandboxPIDs(dataA)) == 1 && len(sandboxPIDs(dataB)) == 1
	})
	eventually(t, 30*time.Second, "2 ACTIVE processes", func() bool {
		u, err := ga.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
		return err == nil && aws.ToInt32(u.FleetUtilization[0].ActiveServerProcessCount) == 2
	})
}

// TestLogURLsWorkThroughAnyNode: a game session log uploaded to node a is served through
// node b, and a URL node b signed is accepted by node a.
func TestLogURLsWorkThroughAnyNode(t *testing.T) {
	dsn := pgtest.DSN(t)
	a := startServer(t, server.Config{Store: dsn})
	b := startServer(t, server.Config{Store: dsn})
	ctx := context.Background()
	ga, gb := client(a.URL(), testKeyID, testSecret), client(b.URL(), testKeyID, testSecret)
	fleet := createAnywhereFleet(t, ga, "custom-logs-cluster")
	_, token := computeToken(t, ga, fleet, "custom-logs-cluster", "logs-host")
	proc := startSDKProcesses(t, a, fleet, "logs-host", token, 1, true)[0]
	gs, err := ga.CreateGameSession(ctx, &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String("custom-logs-cluster"), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	<-proc.started
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, _ := zw.Create("gameserver.log")
	w.Write([]byte("the game was won\n"))
	zw.Close()
	req, _ := http.NewRequest(http.MethodPut, a.URL()+server.LogsPath+"?FleetId="+fleet+"&ComputeName=logs-host&GameSessionId="+
		aws.ToString(gs.GameSession.GameSessionId), bytes.NewReader(zipped.Bytes()))
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("log upload to node a: %v %v", err, resp)
	}
	resp.Body.Close()
	u, err := gb.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: gs.GameSession.GameSessionId})
	if err != nil {
		t.Fatal(err)
	}
	url := aws.ToString(u.PreSignedUrl)
	for _, via := range []string{url, strings.Replace(url, b.URL(), a.URL(), 1)} {
		status, body := httpGet(t, via)
		if status != http.StatusOK || zipEntry(t, body, "gameserver.log") != "the game was won\n" {
			t.Errorf("GET %s: %d", via, status)
		}
	}
}
