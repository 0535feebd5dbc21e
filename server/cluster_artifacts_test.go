package server_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/store/postgres"
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

// paddedGameZip returns gameZip with a stored entry of random bytes, large enough for three
// 5 MiB parts.
func paddedGameZip(t *testing.T) []byte {
	t.Helper()
	zipped := gameZip(t)
	game, err := zip.NewReader(bytes.NewReader(zipped), int64(len(zipped)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	if err := zw.Copy(game.File[0]); err != nil {
		t.Fatal(err)
	}
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: "padding.bin", Method: zip.Store})
	pad := make([]byte, 11<<20)
	rand.Read(pad)
	w.Write(pad)
	zw.Close()
	return b.Bytes()
}

// uploadAcrossNodes uploads body as a multipart upload in 5 MiB parts, each request to the
// next node in turn (CreateMultipartUpload to the first), ListParts and
// CompleteMultipartUpload to the last node.
func uploadAcrossNodes(t *testing.T, nodes []*server.Server, out *gamelift.CreateBuildOutput, body []byte) {
	t.Helper()
	ctx := context.Background()
	client := func(i int) *s3.Client {
		return s3ClientAt(nodes[i%len(nodes)].URL(), "us-west-2", out.UploadCredentials)
	}
	bucket, key := out.StorageLocation.Bucket, out.StorageLocation.Key
	cr, err := client(0).CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: bucket, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	var done []s3types.CompletedPart
	for i := 0; i*5<<20 < len(body); i++ {
		part := body[i*5<<20 : min((i+1)*5<<20, len(body))]
		p, err := client(i).UploadPart(ctx, &s3.UploadPartInput{Bucket: bucket, Key: key, UploadId: cr.UploadId,
			PartNumber: aws.Int32(int32(i + 1)), Body: bytes.NewReader(part)})
		if err != nil {
			t.Fatalf("UploadPart %d through node %d: %v", i+1, i%len(nodes), err)
		}
		done = append(done, s3types.CompletedPart{PartNumber: aws.Int32(int32(i + 1)), ETag: p.ETag})
	}
	last := client(len(nodes) - 1)
	parts, err := last.ListParts(ctx, &s3.ListPartsInput{Bucket: bucket, Key: key, UploadId: cr.UploadId})
	if err != nil || len(parts.Parts) != len(done) {
		t.Fatalf("ListParts through the last node: %d parts, %v; want %d", len(parts.Parts), err, len(done))
	}
	_, err = last.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: bucket, Key: key, UploadId: cr.UploadId,
		MultipartUpload: &s3types.CompletedMultipartUpload{Parts: done}})
	if err != nil {
		t.Fatalf("CompleteMultipartUpload through the last node: %v", err)
	}
}

// storedBuild returns the zip of a build as kept in the store's blobs, and the keys left
// under upload/ (the parts of multipart uploads).
func storedBuild(t *testing.T, dsn, buildID string) (data []byte, uploads []string) {
	t.Helper()
	ctx := context.Background()
	st, err := postgres.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys, err := st.ListBlobs(ctx, "build/"+buildID+"/")
	if err != nil || len(keys) != 1 {
		t.Fatalf("blobs of build %s: %q, %v", buildID, keys, err)
	}
	r, _, err := st.OpenBlob(ctx, keys[0])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if data, err = io.ReadAll(r); err != nil {
		t.Fatal(err)
	}
	if uploads, err = st.ListBlobs(ctx, "upload/"); err != nil {
		t.Fatal(err)
	}
	return data, uploads
}

// TestBuildUploadedAcrossNodesRunsOnEach uploads a build in three parts, each through another
// node, completes it through a node other than the one that started it, removes every node's
// own files of it (as if they were other hosts' disks), and runs a managed fleet of two
// instances, one on each node: both install the build from the shared store, which holds the
// zip byte for byte and no part.
func TestBuildUploadedAcrossNodesRunsOnEach(t *testing.T) {
	if testing.Short() {
		t.Skip("runs game servers")
	}
	dsn := pgtest.DSN(t)
	dataA, dataB := t.TempDir(), t.TempDir()
	t.Cleanup(func() { killSandboxProcesses(dataA); killSandboxProcesses(dataB) })
	a := startServer(t, server.Config{Store: dsn, DataDir: dataA})
	b := startServer(t, server.Config{Store: dsn, DataDir: dataB})
	ctx := context.Background()
	ga, gb := client(a.URL(), testKeyID, testSecret), client(b.URL(), testKeyID, testSecret)
	out, err := ga.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("shared"), OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	body := paddedGameZip(t)
	uploadAcrossNodes(t, []*server.Server{a, b}, out, body)
	if got, uploads := storedBuild(t, dsn, aws.ToString(out.Build.BuildId)); !bytes.Equal(got, body) || len(uploads) != 0 {
		t.Errorf("stored zip of %d bytes (equal: %t), want %d; upload blobs left: %q", len(got), bytes.Equal(got, body), len(body), uploads)
	}
	for _, dir := range []string{dataA, dataB} {
		if err := os.RemoveAll(filepath.Join(dir, "builds")); err != nil {
			t.Fatal(err)
		}
	}
	head, err := s3ClientAt(a.URL(), "us-west-2", out.UploadCredentials).HeadObject(ctx, &s3.HeadObjectInput{
		Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key})
	if err != nil || aws.ToInt64(head.ContentLength) != int64(len(body)) {
		t.Errorf("HeadObject through a node without the zip on its disk: %v", err)
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
	session := sessionWithLog(t, a, ga, "custom-logs-cluster", "the game was won\n")
	u, err := gb.GetGameSessionLogUrl(ctx, &gamelift.GetGameSessionLogUrlInput{GameSessionId: aws.String(session)})
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

// sessionWithLog makes an Anywhere fleet in location with one server process connected to srv,
// a game session on it, and a log of the session holding gameserver.log with content, uploaded
// as the agent does. It returns the game session's ID.
func sessionWithLog(t *testing.T, srv *server.Server, gl *gamelift.Client, location, content string) string {
	t.Helper()
	fleet := createAnywhereFleet(t, gl, location)
	_, token := computeToken(t, gl, fleet, location, "logs-host")
	proc := startSDKProcesses(t, srv, fleet, "logs-host", token, 1, true)[0]
	gs, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(2)})
	if err != nil {
		t.Fatal(err)
	}
	<-proc.started
	session := aws.ToString(gs.GameSession.GameSessionId)
	uploadLog(t, srv, fleet, "logs-host", token, session, content)
	return session
}

// uploadLog uploads, as the agent does, a log zip holding gameserver.log with content for the
// game session.
func uploadLog(t *testing.T, srv *server.Server, fleet, compute, token, session, content string) {
	t.Helper()
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	w, _ := zw.Create("gameserver.log")
	w.Write([]byte(content))
	zw.Close()
	req, _ := http.NewRequest(http.MethodPut, srv.URL()+server.LogsPath+"?FleetId="+fleet+"&ComputeName="+compute+
		"&GameSessionId="+session, bytes.NewReader(zipped.Bytes()))
	req.Header.Set("Authorization", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("log upload: %v %v", err, resp)
	}
	resp.Body.Close()
}
