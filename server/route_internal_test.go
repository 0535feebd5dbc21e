package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRouteClassify: request shapes on the API listener and the service each goes to.
func TestRouteClassify(t *testing.T) {
	const (
		s3Auth  = "AWS4-HMAC-SHA256 Credential=ASIAX/20260601/us-west-2/s3/aws4_request, SignedHeaders=host, Signature=00"
		glAuth  = "AWS4-HMAC-SHA256 Credential=AKIAX/20260601/us-west-2/gamelift/aws4_request, SignedHeaders=host, Signature=00"
		snsAuth = "AWS4-HMAC-SHA256 Credential=AKIAX/20260601/us-west-2/sns/aws4_request, SignedHeaders=host, Signature=00"
		form    = "application/x-www-form-urlencoded"
	)
	cases := []struct {
		name, method, target string
		header               map[string]string
		want                 destination
	}{
		{"awsJson1_1", "POST", "/", map[string]string{"X-Amz-Target": "GameLift.CreateBuild", "Authorization": glAuth}, toAPI},
		{"awsJson1_1 unsigned", "POST", "/", map[string]string{"X-Amz-Target": "GameLift.ListBuilds"}, toAPI},
		{"RPC v2 CBOR", "POST", "/service/GameLift/operation/CreateBuild", map[string]string{"Smithy-Protocol": "rpc-v2-cbor", "Authorization": glAuth}, toAPI},
		{"healthz", "GET", "/healthz", nil, toAPI},
		{"leader", "GET", "/healthz/leader", nil, toAPI},
		{"metrics", "GET", "/metrics", nil, toAPI},
		{"log download", "GET", "/hoist/logs/abc.zip?Expires=1&Signature=x", nil, toAPI},
		{"log upload", "PUT", "/hoist/logs/?FleetId=f&ComputeName=c&GameSessionId=g", nil, toAPI},
		{"sdk websocket", "GET", "/sdk?pID=1", map[string]string{"Upgrade": "websocket"}, toAPI},
		{"agent websocket", "GET", "/agent", map[string]string{"Upgrade": "websocket"}, toAPI},
		{"websocket in the upload bucket's path", "GET", "/hoist-builds/x", map[string]string{"Upgrade": "websocket"}, toAPI},
		{"unknown path", "GET", "/nothing/here", nil, toAPI},
		{"SNS Publish signed", "POST", "/", map[string]string{"Content-Type": form, "Authorization": snsAuth}, toSNS},
		{"SNS form POST unsigned", "POST", "/", map[string]string{"Content-Type": form + "; charset=utf-8"}, toSNS},
		{"SNS confirm link", "GET", "/?Action=ConfirmSubscription&TopicArn=a&Token=t", nil, toSNS},
		{"SNS unsubscribe link", "GET", "/?Action=Unsubscribe&SubscriptionArn=a&Token=t", nil, toSNS},
		{"SNS certificate", "GET", "/SimpleNotificationService-abc.pem", nil, toSNS},
		{"PutObject path style", "PUT", "/hoist-builds/build-1.zip", map[string]string{"Authorization": s3Auth}, toS3},
		{"PutObject unsigned", "PUT", "/hoist-builds/build-1.zip", nil, toS3},
		{"HeadObject", "HEAD", "/hoist-builds/build-1.zip", nil, toS3},
		{"CreateMultipartUpload", "POST", "/hoist-builds/build-1.zip?uploads", map[string]string{"Authorization": s3Auth}, toS3},
		{"UploadPart", "PUT", "/hoist-builds/build-1.zip?partNumber=1&uploadId=u", map[string]string{"Authorization": s3Auth}, toS3},
		{"CompleteMultipartUpload", "POST", "/hoist-builds/build-1.zip?uploadId=u", map[string]string{"Authorization": s3Auth, "Content-Type": "application/xml"}, toS3},
		{"AbortMultipartUpload", "DELETE", "/hoist-builds/build-1.zip?uploadId=u", nil, toS3},
		{"ListParts", "GET", "/hoist-builds/build-1.zip?uploadId=u", nil, toS3},
		{"multipart in another bucket", "POST", "/other/key?uploads", nil, toS3},
		{"signed S3 for another bucket", "PUT", "/other/key", map[string]string{"Authorization": s3Auth}, toS3},
		{"S3 presigned", "GET", "/other/key?X-Amz-Credential=ASIAX%2F20260601%2Fus-west-2%2Fs3%2Faws4_request", nil, toS3},
		{"S3 form POST signed as s3", "POST", "/hoist-builds/k", map[string]string{"Content-Type": form, "Authorization": s3Auth}, toS3},
		{"virtual-hosted style", "PUT", "/build-1.zip", map[string]string{"Host": "hoist-builds.127.0.0.1:9080"}, toS3},
		{"unsigned PUT elsewhere", "PUT", "/other/key", nil, toAPI},
		{"console", "GET", "/console", nil, toConsole},
		{"console page", "GET", "/console/fleets/fleet-1", nil, toConsole},
		{"not the console", "GET", "/consoles", nil, toAPI},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "http://127.0.0.1:9080"+c.target, strings.NewReader(""))
		for k, v := range c.header {
			if k == "Host" {
				r.Host = v
			}
			r.Header.Set(k, v)
		}
		if got := classify(r); got != c.want {
			t.Errorf("%s (%s %s): %v, want %v", c.name, c.method, c.target, got, c.want)
		}
	}
}

// TestRouteS3Dispatch: routeS3 hands S3 requests to the S3 handler and the rest on.
func TestRouteS3Dispatch(t *testing.T) {
	tag := func(name string) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(name)) })
	}
	h := routeTo(toS3, tag("s3"), tag("next"))
	for target, want := range map[string]string{"/hoist-builds/b.zip": "s3", "/healthz": "next"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodHead, target, nil))
		if w.Body.String() != want {
			t.Errorf("HEAD %s went to %q, want %q", target, w.Body.String(), want)
		}
	}
}
