// Package snsapi serves Hoist's notification service (package notify) over Amazon SNS's wire
// protocol, awsQuery, on the API listener, so that `aws sns --endpoint-url ...` and the AWS
// SDKs' SNS clients work against Hoist (docs/notifications.md):
//
//	POST <any path>, Content-Type application/x-www-form-urlencoded, no X-Amz-Target,
//	     body Action=<Op>&Version=2010-03-31&...                       -> an SNS operation (SigV4, service sns)
//	GET  /?Action=ConfirmSubscription&TopicArn=...&Token=...           -> SubscribeURL (unsigned; the token authenticates)
//	GET  /?Action=Unsubscribe&SubscriptionArn=...&Token=...            -> UnsubscribeURL (unsigned; the token authenticates)
//	GET  /SimpleNotificationService-<id>.pem                           -> the signing certificate (unsigned)
//	GET  /hoist/notifications/failed[?TopicArn=...]                    -> failed deliveries as JSON (SigV4, service sns)
//
// Answers are XML in the SNS namespace; errors are <ErrorResponse> documents with SNS's codes
// and HTTP statuses. The package holds no rules: it parses, calls notify and encodes.
package snsapi

import (
	"context"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/notify"
)

// Paths the handler answers besides the awsQuery POSTs.
const (
	// FailedPath lists failed deliveries.
	FailedPath = "/hoist/notifications/failed"
	// certPrefix and certSuffix frame the signing certificate's path.
	certPrefix = "/SimpleNotificationService-"
	certSuffix = ".pem"
)

// maxBody bounds a request body: a 256 KiB message, form-encoded, with room to spare.
const maxBody = 2 << 20

// Config configures New.
type Config struct {
	// Service is the notification service.
	Service *notify.Service
	// Authenticate checks a signed request and its body (SigV4 with service sns); nil
	// accepts every request.
	Authenticate func(r *http.Request, body []byte) *api.Error
	// Certificate returns the signing certificate (PEM) and the name it is served under
	// (CertPath).
	Certificate func(ctx context.Context) (name string, pem []byte, err error)
	// Logger receives internal errors; nil discards.
	Logger *slog.Logger
}

// Handler serves the SNS API. Wrap puts it in front of another handler.
type Handler struct {
	svc  *notify.Service
	auth func(r *http.Request, body []byte) *api.Error
	cert func(ctx context.Context) (string, []byte, error)
	log  *slog.Logger
}

// New returns the SNS handler.
func New(cfg Config) *Handler {
	h := &Handler{svc: cfg.Service, auth: cfg.Authenticate, cert: cfg.Certificate, log: cfg.Logger}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// CertPath is the path the signing certificate named name is served at.
func CertPath(name string) string { return certPrefix + name + certSuffix }

// Links returns the URLs of messages for an API listener at base (e.g. http://127.0.0.1:9080).
func Links(base string) notify.Links {
	base = strings.TrimSuffix(base, "/")
	return notify.Links{
		SubscribeURL: func(topicARN, token string) string {
			return base + "/?" + url.Values{"Action": {"ConfirmSubscription"}, "TopicArn": {topicARN}, "Token": {token}}.Encode()
		},
		UnsubscribeURL: func(subARN, token string) string {
			return base + "/?" + url.Values{"Action": {"Unsubscribe"}, "SubscriptionArn": {subARN}, "Token": {token}}.Encode()
		},
	}
}

// Wrap returns a handler that serves the SNS requests (see the package documentation) and
// sends every other request to next.
func (h *Handler) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case isQueryPost(r):
			h.serveQuery(w, r)
		case r.Method != http.MethodGet && r.Method != http.MethodHead:
			next.ServeHTTP(w, r)
		case r.URL.Path == "/" && isLinkAction(r.URL.Query().Get("Action")):
			h.serveLink(w, r)
		case strings.HasPrefix(r.URL.Path, certPrefix) && strings.HasSuffix(r.URL.Path, certSuffix):
			h.serveCert(w, r)
		case r.URL.Path == FailedPath:
			h.serveFailed(w, r)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// isQueryPost reports whether r is an awsQuery request: a form POST without X-Amz-Target
// (GameLift's awsJson1_1 has one; its CBOR uses /service/... paths and its own media type).
func isQueryPost(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/x-www-form-urlencoded"
}

// isLinkAction reports whether action is one of the unsigned links messages carry.
func isLinkAction(action string) bool {
	return action == "ConfirmSubscription" || action == "Unsubscribe"
}

// newRequestID returns a request ID in SNS's form (a UUID).
func newRequestID() string { return uuid.NewString() }
