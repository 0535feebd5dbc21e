package httpapi

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/api"
)

// newSDKClient returns the real aws-sdk-go-v2 GameLift client (RPC v2 CBOR) pointed at url.
func newSDKClient(url string) *gamelift.Client {
	return gamelift.New(gamelift.Options{
		BaseEndpoint:     aws.String(url),
		Region:           "us-west-2",
		RetryMaxAttempts: 1,
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
		}),
	})
}

func TestSDKClient(t *testing.T) {
	var gotBody []byte
	auth := func(r *http.Request, body []byte) *api.Error {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ") {
			return api.Errorf(api.MissingAuthenticationTokenException, "not signed")
		}
		gotBody = body
		return nil
	}
	srv := httptest.NewServer(New(Config{Handlers: fakeHandlers(newFakeStore()), Authenticate: auth}))
	defer srv.Close()
	client := newSDKClient(srv.URL)
	ctx := context.Background()

	out, err := client.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: aws.String("alias-1")})
	if err != nil {
		t.Fatalf("DescribeAlias: %v", err)
	}
	a := out.Alias
	if aws.ToString(a.Name) != "prod" || a.RoutingStrategy.Type != types.RoutingStrategyTypeSimple ||
		!a.CreationTime.Equal(created) || !a.LastUpdatedTime.Equal(created.Add(2*time.Hour-125*time.Millisecond)) {
		t.Errorf("DescribeAlias decoded %+v (CreationTime %v)", a, a.CreationTime)
	}
	if len(gotBody) == 0 {
		t.Error("Authenticate did not see the body")
	}

	_, err = client.DescribeAlias(ctx, &gamelift.DescribeAliasInput{AliasId: aws.String("alias-nope")})
	var nf *types.NotFoundException
	if !errors.As(err, &nf) || nf.ErrorMessage() != "No alias found with ID alias-nope" {
		t.Errorf("want *types.NotFoundException with its message, got %T %v", err, err)
	}

	_, err = client.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("f")})
	var ae smithy.APIError
	if !errors.As(err, &ae) || ae.ErrorCode() != "NotImplementedException" ||
		ae.ErrorMessage() != "Hoist does not implement GameLift.CreateFleet yet" {
		t.Errorf("want NotImplementedException, got %T %v", err, err)
	}

	if _, err := client.DeleteAlias(ctx, &gamelift.DeleteAliasInput{AliasId: aws.String("alias-1")}); err != nil {
		t.Errorf("DeleteAlias: %v", err)
	}
	mm, err := client.DescribeMatchmaking(ctx, &gamelift.DescribeMatchmakingInput{TicketIds: []string{"t-1"}})
	if err != nil || len(mm.TicketList) != 1 || mm.TicketList[0].Players[0].LatencyInMs["us-east-1"] != 87 ||
		mm.TicketList[0].Players[0].PlayerAttributes["rank"].SDM["team"] != 1350.25 {
		t.Errorf("DescribeMatchmaking: %v %+v", err, mm)
	}
}

func TestRequestIDAndInternalErrorLog(t *testing.T) {
	var logBuf bytes.Buffer
	var seen string
	h := &api.Handlers{DescribeAlias: func(ctx context.Context, _ *api.DescribeAliasInput) (*api.DescribeAliasOutput, error) {
		seen = RequestID(ctx)
		return nil, errors.New("secret detail")
	}}
	logger := slog.New(slog.NewTextHandler(&logBuf, nil))
	srv := httptest.NewServer(New(Config{Handlers: h, Logger: logger}))
	defer srv.Close()

	_, err := newSDKClient(srv.URL).DescribeAlias(context.Background(), &gamelift.DescribeAliasInput{AliasId: aws.String("alias-a")})
	var ise *types.InternalServiceException
	if !errors.As(err, &ise) || strings.Contains(ise.ErrorMessage(), "secret") {
		t.Fatalf("want InternalServiceException without the detail, got %v", err)
	}
	if _, perr := uuid.Parse(seen); perr != nil {
		t.Fatalf("RequestID(ctx) = %q", seen)
	}
	var re interface{ ServiceRequestID() string }
	if !errors.As(err, &re) || re.ServiceRequestID() != seen {
		t.Errorf("client saw request ID %v, handler saw %q", err, seen)
	}
	log := logBuf.String()
	if !strings.Contains(log, "request_id="+seen) || !strings.Contains(log, "secret detail") {
		t.Errorf("log lacks the request ID or the error: %s", log)
	}
	if RequestID(context.Background()) != "" {
		t.Error("RequestID outside a request is not empty")
	}
}

func TestPanicLogged(t *testing.T) {
	var logBuf bytes.Buffer
	srv := httptest.NewServer(New(Config{Handlers: fakeHandlers(newFakeStore()),
		Logger: slog.New(slog.NewTextHandler(&logBuf, nil))}))
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL, strings.NewReader(`{"AliasId":"alias-panic"}`))
	req.Header.Set("X-Amz-Target", "GameLift.DescribeAlias")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	id := resp.Header.Get("X-Amzn-Requestid")
	log := logBuf.String()
	if resp.StatusCode != 500 || !strings.Contains(log, "request_id="+id) ||
		!strings.Contains(log, "the fake handler panics") || !strings.Contains(log, "goroutine") {
		t.Errorf("status %d, log: %s", resp.StatusCode, log)
	}
}

func TestRequestIDsUnique(t *testing.T) {
	g := newIDGenerator()
	seen := make(map[string]bool)
	for range 10000 {
		id := g.next()
		if seen[id] || !uuidRE.MatchString(id) {
			t.Fatalf("bad or repeated request ID %q", id)
		}
		seen[id] = true
	}
	if newIDGenerator().next() == g.next() {
		t.Error("two generators agree")
	}
}

func TestChunkedOversize(t *testing.T) {
	srv := httptest.NewServer(New(Config{MaxBodyBytes: 64}))
	defer srv.Close()
	// A reader of unknown length makes the client send the body chunked, without Content-Length.
	body := struct{ *strings.Reader }{strings.NewReader(`{"AliasId":"` + strings.Repeat("x", 100) + `"}`)}
	req, _ := http.NewRequest("POST", srv.URL+"/service/GameLift/operation/DescribeAlias", body)
	req.Header.Set("Smithy-Protocol", "rpc-v2-cbor")
	req.Header.Set("Content-Type", "application/cbor")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-Errortype") != "SerializationException" {
		t.Errorf("status %d, error type %q", resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"))
	}
}

func TestRequestLogAtDebugLevel(t *testing.T) {
	h := &api.Handlers{DescribeAlias: func(context.Context, *api.DescribeAliasInput) (*api.DescribeAliasOutput, error) {
		return nil, api.Errorf(api.NotFoundException, "no such alias")
	}}
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logBuf bytes.Buffer
		logger := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: level}))
		srv := httptest.NewServer(New(Config{Handlers: h, Logger: logger}))
		_, err := newSDKClient(srv.URL).DescribeAlias(context.Background(), &gamelift.DescribeAliasInput{AliasId: aws.String("alias-a")})
		srv.Close()
		var re interface{ ServiceRequestID() string }
		if !errors.As(err, &re) {
			t.Fatalf("no request ID in %v", err)
		}
		log := logBuf.String()
		want := []string{"msg=request", "operation=DescribeAlias", "status=400", "error=NotFoundException",
			"request_id=" + re.ServiceRequestID(), "caller=AKIDEXAMPLE", "latency="}
		for _, w := range want {
			if got := strings.Contains(log, w); got != (level == slog.LevelDebug) {
				t.Errorf("level %v: %q in the log is %v: %s", level, w, got, log)
			}
		}
	}
}
