// Package notify is Hoist's notification service: SNS-compatible topics, their HTTP/S
// subscriptions, and the durable delivery of messages to those subscriptions
// (docs/notifications.md). GameLift's placement and matchmaking events reach subscribers
// through it: a queue's or matchmaking configuration's NotificationTarget is a topic's ARN.
//
// Like gamelift, it is a domain package: it knows topics, subscriptions and deliveries, and
// nothing of HTTP or SQL. The SNS wire protocol (awsQuery) is in snsapi; sending a delivery is
// a Sender the server supplies. Every state change is one store transaction, and a message
// becomes one delivery record per confirmed subscription in the transaction that publishes
// it, so nothing published is lost in a crash and any node may serve any call. Deliveries
// are made by the DeliveryLoop, which runs on the cluster's leader.
package notify

import (
	"context"
	"crypto"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// DefaultAccountID is the account of topic ARNs when Config.AccountID is empty. SNS topic
// ARNs always name an account, and subscribers' libraries parse them, so Hoist does not use
// GameLift's empty-account form here.
const DefaultAccountID = "000000000000"

// Config is what New needs.
type Config struct {
	// Store holds topics, subscriptions and deliveries.
	Store store.Store
	// Clock is the time source of timestamps and retry delays.
	Clock clock.Clock
	// Region and AccountID make topic ARNs, arn:aws:sns:<Region>:<AccountID>:<name>; an empty
	// AccountID means DefaultAccountID.
	Region, AccountID string
	// Links makes the URLs messages carry.
	Links Links
	// Key returns the key messages are signed with, and where its certificate is.
	Key func(ctx context.Context) (*SigningKey, error)
}

// Links makes the URLs carried by the messages sent to subscribers; the transport that
// answers them provides it.
type Links struct {
	// SubscribeURL confirms a subscription to topicARN with token (an unsigned GET).
	SubscribeURL func(topicARN, token string) string
	// UnsubscribeURL removes a subscription with its token (an unsigned GET).
	UnsubscribeURL func(subscriptionARN, token string) string
}

// SigningKey signs messages; CertURL is where subscribers fetch the certificate that
// verifies them.
type SigningKey struct {
	Signer  crypto.Signer
	CertURL string
}

// Service is the notification service. Its methods are safe for concurrent use.
type Service struct {
	store   store.Store
	clock   clock.Clock
	region  string
	account string
	links   Links
	key     func(ctx context.Context) (*SigningKey, error)
}

// New returns the service.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, clock: cfg.Clock, region: cfg.Region, account: cfg.AccountID, links: cfg.Links, key: cfg.Key}
	if s.account == "" {
		s.account = DefaultAccountID
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	return s
}

// Error codes, as SNS names them on the wire.
const (
	CodeNotFound           = "NotFound"
	CodeInvalidParameter   = "InvalidParameter"
	CodeAuthorizationError = "AuthorizationError"
)

// Error is an error the caller of an operation receives as it is.
type Error struct {
	Code, Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// errorf returns an *Error.
func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// invalid is SNS's InvalidParameter answer about a parameter.
func invalid(param string) *Error {
	return errorf(CodeInvalidParameter, "Invalid parameter: %s", param)
}

var (
	errTopicNotFound = errorf(CodeNotFound, "Topic does not exist")
	errSubNotFound   = errorf(CodeNotFound, "Subscription does not exist")
)

// newID returns a fresh message or subscription ID (a UUID, as SNS uses).
func newID() string { return uuid.NewString() }

// newToken returns a fresh secret token (64 hex digits).
func newToken() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// nowMillis is the clock's time in Unix milliseconds.
func (s *Service) nowMillis() int64 { return s.clock.Now().UnixMilli() }
