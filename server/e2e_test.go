package server_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"
	"github.com/fxamacker/cbor/v2"

	"github.com/hoist-gg/hoist/api"
	domain "github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/server"
)

const (
	testKeyID  = "AKIAHOISTTEST0000001"
	testSecret = "hoist-test-secret-0123456789abcdefghijkl"
)

// startServer runs a server in-process on a free loopback port.
func startServer(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if cfg.AccessKeyID == "" && !cfg.AllowAnyCredentials {
		cfg.AccessKeyID, cfg.SecretAccessKey = testKeyID, testSecret
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(testLogOut(), nil))
	}
	srv, err := server.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// client returns the real aws-sdk-go-v2 gamelift client (RPC v2 CBOR) pointed at url.
func client(url, keyID, secret string) *gamelift.Client {
	return gamelift.New(gamelift.Options{
		Region:           "us-west-2",
		BaseEndpoint:     aws.String(url),
		Credentials:      credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		RetryMaxAttempts: 1,
	})
}

func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// TestGoSDKLifecycle drives locations, builds, aliases and tags with the Go SDK on the
// embedded store (store_test.go runs it on PostgreSQL too).
func TestGoSDKLifecycle(t *testing.T) {
	srv := startServer(t, server.Config{})
	runLifecycle(t, client(srv.URL(), testKeyID, testSecret))
}

func runLifecycle(t *testing.T, gl *gamelift.Client) {
	ctx := context.Background()
	loc, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-sdk-lab"),
		Tags: []types.Tag{{Key: aws.String("team"), Value: aws.String("core")}}})
	if err != nil {
		t.Fatalf("CreateLocation: %v", err)
	}
	if got := aws.ToString(loc.Location.LocationArn); got != "arn:aws:gamelift:us-west-2::location/custom-sdk-lab" {
		t.Errorf("LocationArn = %q", got)
	}
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String("custom-sdk-lab")}); apiCode(err) != "ConflictException" {
		t.Errorf("duplicate CreateLocation: %v", err)
	}
	locs, err := gl.ListLocations(ctx, &gamelift.ListLocationsInput{Filters: []types.LocationFilter{types.LocationFilterCustom}})
	if err != nil || len(locs.Locations) != 1 {
		t.Fatalf("ListLocations: %v %+v", err, locs)
	}

	b, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("sdk-build"), Version: aws.String("1"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatalf("CreateBuild: %v", err)
	}
	if b.Build.Status != types.BuildStatusInitialized || b.Build.CreationTime == nil ||
		time.Since(*b.Build.CreationTime) > time.Minute {
		t.Errorf("CreateBuild returned %+v", b.Build)
	}
	ub, err := gl.UpdateBuild(ctx, &gamelift.UpdateBuildInput{BuildId: b.Build.BuildId, Name: aws.String("renamed")})
	if err != nil || aws.ToString(ub.Build.Name) != "renamed" {
		t.Errorf("UpdateBuild: %v", err)
	}
	db, err := gl.DescribeBuild(ctx, &gamelift.DescribeBuildInput{BuildId: b.Build.BuildId})
	if err != nil || aws.ToString(db.Build.Name) != "renamed" {
		t.Errorf("DescribeBuild: %v", err)
	}

	runAliases(t, gl)

	if _, err := gl.DeleteBuild(ctx, &gamelift.DeleteBuildInput{BuildId: b.Build.BuildId}); err != nil {
		t.Errorf("DeleteBuild: %v", err)
	}
	_, err = gl.DescribeBuild(ctx, &gamelift.DescribeBuildInput{BuildId: b.Build.BuildId})
	var nf *types.NotFoundException
	if !errors.As(err, &nf) {
		t.Errorf("DescribeBuild after delete: %v", err)
	}
}

// createAnywhereFleet creates a custom location and an Anywhere fleet in it.
func createAnywhereFleet(t *testing.T, gl *gamelift.Client, location string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil && apiCode(err) != "ConflictException" {
		t.Fatalf("CreateLocation: %v", err)
	}
	f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("fleet-for-" + location),
		ComputeType: types.ComputeTypeAnywhere,
		Locations:   []types.LocationConfiguration{{Location: aws.String(location)}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	return aws.ToString(f.FleetAttributes.FleetId)
}

func runAliases(t *testing.T, gl *gamelift.Client) {
	ctx := context.Background()
	fleet := createAnywhereFleet(t, gl, "custom-alias-lab")
	a, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("sdk-simple"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(fleet)}})
	if err != nil {
		t.Fatalf("CreateAlias: %v", err)
	}
	id := a.Alias.AliasId
	r, err := gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: id})
	if err != nil || aws.ToString(r.FleetId) != fleet {
		t.Errorf("ResolveAlias: %v %+v", err, r)
	}
	term, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("sdk-terminal"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("gone fishing")}})
	if err != nil {
		t.Fatalf("CreateAlias TERMINAL: %v", err)
	}
	_, err = gl.ResolveAlias(ctx, &gamelift.ResolveAliasInput{AliasId: term.Alias.AliasId})
	var tr *types.TerminalRoutingStrategyException
	if !errors.As(err, &tr) || tr.ErrorMessage() != "gone fishing" {
		t.Errorf("ResolveAlias TERMINAL: %v", err)
	}
	if _, err := gl.TagResource(ctx, &gamelift.TagResourceInput{ResourceARN: a.Alias.AliasArn,
		Tags: []types.Tag{{Key: aws.String("env"), Value: aws.String("test")}}}); err != nil {
		t.Errorf("TagResource: %v", err)
	}
	tags, err := gl.ListTagsForResource(ctx, &gamelift.ListTagsForResourceInput{ResourceARN: a.Alias.AliasArn})
	if err != nil || len(tags.Tags) != 1 || aws.ToString(tags.Tags[0].Key) != "env" {
		t.Errorf("ListTagsForResource: %v %+v", err, tags)
	}
	pages := gamelift.NewListAliasesPaginator(gl, &gamelift.ListAliasesInput{Limit: aws.Int32(1)})
	n := 0
	for pages.HasMorePages() {
		p, err := pages.NextPage(ctx)
		if err != nil {
			t.Fatalf("ListAliases page: %v", err)
		}
		n += len(p.Aliases)
	}
	if n != 2 {
		t.Errorf("ListAliases over pages found %d aliases, want 2", n)
	}
	if _, err := gl.DeleteAlias(ctx, &gamelift.DeleteAliasInput{AliasId: id}); err != nil {
		t.Errorf("DeleteAlias: %v", err)
	}
	if _, err := gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: id}); apiCode(err) != "NotFoundException" {
		t.Errorf("DescribeAlias after delete: %v", err)
	}
}

// TestGoSDKErrors checks the errors the Go SDK sees: bad signatures, unknown keys, bad input
// and operations Hoist does not implement yet.
func TestGoSDKErrors(t *testing.T) {
	srv := startServer(t, server.Config{})
	ctx := context.Background()
	_, err := client(srv.URL(), testKeyID, "wrong").ListAliases(ctx, &gamelift.ListAliasesInput{})
	if apiCode(err) != "InvalidSignatureException" {
		t.Errorf("wrong secret: %v", err)
	}
	_, err = client(srv.URL(), "AKIAUNKNOWN000000000", testSecret).ListAliases(ctx, &gamelift.ListAliasesInput{})
	if apiCode(err) != "UnrecognizedClientException" {
		t.Errorf("unknown key: %v", err)
	}
	gl := client(srv.URL(), testKeyID, testSecret)
	_, err = gl.ListAliases(ctx, &gamelift.ListAliasesInput{Limit: aws.Int32(0)})
	if apiCode(err) != "InvalidRequestException" {
		t.Errorf("Limit 0: %v", err)
	}
	_, err = gl.DescribeVpcPeeringAuthorizations(ctx, &gamelift.DescribeVpcPeeringAuthorizationsInput{})
	if apiCode(err) != "NotImplementedException" {
		t.Errorf("not implemented: %v", err)
	}
}

// TestEveryOperationAnswers posts an empty input to all 120 operations over both protocols and
// checks each answers 200 or a known client error: never a 404 or a 500.
func TestEveryOperationAnswers(t *testing.T) {
	srv := startServer(t, server.Config{})
	if len(api.Operations) != 120 {
		t.Fatalf("operation table has %d rows, want 120", len(api.Operations))
	}
	handlers := domain.New(domain.Config{}).Handlers()
	implemented := 0
	for _, op := range api.Operations {
		_, ok := op.Bind(handlers)
		if ok {
			implemented++
		}
		for _, proto := range []string{"json", "cbor"} {
			status, code := post(t, srv.URL(), proto, op.Name)
			switch {
			case !ok && (status != 400 || code != string(api.NotImplementedException)):
				t.Errorf("%s over %s is not implemented, yet answers %d %q", op.Name, proto, status, code)
			case ok && status != 200 && (status != 400 || !api.ErrorCode(code).Known() || code == string(api.NotImplementedException)):
				t.Errorf("%s over %s: status %d, __type %q", op.Name, proto, status, code)
			}
		}
	}
	t.Logf("%d of %d operations implemented", implemented, len(api.Operations))
}

// post sends a signed request with an empty input and returns the status and error code.
func post(t *testing.T, base, proto, op string) (int, string) {
	t.Helper()
	var req *http.Request
	if proto == "json" {
		req, _ = http.NewRequest("POST", base+"/", bytes.NewReader([]byte("{}")))
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("X-Amz-Target", "GameLift."+op)
	} else {
		req, _ = http.NewRequest("POST", base+"/service/GameLift/operation/"+op, bytes.NewReader([]byte{0xa0}))
		req.Header.Set("Content-Type", "application/cbor")
		req.Header.Set("Smithy-Protocol", "rpc-v2-cbor")
	}
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	status, raw := signedDo(t, req, body)
	var e struct {
		Type string `json:"__type"`
	}
	if proto == "json" {
		json.Unmarshal(raw, &e)
	} else {
		cbor.Unmarshal(raw, &e)
	}
	return status, e.Type
}

// signedDo signs req (whose body is body) with the test key pair for gamelift and sends it,
// returning the status and the response body.
func signedDo(t *testing.T, req *http.Request, body []byte) (int, []byte) {
	t.Helper()
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: testKeyID, SecretAccessKey: testSecret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, req, hex.EncodeToString(sum[:]), "gamelift", "us-west-2", time.Now()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// checkAliasesVisible checks that every alias a lists, b lists too.
func checkAliasesVisible(t *testing.T, a, b *gamelift.Client) {
	t.Helper()
	ctx := context.Background()
	la, err := a.ListAliases(ctx, &gamelift.ListAliasesInput{})
	if err != nil {
		t.Fatal(err)
	}
	for _, al := range la.Aliases {
		if _, err := b.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: al.AliasId}); err != nil {
			t.Errorf("alias %s written through one node is not visible through the other: %v", aws.ToString(al.AliasId), err)
		}
	}
	if len(la.Aliases) == 0 {
		t.Error("no aliases to compare")
	}
}

// TestAllowAnyCredentials checks that with verification off any key pair is accepted, and
// that the server says so in its log.
func TestAllowAnyCredentials(t *testing.T) {
	var logs strings.Builder
	srv := startServer(t, server.Config{AllowAnyCredentials: true, Logger: slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil))})
	if _, err := client(srv.URL(), "AKIAANYTHING00000000", "whatever").ListAliases(context.Background(), &gamelift.ListAliasesInput{}); err != nil {
		t.Errorf("with --allow-any-credentials a request was refused: %v", err)
	}
	if !strings.Contains(logs.String(), "SIGNATURE VERIFICATION IS OFF") {
		t.Errorf("the log does not warn that verification is off: %q", logs.String())
	}
}

// syncWriter serializes writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func testLogOut() io.Writer {
	if os.Getenv("HOIST_TEST_LOG") != "" {
		return os.Stderr
	}
	return io.Discard
}
