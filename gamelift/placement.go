package gamelift

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strconv"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Game session placements (placement*.go): StartGameSessionPlacement asks a queue for a new
// game session; the placer finds the best (fleet, location) among the queue's destinations
// and creates an ordinary game session there.
//
//	StartGameSessionPlacement ──▶ PENDING ──game session ACTIVE──▶ FULFILLED
//	                                 │ StopGameSessionPlacement (no game session yet) ──▶ CANCELLED
//	                                 │ queue timeout ──▶ TIMED_OUT
//	                                 │ its game session ends before it is ACTIVE ──▶ FAILED
//
// A PENDING placement is tried at once and then on every step of the PlacementLoop until it
// has a game session; the FULFILLED transition happens in the transaction that activates the
// session, together with the desired player sessions and the PlacementFulfilled event.
//
// Records:
//   - placement: ID = the PlacementId (never reusable), Parent = the queue name.
//   - placementwait: ID = the PlacementId, for a PENDING placement: its deadline; the
//     placer's work list.
const (
	kindPlacement     = "placement"
	kindPlacementWait = "placementwait"
)

// Placement statuses, as stored and on the wire.
const (
	placementPending   = string(api.GameSessionPlacementStatePending)
	placementFulfilled = string(api.GameSessionPlacementStateFulfilled)
	placementCancelled = string(api.GameSessionPlacementStateCancelled)
	placementTimedOut  = string(api.GameSessionPlacementStateTimedOut)
	placementFailed    = string(api.GameSessionPlacementStateFailed)
)

// placementDoc is a game session placement as stored. Times are Unix milliseconds.
type placementDoc struct {
	ID        string            `json:"id"`
	Queue     string            `json:"queue"`
	QueueARN  string            `json:"queueArn"`
	Status    string            `json:"status"`
	Max       int32             `json:"max"`
	Name      string            `json:"name,omitempty"`
	Props     []gameProperty    `json:"props,omitempty"`
	Data      string            `json:"data,omitempty"`
	Latencies []playerLatency   `json:"latencies,omitempty"`
	Desired   []desiredPlayer   `json:"desired,omitempty"`
	Override  *locationOverride `json:"override,omitempty"`
	Matchmake string            `json:"matchmakerData,omitempty"`
	Start     int64             `json:"start"`
	End       int64             `json:"end,omitempty"`
	Deadline  int64             `json:"deadline"`
	// Passes counts the attempts that found no capacity (PlacementFallbackStrategy).
	Passes int `json:"passes,omitempty"`
	// The game session of the current attempt.
	SessionKey string          `json:"sessionKey,omitempty"`
	SessionARN string          `json:"sessionArn,omitempty"`
	Location   string          `json:"location,omitempty"`
	IP         string          `json:"ip,omitempty"`
	DNS        string          `json:"dns,omitempty"`
	Port       int             `json:"port,omitempty"`
	Placed     []placedSession `json:"placed,omitempty"`
	Request    string          `json:"request"` // filterHash of the starting request
	// Match is the ID of the FlexMatch match this placement places (matchmaking_match.go).
	Match string `json:"match,omitempty"`
}

type playerLatency struct {
	Player string  `json:"p"`
	Region string  `json:"r"`
	Millis float32 `json:"ms"`
}

type desiredPlayer struct {
	Player string `json:"p"`
	Data   string `json:"d,omitempty"`
}

type placedSession struct {
	Player  string `json:"p"`
	Session string `json:"s"`
}

// locationOverride is a PriorityConfigurationOverride.
type locationOverride struct {
	Locations []string `json:"locations"`
	Fallback  string   `json:"fallback"`
}

func (s *Service) placementHandlers(h *api.Handlers) {
	h.StartGameSessionPlacement = s.StartGameSessionPlacement
	h.DescribeGameSessionPlacement = s.DescribeGameSessionPlacement
	h.StopGameSessionPlacement = s.StopGameSessionPlacement
}

func placementNotFound(id string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Game session placement %s not found.", id)
	}
}

// StartGameSessionPlacement records a PENDING placement on a queue and tries to place it at
// once. A PlacementId is never reusable: a repeat of the same request answers the placement
// as it is now (so an SDK's retry is safe); any other request with that ID is
// InvalidRequestException.
func (s *Service) StartGameSessionPlacement(ctx context.Context, in *api.StartGameSessionPlacementInput) (*api.StartGameSessionPlacementOutput, error) {
	req, err := newPlacement(in)
	if err != nil {
		return nil, err
	}
	var p *placementDoc
	err = s.update(ctx, func(tx store.Tx) error {
		var err error
		attempt := *req // the store may run this again: each run starts from the request
		p, err = s.startPlacementTx(tx, &attempt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.StartGameSessionPlacementOutput{GameSessionPlacement: s.apiPlacement(p)}, nil
}

// newPlacement checks what the model cannot and builds the placement document.
func newPlacement(in *api.StartGameSessionPlacementInput) (*placementDoc, error) {
	max := api.Deref(in.MaximumPlayerSessionCount)
	switch {
	case max > maxPlayersPerSession:
		return nil, api.Errorf(api.InvalidRequestException,
			"MaximumPlayerSessionCount %d is over the limit of %d players per game session.", max, maxPlayersPerSession)
	case len(in.DesiredPlayerSessions) > int(max):
		return nil, api.Errorf(api.InvalidRequestException,
			"%d DesiredPlayerSessions do not fit in a game session of %d players.", len(in.DesiredPlayerSessions), max)
	case len(in.PlayerLatencies) > 0 && in.PriorityConfigurationOverride != nil:
		return nil, api.Errorf(api.InvalidRequestException,
			"PlayerLatencies and PriorityConfigurationOverride cannot be used together.")
	}
	props, err := mergeProperties(nil, in.GameProperties)
	if err != nil {
		return nil, err
	}
	p := &placementDoc{ID: api.Deref(in.PlacementId), Queue: api.Deref(in.GameSessionQueueName), Status: placementPending,
		Max: max, Name: api.Deref(in.GameSessionName), Props: props, Data: api.Deref(in.GameSessionData)}
	if err := p.addPlayers(in); err != nil {
		return nil, err
	}
	p.Request = p.hash()
	return p, nil
}

// addPlayers copies the request's latencies, desired players and override.
func (p *placementDoc) addPlayers(in *api.StartGameSessionPlacementInput) error {
	seen := map[string]bool{}
	for _, d := range in.DesiredPlayerSessions {
		id := api.Deref(d.PlayerId)
		if id == "" || seen[id] {
			return api.Errorf(api.InvalidRequestException, "Each DesiredPlayerSession needs a PlayerId, and each player may appear once.")
		}
		seen[id] = true
		p.Desired = append(p.Desired, desiredPlayer{Player: id, Data: api.Deref(d.PlayerData)})
	}
	for _, l := range in.PlayerLatencies {
		if api.Deref(l.PlayerId) == "" || api.Deref(l.RegionIdentifier) == "" || l.LatencyInMilliseconds == nil || *l.LatencyInMilliseconds < 0 {
			return api.Errorf(api.InvalidRequestException, "Each PlayerLatency needs a PlayerId, a RegionIdentifier and a LatencyInMilliseconds of 0 or more.")
		}
		p.Latencies = append(p.Latencies, playerLatency{Player: *l.PlayerId, Region: *l.RegionIdentifier, Millis: *l.LatencyInMilliseconds})
	}
	if o := in.PriorityConfigurationOverride; o != nil {
		fb := string(api.Deref(o.PlacementFallbackStrategy))
		if fb == "" {
			fb = string(api.PlacementFallbackStrategyDefaultAfterSinglePass)
		}
		p.Override = &locationOverride{Locations: o.LocationOrder, Fallback: fb}
	}
	return nil
}

// hash is the filterHash of everything the request asked for.
func (p *placementDoc) hash() string {
	parts := []string{p.Queue, strconv.Itoa(int(p.Max)), p.Name, p.Data}
	for _, g := range p.Props {
		parts = append(parts, "p", g.Key, g.Value)
	}
	for _, l := range p.Latencies {
		parts = append(parts, "l", l.Player, l.Region, strconv.FormatFloat(float64(l.Millis), 'g', -1, 32))
	}
	for _, d := range p.Desired {
		parts = append(parts, "d", d.Player, d.Data)
	}
	if p.Override != nil {
		parts = append(append(parts, "o", p.Override.Fallback), p.Override.Locations...)
	}
	return filterHash("StartGameSessionPlacement", parts...)
}

// startPlacementTx is StartGameSessionPlacement's transaction: it answers a repeat, or checks
// the queue, inserts the placement and its work item, and tries to place it.
func (s *Service) startPlacementTx(tx store.Tx, p *placementDoc) (*placementDoc, error) {
	var old placementDoc
	_, err := getDoc(tx, kindPlacement, p.ID, &old, func() error { return store.ErrNotFound })
	switch {
	case err == nil && old.Request == p.Request:
		return &old, nil
	case err == nil:
		return nil, api.Errorf(api.InvalidRequestException,
			"PlacementId %s has already been used; a placement ID cannot be reused.", p.ID)
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	_, q, err := s.readQueueTx(tx, p.Queue)
	if err != nil {
		return nil, err
	}
	if p.Override != nil && (len(q.PriorityOrder) == 0 || q.PriorityOrder[0] != string(api.PriorityTypeLocation)) {
		return nil, api.Errorf(api.InvalidRequestException,
			"PriorityConfigurationOverride needs queue %s to put LOCATION first in its PriorityOrder.", q.Name)
	}
	now := s.nowMillis()
	p.Queue, p.QueueARN, p.Start = q.Name, q.ARN, now
	p.Deadline = now + int64(q.Timeout)*1000
	if _, err := s.placeTx(tx, p, q, now); err != nil {
		return nil, err
	}
	if err := insertChild(tx, kindPlacement, p.ID, q.Name, p); err != nil {
		return nil, err
	}
	return p, insertDoc(tx, kindPlacementWait, p.ID, &deadlineDoc{At: p.Deadline})
}

// DescribeGameSessionPlacement answers a placement's current state.
func (s *Service) DescribeGameSessionPlacement(ctx context.Context, in *api.DescribeGameSessionPlacementInput) (*api.DescribeGameSessionPlacementOutput, error) {
	id := api.Deref(in.PlacementId)
	var p placementDoc
	if err := s.read(ctx, kindPlacement, id, &p, placementNotFound(id)); err != nil {
		return nil, err
	}
	return &api.DescribeGameSessionPlacementOutput{GameSessionPlacement: s.apiPlacement(&p)}, nil
}

// StopGameSessionPlacement cancels a PENDING placement that has no game session yet. Once a
// game session exists for it, or the placement has ended, the answer is
// InvalidRequestException.
func (s *Service) StopGameSessionPlacement(ctx context.Context, in *api.StopGameSessionPlacementInput) (*api.StopGameSessionPlacementOutput, error) {
	id := api.Deref(in.PlacementId)
	var p placementDoc
	err := s.update(ctx, func(tx store.Tx) error {
		rec, err := getDoc(tx, kindPlacement, id, &p, placementNotFound(id))
		if err != nil {
			return err
		}
		switch {
		case p.Status != placementPending:
			return api.Errorf(api.InvalidRequestException, "Game session placement %s is %s and cannot be stopped.", id, p.Status)
		case p.SessionKey != "":
			return api.Errorf(api.InvalidRequestException,
				"Game session placement %s already has a game session (%s) and cannot be stopped.", id, p.SessionARN)
		}
		return s.endPlacement(tx, rec, &p, placementCancelled)
	})
	if err != nil {
		return nil, err
	}
	return &api.StopGameSessionPlacementOutput{GameSessionPlacement: s.apiPlacement(&p)}, nil
}

// endPlacement moves a PENDING placement to a final status now, drops its work item and
// records its event.
func (s *Service) endPlacement(tx store.Tx, rec *store.Record, p *placementDoc, status string) error {
	p.Status, p.End = status, s.nowMillis()
	if status != placementFulfilled {
		p.SessionKey, p.SessionARN, p.Location, p.IP, p.DNS, p.Port = "", "", "", "", "", 0
	}
	if err := deleteIfThere(tx, kindPlacementWait, p.ID); err != nil {
		return err
	}
	if err := s.placementEvent(tx, p); err != nil {
		return err
	}
	s.logAction(tx, "placement ended", slog.String("placement_id", p.ID), slog.String("status", status),
		slog.String("game_session", p.SessionARN))
	if p.Match != "" {
		if err := s.matchPlacementEnded(tx, p); err != nil {
			return err
		}
	}
	return putDoc(tx, rec, p)
}

// apiPlacement converts a stored placement. The game session fields are shown while a game
// session is being started for it (not final until FULFILLED, as in GameLift).
func (s *Service) apiPlacement(p *placementDoc) *api.GameSessionPlacement {
	status := api.GameSessionPlacementState(p.Status)
	out := &api.GameSessionPlacement{PlacementId: api.String(p.ID), GameSessionQueueName: api.String(p.Queue),
		Status: &status, MaximumPlayerSessionCount: api.Int32(p.Max), StartTime: stamp(p.Start),
		GameSessionName: optional(p.Name), GameSessionData: optional(p.Data), MatchmakerData: optional(p.Matchmake)}
	for _, g := range p.Props {
		out.GameProperties = append(out.GameProperties, api.GameProperty{Key: api.String(g.Key), Value: api.String(g.Value)})
	}
	for _, l := range p.Latencies {
		out.PlayerLatencies = append(out.PlayerLatencies, api.PlayerLatency{PlayerId: api.String(l.Player),
			RegionIdentifier: api.String(l.Region), LatencyInMilliseconds: &l.Millis})
	}
	if o := p.Override; o != nil {
		fb := api.PlacementFallbackStrategy(o.Fallback)
		out.PriorityConfigurationOverride = &api.PriorityConfigurationOverride{LocationOrder: slices.Clone(o.Locations), PlacementFallbackStrategy: &fb}
	}
	if p.End > 0 {
		out.EndTime = stamp(p.End)
	}
	if p.SessionARN != "" {
		out.GameSessionArn, out.GameSessionId, out.GameSessionRegion = api.String(p.SessionARN), api.String(p.SessionARN), api.String(p.Location)
		out.IpAddress, out.DnsName = optional(p.IP), optional(p.DNS)
		if p.Port > 0 {
			out.Port = api.Int32(int32(p.Port))
		}
	}
	for _, ps := range p.Placed {
		out.PlacedPlayerSessions = append(out.PlacedPlayerSessions, api.PlacedPlayerSession{PlayerId: api.String(ps.Player), PlayerSessionId: api.String(ps.Session)})
	}
	return out
}
