// Package console is Hoist's web console: a single-page application embedded in the binary
// and served under /console on the API listener, behind the same access key pair as the API.
//
// The browser calls the real GameLift read operations (and the two writes of its buttons:
// TerminateGameSession, UpdateFleetCapacity) through one endpoint,
// POST /console/api/<Operation> (an awsJson1_1 body), which this package hands to the same
// operation table the API serves, so the console shows exactly what a CLI would. Live updates
// arrive over server-sent events (/console/events): a stream re-reads the queries its page
// subscribed to when something changed and sends only what differs. docs/console.md has the
// design, the routes and the update latency.
//
// The package has no store and no clock of its own: server/ wires it with the API handler,
// the key pair, a clock and the change announcements (Changes).
package console

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
)

// Path is where the console is mounted on the API listener.
const Path = "/console"

// Config is what a Console depends on.
type Config struct {
	// API answers GameLift operations in the awsJson1_1 protocol (POST / with X-Amz-Target)
	// without checking signatures: the console authenticates its own requests first. It must
	// dispatch through the same operation table as the API listener. Required.
	API http.Handler
	// Keys returns the secret access key of an access key ID, as the API's SigV4 check does.
	// Nil means the server verifies no signatures (--allow-any-credentials): the console
	// then asks for no login either.
	Keys func(id string) (secret string, ok bool)
	// Clock decides when session cookies expire; clock.Real{} when nil.
	Clock clock.Clock
	// SessionLifetime is how long a login lasts; DefaultSessionLifetime when zero.
	SessionLifetime time.Duration
	// Changes announces changes that may be visible in the console; streams also re-read
	// every Sweep. Nil: streams only sweep.
	Changes *Changes
	// Sweep is how often an open stream re-reads its queries without an announcement, for
	// changes no announcement reaches (writes on other nodes); DefaultSweep when zero. It
	// runs on the wall clock: it paces work and decides no outcome.
	Sweep time.Duration
	// Logger receives the operations that failed on the server's side; nil discards.
	Logger *slog.Logger
	// Extensions are the full X-Amz-Target values of Hoist operations outside GameLift's model
	// (e.g. "Hoist.ListServerProcesses") the console may call; API must serve them, and they
	// must only read.
	Extensions []string
}

// Defaults for Config.
const (
	DefaultSessionLifetime = 12 * time.Hour
	DefaultSweep           = 2 * time.Second
)

// Console is the console's http.Handler; it serves Path and everything below it.
type Console struct {
	cfg    Config
	assets http.Handler
	// closed is closed by Close: open event streams end.
	closed    chan struct{}
	closeOnce sync.Once
}

// New returns the console for cfg.
func New(cfg Config) *Console {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.SessionLifetime <= 0 {
		cfg.SessionLifetime = DefaultSessionLifetime
	}
	if cfg.Sweep <= 0 {
		cfg.Sweep = DefaultSweep
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Console{cfg: cfg, assets: newAssets(), closed: make(chan struct{})}
}

// Close ends the open event streams (an http.Server's Shutdown waits for them otherwise:
// register it with RegisterOnShutdown). Browsers reconnect to whichever server answers next.
func (c *Console) Close() {
	c.closeOnce.Do(func() { close(c.closed) })
}

// ServeHTTP routes a request under Path:
//
//	GET    /console, /console/          the application (index.html)
//	GET    /console/static/<file>       its scripts and styles
//	GET    /console/session             who is logged in (401 when nobody)
//	POST   /console/session             log in with the access key pair (JSON)
//	DELETE /console/session             log out
//	POST   /console/api/<Operation>     a GameLift read operation or a button's write, awsJson1_1 body
//	GET    /console/events?q=<queries>  server-sent events with the queries' answers
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sub := strings.TrimPrefix(r.URL.Path, Path)
	switch {
	case sub == "/session":
		c.serveSession(w, r)
	case strings.HasPrefix(sub, "/api/"):
		c.serveAPI(w, r, strings.TrimPrefix(sub, "/api/"))
	case sub == "/events":
		c.serveEvents(w, r)
	default:
		c.assets.ServeHTTP(w, r)
	}
}

// writeJSONError answers a console request with GameLift's JSON error form, so that the
// browser handles console and API errors alike.
func writeJSONError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(jsonError(code, msg))
}
