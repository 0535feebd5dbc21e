package server_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/store"
)

// TestFaultSlowStore: in dev mode, Hoist.InjectFault SlowStore makes every store write take
// Millis longer for Seconds of the server's clock: a write through the API is slow, a read is
// not, and once virtual time passes the window writes are fast again.
func TestFaultSlowStore(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	write := func(name string) time.Duration {
		start := time.Now()
		if _, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String(name),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("x")}}); err != nil {
			t.Fatalf("CreateAlias: %v", err)
		}
		return time.Since(start)
	}
	if code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"SlowStore","Millis":500,"Seconds":10}`); code != http.StatusOK {
		t.Fatalf("InjectFault SlowStore: %d %s", code, raw)
	}
	if d := write("slow"); d < 500*time.Millisecond {
		t.Errorf("a write during SlowStore took %v, want at least 500ms", d)
	}
	start := time.Now()
	if _, err := gl.ListAliases(ctx, &gamelift.ListAliasesInput{}); err != nil || time.Since(start) > 400*time.Millisecond {
		t.Errorf("a read during SlowStore: %v after %v", err, time.Since(start))
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":11}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	if d := write("fast"); d > 400*time.Millisecond {
		t.Errorf("a write after SlowStore took %v", d)
	}
	if code, _ := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"SlowStore","Millis":0,"Seconds":10}`); code != http.StatusBadRequest {
		t.Errorf("SlowStore with Millis 0: %d, want 400", code)
	}
}

// TestFaultFailingStore: in dev mode, Hoist.InjectFault FailingStore makes store writes fail
// for Seconds of the server's clock. The Go SDK sees ServiceUnavailableException (HTTP 503),
// which its standard retryer classifies as retryable and retries; reads keep working; the
// timer loops pause (a reservation due to time out stays RESERVED) and resume once the fault
// runs out; afterwards the same write succeeds.
func TestFaultFailingStore(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	fleet := devMatchmakingFleet(t, gl)
	_, token := computeToken(t, gl, fleet, "custom-dev", "dev-host")
	startMatchProcess(t, srv, fleet, "dev-host", token)
	ps, err := gl.CreatePlayerSession(ctx, &gamelift.CreatePlayerSessionInput{GameSessionId: activeSession(t, gl, fleet), PlayerId: aws.String("bob")})
	if err != nil {
		t.Fatalf("CreatePlayerSession: %v", err)
	}
	if code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"FailingStore","Seconds":120}`); code != http.StatusOK {
		t.Fatalf("InjectFault FailingStore: %d %s", code, raw)
	}
	checkRetriedUnavailable(t, srv.URL())
	if _, err := gl.ListAliases(ctx, &gamelift.ListAliasesInput{}); err != nil {
		t.Errorf("a read during FailingStore: %v", err)
	}
	// The reservation is due (60 s), but the loops cannot write: they pause.
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":61}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime during FailingStore: %d %s", code, raw)
	}
	if err := srv.StepLoops(ctx); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("StepLoops during FailingStore = %v, want store unavailable", err)
	}
	if st := playerStatus(t, gl, ps.PlayerSession.PlayerSessionId); st != types.PlayerSessionStatusReserved {
		t.Errorf("the reservation during FailingStore is %s, want RESERVED", st)
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":60}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	eventually(t, 5*time.Second, "bob's reservation TIMEDOUT after the fault", func() bool {
		return playerStatus(t, gl, ps.PlayerSession.PlayerSessionId) == types.PlayerSessionStatusTimedout
	})
	if _, err := gl.CreateAlias(ctx, aliasInput("after")); err != nil {
		t.Errorf("a write after FailingStore: %v", err)
	}
}

// checkRetriedUnavailable makes a write with the SDK's standard retryer (3 attempts, no
// backoff) and checks that every attempt was answered ServiceUnavailableException.
func checkRetriedUnavailable(t *testing.T, url string) {
	t.Helper()
	gl := gamelift.New(gamelift.Options{Region: "us-west-2", BaseEndpoint: aws.String(url),
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts, o.RateLimiter = 3, ratelimit.None
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})})
	_, err := gl.CreateAlias(context.Background(), aliasInput("during"))
	var attempts *retry.MaxAttemptsError
	var status interface{ HTTPStatusCode() int }
	if !errors.As(err, &attempts) || attempts.Attempt != 3 {
		t.Fatalf("a write during FailingStore: %v, want 3 attempts", err)
	}
	if apiCode(err) != "ServiceUnavailableException" || !errors.As(err, &status) || status.HTTPStatusCode() != http.StatusServiceUnavailable {
		t.Errorf("a write during FailingStore: %v, want ServiceUnavailableException (503)", err)
	}
	if retry.IsErrorRetryables(retry.DefaultRetryables).IsErrorRetryable(attempts.Err) != aws.TrueTernary {
		t.Errorf("the SDK does not take %v as retryable", attempts.Err)
	}
}

// TestFaultFailingStoreFraction: with a Fraction, only some writes fail, each with
// ServiceUnavailableException; every write that was acknowledged is there afterwards and
// none that failed is.
func TestFaultFailingStoreFraction(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	if code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"FailingStore","Seconds":30,"Fraction":0.5}`); code != http.StatusOK {
		t.Fatalf("InjectFault FailingStore: %d %s", code, raw)
	}
	acked := map[string]bool{}
	failed := 0
	for i := range 40 {
		name := fmt.Sprintf("a%d", i)
		_, err := gl.CreateAlias(ctx, aliasInput(name))
		switch {
		case err == nil:
			acked[name] = true
		case apiCode(err) == "ServiceUnavailableException":
			failed++
		default:
			t.Fatalf("CreateAlias %s: %v", name, err)
		}
	}
	if failed == 0 || len(acked) == 0 {
		t.Fatalf("%d writes failed and %d succeeded with Fraction 0.5", failed, len(acked))
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":31}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	out, err := gl.ListAliases(ctx, &gamelift.ListAliasesInput{Limit: aws.Int32(100)})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]bool{}
	for _, a := range out.Aliases {
		stored[aws.ToString(a.Name)] = true
	}
	if !maps.Equal(stored, acked) {
		t.Errorf("aliases stored %v, acknowledged %v", stored, acked)
	}
	if code, _ := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"FailingStore","Seconds":10,"Fraction":2}`); code != http.StatusBadRequest {
		t.Errorf("FailingStore with Fraction 2: %d, want 400", code)
	}
}

func aliasInput(name string) *gamelift.CreateAliasInput {
	return &gamelift.CreateAliasInput{Name: aws.String(name),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("x")}}
}

func playerStatus(t *testing.T, gl *gamelift.Client, id *string) types.PlayerSessionStatus {
	t.Helper()
	d, err := gl.DescribePlayerSessions(context.Background(), &gamelift.DescribePlayerSessionsInput{PlayerSessionId: id})
	if err != nil || len(d.PlayerSessions) != 1 {
		t.Fatalf("DescribePlayerSessions: %v", err)
	}
	return d.PlayerSessions[0].Status
}

// TestFaultFailingStoreS3: multipart uploads are kept in the store, so during FailingStore
// the S3 endpoint answers ServiceUnavailable (HTTP 503, which S3 clients retry), and the
// same call succeeds once the fault is over.
func TestFaultFailingStoreS3(t *testing.T) {
	srv := startServer(t, server.Config{Dev: true})
	gl := client(srv.URL(), testKeyID, testSecret)
	ctx := context.Background()
	out, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("b"), OperatingSystem: types.OperatingSystemAmazonLinux2023})
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3ClientAt(srv.URL(), "us-west-2", out.UploadCredentials)
	in := &s3.CreateMultipartUploadInput{Bucket: out.StorageLocation.Bucket, Key: out.StorageLocation.Key}
	if code, raw := hoistOp(t, srv.URL(), server.InjectFaultTarget, `{"Kind":"FailingStore","Seconds":10}`); code != http.StatusOK {
		t.Fatalf("InjectFault FailingStore: %d %s", code, raw)
	}
	_, err = s3c.CreateMultipartUpload(ctx, in)
	var status interface{ HTTPStatusCode() int }
	if apiCode(err) != "ServiceUnavailable" || !errors.As(err, &status) || status.HTTPStatusCode() != http.StatusServiceUnavailable {
		t.Errorf("CreateMultipartUpload during FailingStore: %v, want ServiceUnavailable (503)", err)
	}
	if code, raw := hoistOp(t, srv.URL(), server.AdvanceTimeTarget, `{"Seconds":11}`); code != http.StatusOK {
		t.Fatalf("AdvanceTime: %d %s", code, raw)
	}
	if _, err := s3c.CreateMultipartUpload(ctx, in); err != nil {
		t.Errorf("CreateMultipartUpload after FailingStore: %v", err)
	}
}
