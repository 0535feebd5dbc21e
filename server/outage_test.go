package server_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// TestPostgresRestartIsRetryable restarts PostgreSQL under a running server: while it is
// down every call answers ServiceUnavailableException (HTTP 503, which SDKs retry), never
// InternalServiceException, and the node stops leading; a call made with the SDK's backoff
// during the outage succeeds once the database is back; nothing acknowledged before is lost
// and the node leads again.
func TestPostgresRestartIsRetryable(t *testing.T) {
	ctx := context.Background()
	pg := pgtest.OwnCluster(t)
	srv := startServer(t, server.Config{Store: pg.DSN()})
	node := &clusterNode{addr: srv.Addr()}
	gl := client(srv.URL(), testKeyID, testSecret)
	eventually(t, 10*time.Second, "the node leading", node.leads)
	before, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("before"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("m")}})
	if err != nil {
		t.Fatal(err)
	}

	if err := pg.Halt(); err != nil {
		t.Fatal(err)
	}
	_, err = gl.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: before.Alias.AliasId})
	if code := apiCode(err); code != "ServiceUnavailableException" {
		t.Errorf("DescribeAlias with the database down: %v, want ServiceUnavailableException", err)
	}
	_, err = gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("during"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("m")}})
	if code := apiCode(err); code != "ServiceUnavailableException" {
		t.Errorf("CreateAlias with the database down: %v, want ServiceUnavailableException", err)
	}
	eventually(t, 10*time.Second, "the node to stop leading", func() bool { return !node.leads() })

	// A client with the SDK's standard retryer and room to back off, started during the
	// outage, gets its answer once the database is back.
	patient := gamelift.New(gamelift.Options{Region: "us-west-2", BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, ""), RetryMaxAttempts: 20})
	answered := make(chan error, 1)
	go func() {
		_, err := patient.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: before.Alias.AliasId})
		answered <- err
	}()
	if err := pg.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-answered:
		if err != nil {
			t.Errorf("the retrying client's DescribeAlias: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the retrying client never got an answer")
	}
	eventually(t, 10*time.Second, "calls answered again", func() bool {
		_, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("after"),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("m")}})
		return err == nil
	})
	eventually(t, 10*time.Second, "the node leading again", node.leads)
}

// unhealthyEnds counts a fleet's SERVER_PROCESS_TERMINATED_UNHEALTHY events.
func unhealthyEnds(t *testing.T, gl *gamelift.Client, fleet string) int {
	t.Helper()
	out, err := gl.DescribeFleetEvents(context.Background(), &gamelift.DescribeFleetEventsInput{FleetId: aws.String(fleet)})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range out.Events {
		if e.EventCode == types.EventCodeServerProcessTerminatedUnhealthy {
			n++
		}
	}
	return n
}

// healthOutageRig is a server on the fake clock with one connected ACTIVE server process,
// which reports health once (at ProcessReady) and then not within the test.
type healthOutageRig struct {
	clk   *clock.Fake
	srv   *server.Server
	gl    *gamelift.Client
	fleet string
}

func newHealthOutageRig(t *testing.T, cfg server.Config) *healthOutageRig {
	r := &healthOutageRig{clk: clock.NewFake(time.Now())}
	cfg.Clock = r.clk
	r.srv = startServer(t, cfg)
	r.gl = client(r.srv.URL(), testKeyID, testSecret)
	r.fleet = createAnywhereFleet(t, r.gl, "custom-health-outage")
	_, token := computeToken(t, r.gl, r.fleet, "custom-health-outage", "outage-host")
	startSDKProcesses(t, r.srv, r.fleet, "outage-host", token, 1, true)
	return r
}

// stepAt moves the fake clock by d and steps the loops, returning their error.
func (r *healthOutageRig) stepAt(d time.Duration) error {
	r.clk.Advance(d)
	return r.srv.StepLoops(context.Background())
}

// TestHealthSilenceDuringFailingStore: health reports cannot be recorded while the store
// fails writes (dev mode's FailingStore), here for five and a half minutes, longer than the
// health timeout (three 60 s periods). A connected process is not ended as unhealthy when
// the store is back; silent for a whole health timeout afterwards, it is.
func TestHealthSilenceDuringFailingStore(t *testing.T) {
	r := newHealthOutageRig(t, server.Config{Dev: true})
	if code, raw := hoistOp(t, r.srv.URL(), server.InjectFaultTarget, `{"Kind":"FailingStore","Seconds":330}`); code != http.StatusOK {
		t.Fatalf("InjectFault FailingStore: %d %s", code, raw)
	}
	for range 5 {
		r.stepAt(time.Minute)
		// A write this node makes fails, as the process's health reports would.
		if _, err := r.gl.CreateAlias(context.Background(), aliasInput("during")); apiCode(err) != "ServiceUnavailableException" {
			t.Fatalf("CreateAlias during FailingStore: %v", err)
		}
	}
	if err := r.stepAt(time.Minute); err != nil {
		t.Fatalf("StepLoops once the store is back: %v", err)
	}
	if n := unhealthyEnds(t, r.gl, r.fleet); n != 0 {
		t.Fatalf("the process was ended as unhealthy when the store came back (%d events)", n)
	}
	r.stepAt(3 * time.Minute)
	if n := unhealthyEnds(t, r.gl, r.fleet); n != 1 {
		t.Errorf("%d unhealthy ends after a whole health timeout of silence once the store was back, want 1", n)
	}
}

// TestHealthSilenceDuringPostgresOutage: PostgreSQL is down for five minutes of the fake
// clock, longer than the health timeout; the node stops leading and leads again when it is
// back. The connected process is not ended as unhealthy then; silent for a whole health
// timeout afterwards, it is.
func TestHealthSilenceDuringPostgresOutage(t *testing.T) {
	pg := pgtest.OwnCluster(t)
	r := newHealthOutageRig(t, server.Config{Store: pg.DSN()})
	node := &clusterNode{addr: r.srv.Addr()}
	eventually(t, 10*time.Second, "the node leading", node.leads)
	if err := pg.Halt(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the node to stop leading", func() bool { return !node.leads() })
	for range 5 {
		if err := r.stepAt(time.Minute); err == nil {
			t.Fatal("StepLoops with the database down succeeded")
		}
	}
	if err := pg.Resume(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the node leading again", node.leads)
	eventually(t, 10*time.Second, "the loops stepping again", func() bool { return r.stepAt(time.Second) == nil })
	if n := unhealthyEnds(t, r.gl, r.fleet); n != 0 {
		t.Fatalf("the process was ended as unhealthy when the database came back (%d events)", n)
	}
	r.stepAt(3 * time.Minute)
	if n := unhealthyEnds(t, r.gl, r.fleet); n != 1 {
		t.Errorf("%d unhealthy ends after a whole health timeout of silence once the database was back, want 1", n)
	}
}
