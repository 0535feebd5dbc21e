// Package sdkws is Hoist's side of the GameLift Server SDK 5.x websocket protocol and of the
// GameLift Agent websocket protocol (shared reference: server-sdk-protocol.md; section numbers
// in comments refer to it).
//
// A Hub is two http.Handlers — the SDK endpoint (the Hub itself) and the agent endpoint
// (AgentHandler) — plus the push side: Push delivers CreateGameSession, UpdateGameSession,
// TerminateProcess and RefreshConnection to a process by ID, PushAgent delivers the agent
// pushes to a compute. Every request frame is decoded into its sdkws/message type and handed
// to a Backend, GameSessionBackend or AgentBackend; the Hub holds no domain rules: it knows
// sockets, frames, credentials on the URL and which socket is the newest.
//
// Only the wiring (server, cmd) imports this package; the domain must not (it implements the
// Backend interfaces through an adapter instead).
package sdkws

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// Defaults for the zero values of Config.
const (
	DefaultMaxSkew      = 15 * time.Minute
	DefaultWriteTimeout = 10 * time.Second
	DefaultReadLimit    = 1 << 20
	DefaultMaxInFlight  = 16
)

// Config configures a Hub.
type Config struct {
	// Backend serves the SDK endpoint; required.
	Backend Backend
	// GameSessions serves the game- and player-session actions; nil answers them with 501.
	GameSessions GameSessionBackend
	// Agent serves the agent endpoint; nil makes AgentHandler answer 404.
	Agent AgentBackend
	// SigV4Keys returns the secret of an access key ID for the SDK's SigV4 mode (§1.2); nil
	// refuses SigV4 connections.
	SigV4Keys func(accessKeyID string) (secret string, ok bool)
	// Clock drives every timeout; nil means clock.Real{}.
	Clock clock.Clock
	// Logger receives the Hub's log; nil means slog.Default().
	Logger *slog.Logger
	// MaxSkew is how far a SigV4 signing time may be from Clock's time.
	MaxSkew time.Duration
	// WriteTimeout bounds every frame written.
	WriteTimeout time.Duration
	// ReadLimit is the largest frame accepted, in bytes.
	ReadLimit int64
	// MaxInFlight bounds the requests one socket may have in progress; the socket is not read
	// while it is reached (the SDKs send requests concurrently, §2.2).
	MaxInFlight int
	// OnProcessConnected and OnAgentConnected, when set, are called once a socket is
	// established and pushes can reach it (e.g. to deliver what waited for it). They must not
	// block.
	OnProcessConnected func(ProcessRef)
	OnAgentConnected   func(ComputeRef)
	// OnAgentGameMetrics, when set, receives the HoistGameMetrics frames of agents (the whole
	// frame, which it must not keep); without it they are acknowledged and ignored.
	OnAgentGameMetrics func(ref ComputeRef, frame []byte)
}

func (c *Config) setDefaults() {
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.MaxSkew == 0 {
		c.MaxSkew = DefaultMaxSkew
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.ReadLimit == 0 {
		c.ReadLimit = DefaultReadLimit
	}
	if c.MaxInFlight == 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
}

// ErrNotConnected is returned by Push and PushAgent when no socket of the process or compute
// is open on this Hub.
var ErrNotConnected = errors.New("sdkws: not connected to this node")

// ErrClosed is returned by Push and PushAgent after Close.
var ErrClosed = errors.New("sdkws: hub closed")

// Hub serves both endpoints and delivers pushes. Create it with New; it is safe for
// concurrent use.
type Hub struct {
	cfg       Config
	log       *slog.Logger
	processes registry[string]
	agents    registry[ComputeRef]

	mu     sync.Mutex
	closed bool
	all    map[*socket]struct{}
}

// New returns a Hub. cfg.Backend must be set.
func New(cfg Config) *Hub {
	if cfg.Backend == nil {
		panic("sdkws: Config.Backend is nil")
	}
	cfg.setDefaults()
	return &Hub{cfg: cfg, log: cfg.Logger, all: make(map[*socket]struct{})}
}

// Push sends a push (message.CreateGameSession, UpdateGameSession, TerminateProcess or
// RefreshConnection; §4) to the newest socket of the process, with StatusCode 200 and no
// RequestId (§2.2). It returns when the frame is written, ErrNotConnected when the process has
// no socket here, or the write error.
func (h *Hub) Push(ctx context.Context, processID string, p message.Message) error {
	return h.push(ctx, h.processes.newest(processID), p)
}

// PushAgent sends an agent push (message.NotifyProcessRegistered, NotifyGameSessionActivated,
// ForceExitServerProcess, StartComputeTermination, AgentRefreshConnection; §7.3) to the
// newest agent socket of the compute.
func (h *Hub) PushAgent(ctx context.Context, ref ComputeRef, p message.Message) error {
	return h.push(ctx, h.agents.newest(ref), p)
}

func (h *Hub) push(ctx context.Context, s *socket, p message.Message) error {
	if h.isClosed() {
		return ErrClosed
	}
	if s == nil {
		return ErrNotConnected
	}
	frame, err := message.Encode(message.Envelope{Action: p.Action(), StatusCode: message.StatusOK}, p)
	if err != nil {
		return err
	}
	return s.write(ctx, frame)
}

// Connected reports whether the process has a socket open on this Hub.
func (h *Hub) Connected(processID string) bool { return h.processes.newest(processID) != nil }

// AgentConnected reports whether the compute has an agent socket open on this Hub.
func (h *Hub) AgentConnected(ref ComputeRef) bool { return h.agents.newest(ref) != nil }

// Sockets returns the number of open sockets, both endpoints together.
func (h *Hub) Sockets() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.all)
}

// Disconnect closes every socket of the process with status 1000, which tells the SDK not to
// reconnect (§1.6); a process that had not ended is reported Disconnected. It reports whether
// there was a socket to close.
func (h *Hub) Disconnect(processID string) bool {
	socks := h.processes.sockets(processID)
	for _, s := range socks {
		s.ws.Close(websocket.StatusNormalClosure, "disconnected by the service")
	}
	return len(socks) > 0
}

// Close closes every socket with status 1012 (service restart): the SDKs and the agent
// reconnect, to this node when it is back or to another one. Disconnects are not reported to
// the Backend while closing. Close waits for the close handshakes (bounded by the websocket
// library's own 5 s limit). http.Server.Shutdown does not close hijacked connections, so call
// Close as well.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	socks := make([]*socket, 0, len(h.all))
	for s := range h.all {
		socks = append(socks, s)
	}
	h.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range socks {
		wg.Go(func() { s.ws.Close(websocket.StatusServiceRestart, "server shutting down") })
	}
	wg.Wait()
}

func (h *Hub) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// track adds or removes a socket from the set Close closes; it refuses new sockets after
// Close.
func (h *Hub) track(s *socket, add bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if add {
		if h.closed {
			return false
		}
		h.all[s] = struct{}{}
	} else {
		delete(h.all, s)
	}
	return true
}

// refuse answers a request that may not upgrade.
func refuse(w http.ResponseWriter, e *Error) {
	http.Error(w, e.Message, e.Status)
}

// authStatus turns an authentication error into the HTTP status of the refusal: 403 unless
// the Backend chose another 4xx (§1.5: the SDKs recognise 403 as "forbidden").
func (h *Hub) authStatus(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		if e.Status >= 400 && e.Status < 500 && e.Status != 401 {
			return e
		}
		return &Error{Status: http.StatusForbidden, Message: e.Message}
	}
	h.log.Error("sdkws: authenticating a socket failed", "err", err)
	return &Error{Status: http.StatusForbidden, Message: "forbidden"}
}

// isUpgrade reports whether r asks for a websocket upgrade.
func isUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// accept upgrades r, with the options both endpoints share: no compression, no origin check
// (the SDKs and the agent send no Origin; credentials travel in the URL, not in cookies).
func (h *Hub) accept(w http.ResponseWriter, r *http.Request) (*websocket.Conn, error) {
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		InsecureSkipVerify: true,
		CompressionMode:    websocket.CompressionDisabled,
	})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(h.cfg.ReadLimit)
	return ws, nil
}
