// Package serversdk is Hoist's Go server SDK: what a game server links to talk to Hoist (or
// to Amazon GameLift) over the Server SDK 5.x websocket protocol. Its calls mirror the
// official GameLift Go server SDK's — InitSDK, ProcessReady, ActivateGameSession,
// AcceptPlayerSession, RemovePlayerSession, DescribePlayerSessions,
// UpdatePlayerSessionCreationPolicy, StartMatchBackfill, StopMatchBackfill,
// GetComputeCertificate, GetFleetRoleCredentials, GetGameSessionId, GetTerminationTime,
// ProcessEnding and Destroy — with behaviour taken from the protocol reference
// (server-sdk-protocol.md; section numbers in comments refer to it). It is written from that
// reference; no code comes from the official SDKs.
//
// An *SDK is one process's connection; New makes one with injected options (clock, TLS,
// environment) for tests and embedding. The package-level functions drive a default *SDK
// the way the official SDK's package functions do.
//
// Game servers and Hoist's tests import this package; Hoist's control plane does not.
package serversdk

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// SdkVersion is the protocol version this SDK speaks, sent as sdkVersion and SdkVersion.
const SdkVersion = "5.6.0"

// SdkLanguage is sent as sdkLanguage and SdkLanguage.
const SdkLanguage = "Go"

// Defaults of Options (protocol §1.6, §2.3, §6.3).
const (
	DefaultCallTimeout         = 20 * time.Second
	DefaultActivateTimeout     = 6 * time.Second
	DefaultHealthInterval      = 60 * time.Second
	DefaultHealthJitter        = 10 * time.Second
	DefaultHealthTimeout       = 50 * time.Second
	DefaultConnectAttempts     = 8
	DefaultConnectBackoff      = 4 * time.Second
	DefaultMaxConnectBackoff   = 32 * time.Second
	DefaultTerminationFallback = 270 * time.Second
)

// Options configure an SDK. The zero value is what a game server wants.
type Options struct {
	// Clock drives every timeout, the health loop and the reconnect backoff; nil means the
	// wall clock.
	Clock clock.Clock
	// Logger receives the SDK's log; nil means slog.Default().
	Logger *slog.Logger
	// TLSConfig is used for wss:// URLs, e.g. to trust Hoist's CA; nil means the system roots.
	TLSConfig *tls.Config
	// Getenv reads the GAMELIFT_* environment; nil means os.Getenv.
	Getenv func(string) string
	// Exit ends the process when TerminateProcess arrives without an OnProcessTerminate
	// callback (§4); nil means os.Exit.
	Exit func(code int)
	// CallTimeout bounds every request but ActivateServerProcess; zero means 20 s.
	CallTimeout time.Duration
	// ActivateTimeout bounds ActivateServerProcess; zero means 6 s (as the Go SDK).
	ActivateTimeout time.Duration
	// HealthInterval, HealthJitter and HealthTimeout shape the health loop (§6.3): a
	// heartbeat every HealthInterval ± HealthJitter, OnHealthCheck given HealthTimeout.
	HealthInterval, HealthJitter, HealthTimeout time.Duration
	// ConnectAttempts is how often InitSDK tries to connect; zero means 8.
	ConnectAttempts int
	// ConnectBackoff is the first wait between connect attempts, doubling up to
	// MaxConnectBackoff; zero means 4 s and 32 s.
	ConnectBackoff, MaxConnectBackoff time.Duration
}

func (o *Options) setDefaults() {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Exit == nil {
		o.Exit = os.Exit
	}
	setDur(&o.CallTimeout, DefaultCallTimeout)
	setDur(&o.ActivateTimeout, DefaultActivateTimeout)
	setDur(&o.HealthInterval, DefaultHealthInterval)
	setDur(&o.HealthJitter, DefaultHealthJitter)
	setDur(&o.HealthTimeout, DefaultHealthTimeout)
	setDur(&o.ConnectBackoff, DefaultConnectBackoff)
	setDur(&o.MaxConnectBackoff, DefaultMaxConnectBackoff)
	if o.ConnectAttempts == 0 {
		o.ConnectAttempts = DefaultConnectAttempts
	}
}

func setDur(d *time.Duration, def time.Duration) {
	if *d == 0 {
		*d = def
	}
}

// ServerParameters are InitSDK's parameters (§1.1). Each is overridden by its environment
// variable when that is set and non-empty.
type ServerParameters struct {
	WebSocketURL string // GAMELIFT_SDK_WEBSOCKET_URL
	ProcessID    string // GAMELIFT_SDK_PROCESS_ID; "ManagedResource" means a random UUID
	HostID       string // GAMELIFT_SDK_HOST_ID: the compute name
	FleetID      string // GAMELIFT_SDK_FLEET_ID
	AuthToken    string // GAMELIFT_SDK_AUTH_TOKEN; when set, SigV4 is not used
	AwsRegion    string // GAMELIFT_REGION (SigV4 mode)
	AccessKey    string // GAMELIFT_ACCESS_KEY (SigV4 mode)
	SecretKey    string // GAMELIFT_SECRET_KEY (SigV4 mode)
	SessionToken string // GAMELIFT_SESSION_TOKEN (SigV4 mode, optional)
}

// Data types shared with the wire model (§5).
type (
	// GameSession is a game session as OnStartGameSession and OnUpdateGameSession see it.
	GameSession = message.GameSession
	// PlayerSession is one result of DescribePlayerSessions.
	PlayerSession = message.PlayerSession
	// Player is one player of StartMatchBackfill.
	Player = message.Player
	// AttributeValue is a typed player attribute.
	AttributeValue = message.AttributeValue
	// DescribePlayerSessionsRequest selects player sessions: exactly one of GameSessionID,
	// PlayerID and PlayerSessionID.
	DescribePlayerSessionsRequest = message.DescribePlayerSessions
	// DescribePlayerSessionsResult is DescribePlayerSessions' answer.
	DescribePlayerSessionsResult = message.DescribePlayerSessionsResult
	// StartMatchBackfillRequest asks for a backfill ticket.
	StartMatchBackfillRequest = message.StartMatchBackfill
	// StopMatchBackfillRequest cancels a backfill ticket.
	StopMatchBackfillRequest = message.StopMatchBackfill
	// GetComputeCertificateResult is the certificate path on the compute and its name.
	GetComputeCertificateResult = message.GetComputeCertificateResult
	// GetFleetRoleCredentialsRequest names the role and, optionally, the session.
	GetFleetRoleCredentialsRequest = message.GetFleetRoleCredentials
	// FleetRoleCredentials are temporary credentials of the fleet's role.
	FleetRoleCredentials = message.FleetRoleCredentials
)

// UpdateGameSession is what OnUpdateGameSession receives (§4).
type UpdateGameSession struct {
	GameSession      GameSession
	UpdateReason     string
	BackfillTicketID string
}

// LogParameters lists files the service may collect after the process ends.
type LogParameters struct {
	LogPaths []string
}

// ProcessParameters are ProcessReady's parameters (§6.2).
type ProcessParameters struct {
	// Port is the port players connect to, 1..60000.
	Port int
	// LogParameters are sent as LogPaths.
	LogParameters LogParameters
	// OnStartGameSession is called, on its own goroutine, for every CreateGameSession push.
	// The game calls ActivateGameSession when it is ready for players.
	OnStartGameSession func(GameSession)
	// OnUpdateGameSession is called for every UpdateGameSession push.
	OnUpdateGameSession func(UpdateGameSession)
	// OnProcessTerminate is called for a TerminateProcess push. When nil, the SDK itself
	// calls ProcessEnding and Destroy and exits the process (§4).
	OnProcessTerminate func()
	// OnHealthCheck reports health every minute; it has HealthTimeout (50 s) to answer, or
	// the process is reported unhealthy. When nil, the process is reported healthy.
	OnHealthCheck func() bool
}

// Errors the SDK returns without asking the service.
var (
	ErrNotInitialized = errors.New("serversdk: InitSDK has not succeeded")
	ErrNotReady       = errors.New("serversdk: ProcessReady has not succeeded")
	ErrNoGameSession  = errors.New("serversdk: no game session has been started on this process")
	ErrTimeout        = errors.New("serversdk: the service did not answer in time")
	ErrNoFleetRole    = errors.New("serversdk: fleet role credentials are not available on this compute")
	ErrClosed         = errors.New("serversdk: the connection is closed")
)

// Error is an error reply from the service (§2.2): its StatusCode and ErrorMessage.
type Error struct {
	Action     string
	StatusCode int
	Message    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("serversdk: %s failed with status %d: %s", e.Action, e.StatusCode, e.Message)
}

// SDK is one game server process's connection to the service. Make it with New; it is safe
// for concurrent use.
type SDK struct {
	opt Options
	log *slog.Logger

	mu            sync.Mutex
	params        ServerParameters
	link          *link
	proc          ProcessParameters
	ready         bool
	gameSessionID string
	termination   time.Time
	stopHealth    context.CancelFunc
	roleCreds     map[string]FleetRoleCredentials
}

// New returns an SDK that is not connected yet.
func New(opt Options) *SDK {
	opt.setDefaults()
	return &SDK{opt: opt, log: opt.Logger, roleCreds: make(map[string]FleetRoleCredentials)}
}
