package server

import (
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/hoist-gg/hoist/gamelift"
)

// destination is the service a request on the API listener is for. One listener answers every
// AWS client Hoist serves, so that a single AWS_ENDPOINT_URL points the GameLift API, SNS and
// the S3 subset for build uploads at Hoist (docs/architecture.md, "One endpoint").
type destination int

const (
	// toAPI is the GameLift API (awsJson1_1 and RPC v2 CBOR) and Hoist's own endpoints
	// (/healthz, /metrics, /hoist/..., the websockets).
	toAPI destination = iota
	// toSNS is the SNS-compatible notification API and its unsigned links (snsapi).
	toSNS
	// toS3 is the S3 subset builds are uploaded to (s3api).
	toS3
	// toConsole is the web console's path (/console), reserved for it.
	toConsole
)

// String names the destination in test failures and logs.
func (d destination) String() string {
	return [...]string{"GameLift", "SNS", "S3", "console"}[d]
}

// consolePath is the web console's path on the API listener.
const consolePath = "/console"

// classify decides which service a request is for, by its shape alone, first rule that applies:
//
//  1. a websocket upgrade: the API (the SDK and agent endpoints);
//  2. a SigV4 credential scope (Authorization header or X-Amz-Credential query parameter)
//     naming s3, sns or gamelift: that service;
//  3. an X-Amz-Target header: the API (awsJson1_1);
//  4. a form-encoded POST: SNS (awsQuery);
//  5. a Host of the upload bucket in virtual-hosted style (hoist-builds.<host>): S3;
//  6. /console and below: the console;
//  7. SNS's links (/?Action=ConfirmSubscription|Unsubscribe) and certificates: SNS;
//  8. a path in the upload bucket (/hoist-builds/<key>), or any /<bucket>/<key> path with S3's
//     multipart query parameters (uploads, uploadId, partNumber): S3;
//  9. anything else: the API.
func classify(r *http.Request) destination {
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		return toAPI
	}
	switch signingService(r) {
	case "s3":
		return toS3
	case "sns":
		return toSNS
	case "gamelift":
		return toAPI
	}
	switch {
	case r.Header.Get("X-Amz-Target") != "":
		return toAPI
	case isFormPost(r):
		return toSNS
	case strings.HasPrefix(hostName(r.Host), gamelift.UploadBucket+"."):
		return toS3
	}
	return classifyPath(r)
}

// classifyPath applies the rules on the path and query of an unsigned request (classify's 6-9).
func classifyPath(r *http.Request) destination {
	p := r.URL.Path
	query := r.URL.Query()
	switch {
	case p == consolePath || strings.HasPrefix(p, consolePath+"/"):
		return toConsole
	case p == "/" && (query.Get("Action") == "ConfirmSubscription" || query.Get("Action") == "Unsubscribe"):
		return toSNS
	case strings.HasPrefix(p, "/SimpleNotificationService-") && strings.HasSuffix(p, ".pem"):
		return toSNS
	case strings.HasPrefix(p, "/"+gamelift.UploadBucket+"/"):
		return toS3
	case isObjectPath(p) && (query.Has("uploads") || query.Has("uploadId") || query.Has("partNumber")):
		return toS3
	}
	return toAPI
}

// signingService returns the service of a SigV4 credential scope (<key>/<date>/<region>/
// <service>/aws4_request), or "" when the request carries none.
func signingService(r *http.Request) string {
	cred := r.URL.Query().Get("X-Amz-Credential")
	if auth := r.Header.Get("Authorization"); strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") {
		_, after, ok := strings.Cut(auth, "Credential=")
		if !ok {
			return ""
		}
		cred, _, _ = strings.Cut(after, ",")
	}
	parts := strings.Split(strings.TrimSpace(cred), "/")
	if len(parts) != 5 {
		return ""
	}
	return parts[3]
}

// isFormPost reports whether r is a form-encoded POST (SNS's awsQuery protocol).
func isFormPost(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// isObjectPath reports whether p has the path-style shape /<bucket>/<key>.
func isObjectPath(p string) bool {
	bucket, key, ok := strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return ok && bucket != "" && key != ""
}

// hostName returns the host of a Host header without its port.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// routeTo sends the requests classify gives to dest to h, and every other request to next.
func routeTo(dest destination, h, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if classify(r) == dest {
			h.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
