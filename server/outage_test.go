package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

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
