// Package gamelift is Hoist's GameLift domain: the business rules of every implemented
// control-plane operation, as handlers of the shape func(ctx, *api.XInput) (*api.XOutput, error).
//
// The package knows nothing of transports, codecs or SQL: inputs arrive decoded and already
// checked against the model's constraints by api.Validate; state lives in a store.Store as
// small JSON documents owned by this package; time comes from an injected clock.Clock. Errors
// a client should see are *api.Error values (errors as data); anything else is an internal
// failure the transport reports generically.
//
// Files follow the GameLift operation groups: locations.go (custom locations), builds.go,
// aliases.go, tags.go, with ids.go (IDs and ARNs) and paging.go (NextToken) shared by all.
// Importers: cmd/hoist wires a Service into the HTTP layer through Handlers; tests call the
// handlers directly.
package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// DefaultRegion is the home Region used when Config.Region is empty.
const DefaultRegion = "us-east-1"

// Config holds what a Service depends on.
type Config struct {
	// Store persists every resource. Required.
	Store store.Store
	// Clock stamps creation and update times; clock.Real{} when nil.
	Clock clock.Clock
	// Region is the home Region Hoist pretends to be (ARNs, ListLocations); DefaultRegion when
	// empty.
	Region string
	// AccountID goes into ARNs; it may be empty, giving "arn:aws:gamelift:<region>::..." as in
	// GameLift's documented formats.
	AccountID string
	// NewID returns the unique part of generated IDs (alias-<id>, build-<id>); a random UUID
	// when nil.
	NewID func() string
	// SDKEndpoint is the Server SDK websocket URL computes are given as
	// GameLiftServiceSdkEndpoint (e.g. wss://host:port); omitted from Compute when empty.
	SDKEndpoint string
	// AgentEndpoint is the agent websocket URL computes are given as GameLiftAgentEndpoint;
	// omitted from Compute when empty.
	AgentEndpoint string
	// ComputeAuthTokenLifetime is how long a GetComputeAuthToken token stays valid;
	// DefaultComputeAuthTokenLifetime when zero.
	ComputeAuthTokenLifetime time.Duration
	// HealthCheckInterval is the server process health period; a process without a healthy
	// report for three periods is terminated. DefaultHealthCheckInterval when zero.
	HealthCheckInterval time.Duration
	// ProcessReadyTimeout is how long a connected process may take to call ProcessReady;
	// DefaultProcessReadyTimeout when zero.
	ProcessReadyTimeout time.Duration
	// TerminationGracePeriod is how long a process told to terminate has to end before it is
	// marked terminated; DefaultTerminationGracePeriod when zero.
	TerminationGracePeriod time.Duration
	// GameSessionActivationTimeout is how long a game session may stay ACTIVATING when the
	// fleet's runtime configuration sets no GameSessionActivationTimeoutSeconds;
	// DefaultGameSessionActivationTimeout when zero.
	GameSessionActivationTimeout time.Duration
	// PlayerReservationTimeout is how long a RESERVED player session waits for
	// AcceptPlayerSession; DefaultPlayerReservationTimeout when zero.
	PlayerReservationTimeout time.Duration
	// SessionRetention is how long ended game sessions and their player sessions are kept;
	// DefaultSessionRetention when zero.
	SessionRetention time.Duration
	// NodeID is the ID of the server node this Service runs on, when several share the store:
	// local instances are owned by nodes (instances_owner.go). Empty: a cluster of one.
	NodeID string
	// Host is the capacity of the host that runs local instances, from which
	// DescribeEC2InstanceLimits derives each type's limit; unknown (zero) gives
	// DefaultInstanceLimit for every type.
	Host HostCapacity
	// Logger receives, at debug level, the actions the domain takes (fleet events, placements
	// and tickets ending, matches, timeouts), each once its transaction commits. Nil discards.
	Logger *slog.Logger
	// OnCommit, when set, is called after every write transaction of this Service commits
	// (the web console re-reads what it shows). It runs on the writer's goroutine and must
	// not block.
	OnCommit func()
	// InstanceAddress, when set, is the address of the n-th local instance slot (from 0), for
	// hosts that give each instance its own network namespace; else instances get loopback
	// addresses, 127.0.0.2 onwards. It answers "" when the slots are used up.
	InstanceAddress func(n int) string
}

// Service implements the GameLift operations over a store.
type Service struct {
	store   store.Store
	clock   clock.Clock
	region  string
	account string
	newID   func() string
	node    string
	log     *slog.Logger
	// onCommit is Config.OnCommit; nil for none.
	onCommit func()
	// instanceAddress is Config.InstanceAddress, or loopbackAddress.
	instanceAddress func(n int) string
	hosting         hosting
	host            HostCapacity
	// sessions holds the game and player session settings (gamesessions.go).
	sessions *sessionSettings
	// ruleSets caches parsed FlexMatch rule sets (matchmaking_rulesets.go).
	ruleSets *ruleSetCache
	// unavailableAt (Unix milliseconds) is when a read or write of this node last failed
	// with store.ErrUnavailable: health reports sent until then may not have been recorded
	// (ProcessMonitor).
	unavailableAt atomic.Int64
}

// New returns a Service for cfg, filling in the documented defaults.
func New(cfg Config) *Service {
	s := &Service{store: cfg.Store, clock: cfg.Clock, region: cfg.Region, account: cfg.AccountID, newID: cfg.NewID, node: cfg.NodeID,
		host: cfg.Host, onCommit: cfg.OnCommit, instanceAddress: cfg.InstanceAddress}
	if s.instanceAddress == nil {
		s.instanceAddress = loopbackAddress
	}
	if s.clock == nil {
		s.clock = clock.Real{}
	}
	if s.region == "" {
		s.region = DefaultRegion
	}
	if s.newID == nil {
		s.newID = uuid.NewString
	}
	if s.log = cfg.Logger; s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.hosting = newHosting(cfg)
	s.sessions = newSessionSettings(cfg)
	s.ruleSets = newRuleSetCache()
	return s
}

// Handlers returns a fresh api.Handlers with every operation this package implements set;
// the others stay nil and answer NotImplementedException.
func (s *Service) Handlers() *api.Handlers {
	h := &api.Handlers{}
	s.locationHandlers(h)
	s.buildHandlers(h)
	s.aliasHandlers(h)
	s.tagHandlers(h)
	s.fleetIQHandlers(h)
	s.fleetHandlers(h)
	s.sessionHandlers(h)
	s.managedHandlers(h)
	s.scalingHandlers(h)
	s.queueHandlers(h)
	s.placementHandlers(h)
	s.ruleSetHandlers(h)
	s.matchConfigHandlers(h)
	s.ticketHandlers(h)
	return h
}

// Record kinds in the store.
const (
	kindAlias    = "alias"
	kindBuild    = "build"
	kindLocation = "location"
)

// getDoc reads the record kind/id and decodes its JSON document into v. A missing record
// becomes the *api.Error notFound returns.
func getDoc(tx store.Tx, kind, id string, v any, notFound func() error) (*store.Record, error) {
	rec, err := tx.Get(kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(rec.Data, v); err != nil {
		return nil, err
	}
	return rec, nil
}

// putDoc encodes v into rec and writes it back with compare-and-set.
func putDoc(tx store.Tx, rec *store.Record, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	rec.Data = data
	return tx.Put(rec)
}

// insertDoc adds a new record holding v.
func insertDoc(tx store.Tx, kind, id string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Insert(&store.Record{Kind: kind, ID: id, Data: data})
}

// view runs fn in a read-only transaction.
func (s *Service) view(ctx context.Context, fn func(store.Tx) error) error {
	return s.noteUnavailable(s.store.View(ctx, fn))
}

// noteUnavailable records when the store was last unavailable, and returns err.
func (s *Service) noteUnavailable(err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		s.unavailableAt.Store(s.nowMillis())
	}
	return err
}

// read decodes the one record of kind and id into v, outside a transaction (the cheapest read
// the store has), or returns notFound().
func (s *Service) read(ctx context.Context, kind, id string, v any, notFound func() error) error {
	rec, err := s.store.Get(ctx, kind, id)
	if errors.Is(err, store.ErrNotFound) {
		return notFound()
	}
	s.noteUnavailable(err)
	if err != nil {
		return err
	}
	return json.Unmarshal(rec.Data, v)
}

// update runs fn in a read-write transaction (retried by the store on conflicts). The
// actions fn records (logAction) are logged once the transaction has committed.
func (s *Service) update(ctx context.Context, fn func(store.Tx) error) error {
	var acts []action
	err := s.store.Update(ctx, func(tx store.Tx) error {
		acts = acts[:0] // a retried transaction starts over
		return fn(&actionTx{Tx: tx, actions: &acts})
	})
	if err == nil {
		for _, a := range acts {
			s.log.LogAttrs(ctx, slog.LevelDebug, a.msg, a.attrs...)
		}
		if s.onCommit != nil {
			s.onCommit()
		}
	}
	return s.noteUnavailable(err)
}

// actionTx is the transaction update gives fn: it collects the actions to log at commit.
type actionTx struct {
	store.Tx
	actions *[]action
}

// action is one log line of an action the domain took.
type action struct {
	msg   string
	attrs []slog.Attr
}

// logAction records, in tx, an action to log at debug level once tx commits (nothing when
// debug logging is off, or tx did not come from update).
func (s *Service) logAction(tx store.Tx, msg string, attrs ...slog.Attr) {
	if at, ok := tx.(*actionTx); ok && s.log.Enabled(context.Background(), slog.LevelDebug) {
		*at.actions = append(*at.actions, action{msg, attrs})
	}
}

// nowMillis is the clock's time in Unix milliseconds, the precision GameLift reports.
func (s *Service) nowMillis() int64 { return s.clock.Now().UnixMilli() }
