package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/sessionquery"
	"github.com/hoist-gg/hoist/store"
)

// Game sessions (gamesessions*.go) and player sessions (playersessions*.go).
//
// A game session lives on one server process for its whole life:
//
//	CreateGameSession ──▶ ACTIVATING ──ActivateGameSession──▶ ACTIVE ────────────────┐
//	 (CreateGameSession      │ activation timeout                │ TerminateGameSession│
//	  pushed to a free       │                                   ▼ (TRIGGER_ON_...)   │ process
//	  ACTIVE process)        │                              TERMINATING               │ ends or
//	                         ▼                                   │ process ends       │ FORCE_
//	                     TERMINATED ◀────────────────────────────┴────────────────────┘ TERMINATE
//
// Player sessions: RESERVED ──AcceptPlayerSession──▶ ACTIVE ──RemovePlayerSession──▶ COMPLETED,
// RESERVED ──60 s──▶ TIMEDOUT, and RESERVED or ACTIVE ──game session ends──▶ COMPLETED.
//
// Records (all JSON documents):
//
//   - gamesession: ID = "<fleet>/<ID string>" (the ID string is unique per fleet: it is the
//     idempotency token), Parent = the fleet.
//   - processslot: ID = the process key, Parent = "<fleet>/<location>": an ACTIVE process with
//     no game session, which CreateGameSession may take.
//   - processsession: ID = the process key: the game session a process hosts.
//   - gsactivation: ID = the game session key, Parent = "<fleet>/<compute>": a session still
//     ACTIVATING, with its deadline (activation timeout, MaxConcurrentGameSessionActivations).
//   - gsended: ID = the game session key: a session that ended, for the purge.
//   - gscreator: ID = the game session key, Parent = "<fleet>/<creator>": CreatorId quotas.
//   - playersession: ID = psess-<uuid>, Parent = the game session key.
//   - psreservation: ID = the player session ID: a RESERVED player session and its deadline.
//   - playerindex: ID = the player session ID, Parent = "p/<player ID>".
const (
	kindGameSession    = "gamesession"
	kindProcessSlot    = "processslot"
	kindProcessSession = "processsession"
	kindActivation     = "gsactivation"
	kindSessionEnded   = "gsended"
	kindCreatorLog     = "gscreator"
	kindPlayerSession  = "playersession"
	kindReservation    = "psreservation"
	kindPlayerIndex    = "playerindex"
)

// Defaults of the session settings in Config.
const (
	// DefaultGameSessionActivationTimeout applies when a fleet's runtime configuration sets no
	// GameSessionActivationTimeoutSeconds. GameLift documents no default, only the range 1-600
	// s; Hoist takes the maximum, so a session is never cut off earlier than GameLift could.
	DefaultGameSessionActivationTimeout = 600 * time.Second
	// DefaultPlayerReservationTimeout is how long a RESERVED player session waits for
	// AcceptPlayerSession before it is TIMEDOUT (60 s, PlayerSession.Status in the model).
	DefaultPlayerReservationTimeout = 60 * time.Second
	// DefaultSessionRetention is how long ended game sessions and their player sessions are
	// kept (30 days, as GameLift documents); their idempotency tokens are reserved as long.
	DefaultSessionRetention = 30 * 24 * time.Hour
)

// maxPlayersPerSession is GameLift's fixed maximum of players in one game session.
const maxPlayersPerSession = 200

// maxGameProperties is the most game properties a session holds (GamePropertyList).
const maxGameProperties = 16

// Game session statuses, as stored and on the wire.
const (
	gsActivating  = string(api.GameSessionStatusActivating)
	gsActive      = string(api.GameSessionStatusActive)
	gsTerminating = string(api.GameSessionStatusTerminating)
	gsTerminated  = string(api.GameSessionStatusTerminated)
)

// arnGameSession is the ARN resource type of game sessions.
const arnGameSession = "gamesession"

// sessionSettings holds the session settings of a Service and its per-node caches.
type sessionSettings struct {
	activationTimeout  time.Duration
	reservationTimeout time.Duration
	retention          time.Duration
	cache              *sessionCache
	// orderedIDs: the Service makes its own IDs (Config.NewID unset), so game and player
	// session IDs may be time-ordered (sessionID).
	orderedIDs bool
}

func newSessionSettings(cfg Config) *sessionSettings {
	or := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	return &sessionSettings{
		activationTimeout:  or(cfg.GameSessionActivationTimeout, DefaultGameSessionActivationTimeout),
		reservationTimeout: or(cfg.PlayerReservationTimeout, DefaultPlayerReservationTimeout),
		retention:          or(cfg.SessionRetention, DefaultSessionRetention),
		cache:              &sessionCache{fleets: map[string]*fleetIndex{}},
		orderedIDs:         cfg.NewID == nil,
	}
}

// sessionID returns a new UUID for a game or player session ID. Unless the Service was given
// its own ID generator (tests), it is a version 7 UUID: random, but ordered by creation time,
// so the records of new sessions, keyed by these IDs, land at the end of their kind's B-tree
// in the embedded store instead of one random page each, and a group commit of many
// sessions writes a few pages to the WAL instead of one per record.
func (s *Service) sessionID() string {
	if s.sessions.orderedIDs {
		if id, err := uuid.NewV7(); err == nil {
			return id.String()
		}
	}
	return s.newID()
}

// gameProperty is one game property, in the order the caller gave them.
type gameProperty struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// gameSessionDoc is a game session as stored. Times are Unix milliseconds.
type gameSessionDoc struct {
	Key        string         `json:"key"` // "<fleet>/<ID string>"
	ARN        string         `json:"arn"`
	FleetID    string         `json:"fleetId"`
	Location   string         `json:"location"`
	Name       string         `json:"name,omitempty"`
	Creator    string         `json:"creator,omitempty"`
	Status     string         `json:"status"`
	Reason     string         `json:"reason,omitempty"`
	Max        int32          `json:"max"`
	Players    int32          `json:"players"` // RESERVED + ACTIVE player sessions
	Props      []gameProperty `json:"props,omitempty"`
	Data       string         `json:"data,omitempty"`
	Policy     string         `json:"policy"`
	Protection string         `json:"protection"`
	Compute    string         `json:"compute"`
	ProcessID  string         `json:"processId"`
	IP         string         `json:"ip,omitempty"`
	DNS        string         `json:"dns,omitempty"`
	Port       int            `json:"port,omitempty"`
	Created    int64          `json:"created"`
	Activated  int64          `json:"activated,omitempty"`
	Ended      int64          `json:"ended,omitempty"`
	Request    string         `json:"request"` // filterHash of the creating request
	// Matchmaker is the MatchmakerData of a session a match started; Placement the ID of
	// the placement that started it (placement.go).
	Matchmaker string `json:"matchmakerData,omitempty"`
	Placement  string `json:"placement,omitempty"`
}

func (d *gameSessionDoc) processKey() string { return processKey(d.FleetID, d.ProcessID) }

func (d *gameSessionDoc) live() bool { return d.Status == gsActivating || d.Status == gsActive }

// GameSessionStart is what the CreateGameSession push carries to the process that is to host
// a new game session.
type GameSessionStart struct {
	GameSessionID             string
	Name                      string
	GameSessionData           string
	MatchmakerData            string
	IPAddress                 string
	DNSName                   string
	Port                      int
	MaximumPlayerSessionCount int
	GameProperties            map[string]string
}

func (d *gameSessionDoc) start() GameSessionStart {
	props := make(map[string]string, len(d.Props))
	for _, p := range d.Props {
		props[p.Key] = p.Value
	}
	return GameSessionStart{GameSessionID: d.ARN, Name: d.Name, GameSessionData: d.Data, MatchmakerData: d.Matchmaker,
		IPAddress: d.IP, DNSName: d.DNS, Port: d.Port, MaximumPlayerSessionCount: int(d.Max), GameProperties: props}
}

func (s *Service) sessionHandlers(h *api.Handlers) {
	h.CreateGameSession = s.CreateGameSession
	h.DescribeGameSessions = s.DescribeGameSessions
	h.DescribeGameSessionDetails = s.DescribeGameSessionDetails
	h.SearchGameSessions = s.SearchGameSessions
	h.UpdateGameSession = s.UpdateGameSession
	h.TerminateGameSession = s.TerminateGameSession
	h.GetGameSessionLogUrl = s.GetGameSessionLogUrl
	h.CreatePlayerSession = s.CreatePlayerSession
	h.CreatePlayerSessions = s.CreatePlayerSessions
	h.DescribePlayerSessions = s.DescribePlayerSessions
	h.DescribeFleetUtilization = s.describeUtilization
}

// gameSessionARN returns arn:aws:gamelift:<region>::gamesession/<fleet>[/<location>]/<id>:
// the account is always empty, and the location segment appears for sessions outside the
// home Region (wire-protocol.md §11).
func (s *Service) gameSessionARN(fleetID, location, idString string) string {
	path := fleetID + "/"
	if location != s.region {
		path += location + "/"
	}
	return "arn:aws:gamelift:" + s.region + "::" + arnGameSession + "/" + path + idString
}

func gameSessionNotFound(id string) func() error {
	return func() error { return api.Errorf(api.NotFoundException, "Game session %s not found.", id) }
}

// gameSessionKey turns a game session ID (its ARN) into its store key, or answers
// NotFoundException for anything that is not the ARN of a game session in this Region.
func (s *Service) gameSessionKey(arn string) (string, error) {
	a, ok := parseARN(arn)
	if !ok || a.ResourceType != arnGameSession || a.Region != s.region {
		return "", gameSessionNotFound(arn)()
	}
	parts := strings.Split(a.ID, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[len(parts)-1] == "" {
		return "", gameSessionNotFound(arn)()
	}
	return parts[0] + "/" + parts[len(parts)-1], nil
}

// getSession reads a game session by ID (ARN) in tx.
func (s *Service) getSession(tx store.Tx, arn string) (*store.Record, *gameSessionDoc, error) {
	key, err := s.gameSessionKey(arn)
	if err != nil {
		return nil, nil, err
	}
	var d gameSessionDoc
	rec, err := getDoc(tx, kindGameSession, key, &d, gameSessionNotFound(arn))
	if err != nil {
		return nil, nil, err
	}
	return rec, &d, nil
}

// readSession reads a game session by ID (ARN) outside a transaction.
func (s *Service) readSession(ctx context.Context, arn string) (*gameSessionDoc, error) {
	key, err := s.gameSessionKey(arn)
	if err != nil {
		return nil, err
	}
	var d gameSessionDoc
	if err := s.read(ctx, kindGameSession, key, &d, gameSessionNotFound(arn)); err != nil {
		return nil, err
	}
	return &d, nil
}

// apiGameSession returns the GameSession of a stored session.
func (s *Service) apiGameSession(d *gameSessionDoc) api.GameSession {
	status := api.GameSessionStatus(d.Status)
	policy := api.PlayerSessionCreationPolicy(d.Policy)
	gs := api.GameSession{
		GameSessionId: api.String(d.ARN), Name: optional(d.Name), FleetId: api.String(d.FleetID),
		FleetArn: api.String(s.arn(arnFleet, d.FleetID)), CreationTime: stamp(d.Created),
		CurrentPlayerSessionCount: api.Int32(d.Players), MaximumPlayerSessionCount: api.Int32(d.Max),
		Status: &status, StatusReason: (*api.GameSessionStatusReason)(optional(d.Reason)),
		IpAddress: optional(d.IP), DnsName: optional(d.DNS), PlayerSessionCreationPolicy: &policy,
		CreatorId: optional(d.Creator), GameSessionData: optional(d.Data), Location: api.String(d.Location),
		ComputeName: optional(d.Compute), GameProperties: []api.GameProperty{}, MatchmakerData: optional(d.Matchmaker),
	}
	if d.Port != 0 {
		gs.Port = api.Int32(int32(d.Port))
	}
	if d.Ended != 0 {
		gs.TerminationTime = stamp(d.Ended)
	}
	for _, p := range d.Props {
		gs.GameProperties = append(gs.GameProperties, api.GameProperty{Key: api.String(p.Key), Value: api.String(p.Value)})
	}
	return gs
}

// sessionCache is a per-node cache of the decoded game sessions of each fleet, checked
// against the store's record versions on every use, so that scans over many sessions
// (search, utilization) decode only what changed since the last scan. It is a cache, not a
// source of truth: every entry is validated against the Seq and Version the store reports,
// so several nodes sharing one store each see every change.
type sessionCache struct {
	mu     sync.Mutex
	fleets map[string]*fleetIndex
}

// fleetIndex is one fleet's game sessions as of one scan, in creation (Seq) order. It is
// immutable once published: readers share it without locking.
type fleetIndex struct {
	entries []indexEntry
	active  []cachedView // the ACTIVE sessions of entries, in the same order
}

// indexEntry is one decoded game session record.
type indexEntry struct {
	seq, version int64
	cachedView
}

// cachedView is a decoded game session with its search view. The document is shared:
// callers must not modify it.
type cachedView struct {
	doc  *gameSessionDoc
	view *sessionquery.Session
}

// versionRef is a record's identity and version as the store reports it.
type versionRef struct {
	id           string
	seq, version int64
}

// versionLister is implemented by stores that can report the versions of records without
// copying them (store/sqlite's EachVersion). Other stores are scanned with List.
type versionLister interface {
	EachVersion(ctx context.Context, kind string, opt store.ListOptions, fn func(id string, seq, version int64)) error
}

func (c *sessionCache) get(fleetID string) *fleetIndex {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.fleets[fleetID]
}

func (c *sessionCache) put(fleetID string, idx *fleetIndex) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fleets[fleetID] = idx
}

// fleetSessions returns every game session of a fleet, in creation order, as the store holds
// them now. With a store that reports versions, an unchanged fleet costs one pass over the
// versions and no copy; otherwise the fleet's records are listed. Either way only records
// whose version the cache does not hold are decoded.
func (s *Service) fleetSessions(ctx context.Context, fleetID string) (*fleetIndex, error) {
	old := s.sessions.cache.get(fleetID)
	vl, ok := s.store.(versionLister)
	if !ok {
		return s.listFleetSessions(ctx, fleetID, old)
	}
	refs, same, err := changedVersions(ctx, vl, fleetID, old)
	if err != nil || same {
		return old, err
	}
	idx, err := old.refresh(refs, func(id string) (*store.Record, error) { return s.store.Get(ctx, kindGameSession, id) })
	if err != nil {
		return nil, err
	}
	s.sessions.cache.put(fleetID, idx)
	return idx, nil
}

// changedVersions walks the versions of a fleet's sessions. same reports that they match
// old exactly; otherwise refs holds them all.
func changedVersions(ctx context.Context, vl versionLister, fleetID string, old *fleetIndex) (refs []versionRef, same bool, err error) {
	var have []indexEntry
	if old != nil {
		have = old.entries
	}
	i, diverged := 0, old == nil
	err = vl.EachVersion(ctx, kindGameSession, store.ListOptions{Parent: fleetID}, func(id string, seq, version int64) {
		if !diverged {
			if i < len(have) && have[i].seq == seq && have[i].version == version {
				i++
				return
			}
			diverged = true
			refs = make([]versionRef, i, len(have)+16)
			for j, e := range have[:i] {
				refs[j] = versionRef{id: e.doc.Key, seq: e.seq, version: e.version}
			}
		}
		refs = append(refs, versionRef{id: id, seq: seq, version: version})
	})
	if err != nil {
		return nil, false, err
	}
	if !diverged && i == len(have) {
		return nil, old != nil, nil
	}
	if !diverged { // records were removed at the end
		refs = make([]versionRef, i)
		for j, e := range have[:i] {
			refs[j] = versionRef{id: e.doc.Key, seq: e.seq, version: e.version}
		}
	}
	return refs, false, nil
}

// listFleetSessions is fleetSessions for stores without versionLister: it lists the records.
func (s *Service) listFleetSessions(ctx context.Context, fleetID string, old *fleetIndex) (*fleetIndex, error) {
	var recs []*store.Record
	err := s.view(ctx, func(tx store.Tx) error {
		var err error
		recs, err = tx.List(kindGameSession, store.ListOptions{Parent: fleetID})
		return err
	})
	if err != nil {
		return nil, err
	}
	refs := make([]versionRef, len(recs))
	byID := make(map[string]*store.Record, len(recs))
	for i, r := range recs {
		refs[i], byID[r.ID] = versionRef{id: r.ID, seq: r.Seq, version: r.Version}, r
	}
	idx, err := old.refresh(refs, func(id string) (*store.Record, error) { return byID[id], nil })
	if err != nil {
		return nil, err
	}
	s.sessions.cache.put(fleetID, idx)
	return idx, nil
}

// refresh builds the index of refs (in Seq order), reusing old's decoded sessions whose Seq
// and Version match and reading the others with load. A record load finds gone (ErrNotFound
// or nil) is left out; one load finds at a newer version is taken at that version.
func (old *fleetIndex) refresh(refs []versionRef, load func(id string) (*store.Record, error)) (*fleetIndex, error) {
	var have []indexEntry
	if old != nil {
		have = old.entries
	}
	idx := &fleetIndex{entries: make([]indexEntry, 0, len(refs))}
	j := 0
	for _, ref := range refs {
		for j < len(have) && have[j].seq < ref.seq {
			j++
		}
		if j < len(have) && have[j].seq == ref.seq && have[j].version == ref.version {
			idx.entries = append(idx.entries, have[j])
			continue
		}
		r, err := load(ref.id)
		if errors.Is(err, store.ErrNotFound) || (err == nil && r == nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		d := new(gameSessionDoc)
		if err := json.Unmarshal(r.Data, d); err != nil {
			return nil, err
		}
		idx.entries = append(idx.entries, indexEntry{seq: r.Seq, version: r.Version, cachedView: cachedView{d, searchView(d)}})
	}
	for _, e := range idx.entries {
		if e.doc.Status == gsActive {
			idx.active = append(idx.active, e.cachedView)
		}
	}
	return idx, nil
}

// searchView is what SearchGameSessions' expressions see of a game session. Property keys
// containing a dot are not searchable (GameProperty doc).
func searchView(d *gameSessionDoc) *sessionquery.Session {
	props := make(map[string]string, len(d.Props))
	for _, p := range d.Props {
		if !strings.Contains(p.Key, ".") {
			props[p.Key] = p.Value
		}
	}
	return &sessionquery.Session{Name: d.Name, ID: d.ARN, Properties: props, MaximumSessions: int(d.Max),
		PlayerSessionCount: int(d.Players), CreationTimeMillis: d.Created,
		HasAvailablePlayerSessions: d.Players < d.Max && d.Policy == string(api.PlayerSessionCreationPolicyAcceptAll)}
}

// unmarshal decodes a JSON document.
func unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// secondsDuration converts whole seconds to a Duration.
func secondsDuration(sec int32) time.Duration { return time.Duration(sec) * time.Second }

// msDuration converts milliseconds to a Duration.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
