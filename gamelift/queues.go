package gamelift

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// Game session queues: the destinations (fleets and aliases) and rules a placement
// (placement*.go) chooses among. A queue is named, unique per Region, and its ARN's resource
// part is the name.

// kindQueue holds game session queues, with ID = the queue name.
const kindQueue = "queue"

// arnQueue is the ARN resource type of game session queues.
const arnQueue = "gamesessionqueue"

// Queue limits: TimeoutInSeconds' documented range and default (wire-protocol.md §12), and
// the destinations one queue may list (GameLift's quota of fleets per queue).
const (
	DefaultQueueTimeoutSeconds = 600
	minQueueTimeoutSeconds     = 10
	maxQueueTimeoutSeconds     = 600
	maxQueueDestinations       = 10
)

// queueDoc is a game session queue as stored under kindQueue. Every list keeps the order the
// user gave.
type queueDoc struct {
	Name string `json:"name"`
	ARN  string `json:"arn"`
	// Timeout is TimeoutInSeconds.
	Timeout int32 `json:"timeout"`
	// Policies are the PlayerLatencyPolicies as given.
	Policies []latencyPolicyDoc `json:"policies,omitempty"`
	// Destinations are the destination ARNs (fleet or alias ARNs), in priority order.
	Destinations []string `json:"destinations,omitempty"`
	// Filtered reports that a FilterConfiguration was given; AllowedLocations is its list.
	Filtered         bool     `json:"filtered,omitempty"`
	AllowedLocations []string `json:"allowedLocations,omitempty"`
	// Prioritised reports that a PriorityConfiguration was given; PriorityOrder and
	// LocationOrder are its lists (PriorityOrder empty: the default prioritisation).
	Prioritised        bool     `json:"prioritised,omitempty"`
	PriorityOrder      []string `json:"priorityOrder,omitempty"`
	LocationOrder      []string `json:"locationOrder,omitempty"`
	CustomEventData    string   `json:"customEventData,omitempty"`
	NotificationTarget string   `json:"notificationTarget,omitempty"`
	tagged
}

// latencyPolicyDoc is one PlayerLatencyPolicy. Duration nil means "until the queue times
// out" (PolicyDurationSeconds was omitted).
type latencyPolicyDoc struct {
	MaxMillis int32  `json:"maxMillis"`
	Duration  *int32 `json:"duration,omitempty"`
}

func (s *Service) queueHandlers(h *api.Handlers) {
	h.CreateGameSessionQueue = s.CreateGameSessionQueue
	h.DescribeGameSessionQueues = s.DescribeGameSessionQueues
	h.UpdateGameSessionQueue = s.UpdateGameSessionQueue
	h.DeleteGameSessionQueue = s.DeleteGameSessionQueue
}

// queueNotFound answers a queue name that names no queue.
func queueNotFound(name string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Game session queue %s not found.", name)
	}
}

// queueName turns a queue name or ARN into the name.
func (s *Service) queueName(nameOrARN string) (string, error) {
	return s.resolveID(nameOrARN, arnQueue)
}

// readQueueTx reads the queue named by a name or ARN, or answers NotFoundException.
func (s *Service) readQueueTx(tx store.Tx, nameOrARN string) (*store.Record, *queueDoc, error) {
	name, err := s.queueName(nameOrARN)
	if err != nil {
		return nil, nil, err
	}
	q := &queueDoc{}
	rec, err := getDoc(tx, kindQueue, name, q, queueNotFound(name))
	if err != nil {
		return nil, nil, err
	}
	return rec, q, nil
}

// CreateGameSessionQueue creates a queue. Its name is unique in the Region; every destination
// must name a fleet or alias that exists.
func (s *Service) CreateGameSessionQueue(ctx context.Context, in *api.CreateGameSessionQueueInput) (*api.CreateGameSessionQueueOutput, error) {
	tags, err := mergeTags(nil, in.Tags)
	if err != nil {
		return nil, err
	}
	name := api.Deref(in.Name)
	q := &queueDoc{Name: name, ARN: s.arn(arnQueue, name), Timeout: DefaultQueueTimeoutSeconds, tagged: tagged{Tags: tags}}
	err = s.update(ctx, func(tx store.Tx) error {
		if err := s.applyQueueSettings(tx, q, queueSettings(*in)); err != nil {
			return err
		}
		err := insertDoc(tx, kindQueue, name, q)
		if errors.Is(err, store.ErrExists) {
			return api.Errorf(api.InvalidRequestException, "Game session queue %s already exists.", name)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &api.CreateGameSessionQueueOutput{GameSessionQueue: apiQueue(q)}, nil
}

// queueSettings is the part of CreateGameSessionQueue's input that UpdateGameSessionQueue
// shares: both go through applyQueueSettings.
func queueSettings(in api.CreateGameSessionQueueInput) *api.UpdateGameSessionQueueInput {
	return &api.UpdateGameSessionQueueInput{Name: in.Name, TimeoutInSeconds: in.TimeoutInSeconds,
		PlayerLatencyPolicies: in.PlayerLatencyPolicies, Destinations: in.Destinations,
		FilterConfiguration: in.FilterConfiguration, PriorityConfiguration: in.PriorityConfiguration,
		CustomEventData: in.CustomEventData, NotificationTarget: in.NotificationTarget}
}

// applyQueueSettings checks and applies every setting in (a member left out keeps its value;
// a list given replaces the list, so an empty one clears it).
func (s *Service) applyQueueSettings(tx store.Tx, q *queueDoc, in *api.UpdateGameSessionQueueInput) error {
	if t := in.TimeoutInSeconds; t != nil {
		if *t < minQueueTimeoutSeconds || *t > maxQueueTimeoutSeconds {
			return api.Errorf(api.InvalidRequestException, "TimeoutInSeconds must be between %d and %d; got %d.",
				minQueueTimeoutSeconds, maxQueueTimeoutSeconds, *t)
		}
		q.Timeout = *t
	}
	if in.PlayerLatencyPolicies != nil {
		pols, err := latencyPolicies(in.PlayerLatencyPolicies)
		if err != nil {
			return err
		}
		q.Policies = pols
	}
	if in.Destinations != nil {
		dests, err := s.queueDestinations(tx, in.Destinations)
		if err != nil {
			return err
		}
		q.Destinations = dests
	}
	if err := applyQueuePriority(q, in.FilterConfiguration, in.PriorityConfiguration); err != nil {
		return err
	}
	if in.CustomEventData != nil {
		q.CustomEventData = *in.CustomEventData
	}
	if t := in.NotificationTarget; t != nil {
		if *t != "" && !isSNSTopicARN(*t) {
			return api.Errorf(api.InvalidRequestException, "NotificationTarget %s is not an SNS topic ARN.", *t)
		}
		q.NotificationTarget = *t
	}
	return nil
}

// latencyPolicies checks PlayerLatencyPolicies: each needs its cap.
func latencyPolicies(in []api.PlayerLatencyPolicy) ([]latencyPolicyDoc, error) {
	out := make([]latencyPolicyDoc, 0, len(in))
	for i, p := range in {
		if p.MaximumIndividualPlayerLatencyMilliseconds == nil {
			return nil, api.Errorf(api.InvalidRequestException,
				"PlayerLatencyPolicies[%d] needs a MaximumIndividualPlayerLatencyMilliseconds.", i)
		}
		out = append(out, latencyPolicyDoc{MaxMillis: *p.MaximumIndividualPlayerLatencyMilliseconds, Duration: p.PolicyDurationSeconds})
	}
	return out, nil
}

// queueDestinations checks a destination list: fleet or alias ARNs of this Region, each
// naming a fleet or alias that exists, each listed once.
func (s *Service) queueDestinations(tx store.Tx, in []api.GameSessionQueueDestination) ([]string, error) {
	if len(in) > maxQueueDestinations {
		return nil, api.Errorf(api.LimitExceededException, "A queue has at most %d destinations; got %d.", maxQueueDestinations, len(in))
	}
	out := make([]string, 0, len(in))
	for _, d := range in {
		raw := api.Deref(d.DestinationArn)
		a, ok := parseARN(raw)
		if !ok || (a.ResourceType != arnFleet && a.ResourceType != arnAlias) {
			return nil, api.Errorf(api.InvalidRequestException, "Destination %q is not a fleet ARN or an alias ARN.", raw)
		}
		if err := s.checkOwner(a, raw); err != nil {
			return nil, err
		}
		if err := s.destinationExists(tx, a); err != nil {
			return nil, err
		}
		arn := s.arn(a.ResourceType, a.ID)
		if slices.Contains(out, arn) {
			return nil, api.Errorf(api.InvalidRequestException, "Destination %s is listed twice.", raw)
		}
		out = append(out, arn)
	}
	return out, nil
}

// destinationExists answers NotFoundException for a destination whose fleet or alias does
// not exist (a TERMINATED fleet counts as gone).
func (s *Service) destinationExists(tx store.Tx, a parsedARN) error {
	if a.ResourceType == arnFleet {
		_, err := s.liveFleet(tx, a.ID)
		return err
	}
	_, err := getDoc(tx, kindAlias, a.ID, &aliasDoc{}, aliasNotFound(a.ID))
	return err
}

// applyQueuePriority applies a FilterConfiguration and a PriorityConfiguration: no list may
// name an entry twice.
func applyQueuePriority(q *queueDoc, f *api.FilterConfiguration, p *api.PriorityConfiguration) error {
	if f != nil {
		if err := unique("FilterConfiguration.AllowedLocations", f.AllowedLocations); err != nil {
			return err
		}
		q.Filtered, q.AllowedLocations = true, f.AllowedLocations
	}
	if p == nil {
		return nil
	}
	order := make([]string, len(p.PriorityOrder))
	for i, k := range p.PriorityOrder {
		order[i] = string(k)
	}
	if err := unique("PriorityConfiguration.PriorityOrder", order); err != nil {
		return err
	}
	if err := unique("PriorityConfiguration.LocationOrder", p.LocationOrder); err != nil {
		return err
	}
	q.Prioritised, q.PriorityOrder, q.LocationOrder = true, order, p.LocationOrder
	return nil
}

// unique answers InvalidRequestException when list names an entry twice.
func unique(member string, list []string) error {
	for i, v := range list {
		if slices.Contains(list[:i], v) {
			return api.Errorf(api.InvalidRequestException, "%s lists %s more than once.", member, v)
		}
	}
	return nil
}

// isSNSTopicARN reports whether s has the form of an SNS topic ARN,
// arn:<partition>:sns:<region>:<account>:<name>.
func isSNSTopicARN(s string) bool {
	parts := strings.Split(s, ":")
	return len(parts) == 6 && parts[0] == "arn" && parts[1] != "" && parts[2] == "sns" && parts[5] != ""
}

// DescribeGameSessionQueues lists queues in creation order, or the named ones (names or ARNs)
// in the order given; a name that names no queue is NotFoundException.
func (s *Service) DescribeGameSessionQueues(ctx context.Context, in *api.DescribeGameSessionQueuesInput) (*api.DescribeGameSessionQueuesOutput, error) {
	var out api.DescribeGameSessionQueuesOutput
	var err error
	if len(in.Names) > 0 {
		out.GameSessionQueues, out.NextToken, err = pageNames(s, ctx, in.Names, filterHash("DescribeGameSessionQueues", in.Names...),
			in.NextToken, pageSize(in.Limit), func(tx store.Tx, name string) (api.GameSessionQueue, error) {
				_, q, err := s.readQueueTx(tx, name)
				if err != nil {
					return api.GameSessionQueue{}, err
				}
				return *apiQueue(q), nil
			})
	} else {
		out.GameSessionQueues, out.NextToken, err = pageKind(s, ctx, kindQueue, filterHash("DescribeGameSessionQueues"), in.NextToken,
			pageSize(in.Limit), func(*queueDoc) bool { return true }, func(q *queueDoc) api.GameSessionQueue { return *apiQueue(q) })
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateGameSessionQueue changes the settings given; the others keep their values.
func (s *Service) UpdateGameSessionQueue(ctx context.Context, in *api.UpdateGameSessionQueueInput) (*api.UpdateGameSessionQueueOutput, error) {
	var q *queueDoc
	err := s.update(ctx, func(tx store.Tx) error {
		rec, doc, err := s.readQueueTx(tx, api.Deref(in.Name))
		if err != nil {
			return err
		}
		if err := s.applyQueueSettings(tx, doc, in); err != nil {
			return err
		}
		q = doc
		return putDoc(tx, rec, doc)
	})
	if err != nil {
		return nil, err
	}
	return &api.UpdateGameSessionQueueOutput{GameSessionQueue: apiQueue(q)}, nil
}

// DeleteGameSessionQueue deletes a queue. Its PENDING placements without a game session end
// FAILED in the same transaction; one whose game session is activating keeps it and is
// FULFILLED or FAILED as that session goes.
func (s *Service) DeleteGameSessionQueue(ctx context.Context, in *api.DeleteGameSessionQueueInput) (*api.DeleteGameSessionQueueOutput, error) {
	err := s.update(ctx, func(tx store.Tx) error {
		_, q, err := s.readQueueTx(tx, api.Deref(in.Name))
		if err != nil {
			return err
		}
		err = eachChild(tx, kindPlacement, q.Name, func(rec *store.Record, p *placementDoc) error {
			if p.Status != placementPending || p.SessionKey != "" {
				return nil
			}
			return s.endPlacement(tx, rec, p, placementFailed)
		})
		if err != nil {
			return err
		}
		return tx.Delete(kindQueue, q.Name)
	})
	if err != nil {
		return nil, err
	}
	return &api.DeleteGameSessionQueueOutput{}, nil
}

// apiQueue converts a stored queue.
func apiQueue(q *queueDoc) *api.GameSessionQueue {
	out := &api.GameSessionQueue{Name: api.String(q.Name), GameSessionQueueArn: api.String(q.ARN),
		TimeoutInSeconds: api.Int32(q.Timeout), CustomEventData: optional(q.CustomEventData),
		NotificationTarget:    optional(q.NotificationTarget),
		Destinations:          make([]api.GameSessionQueueDestination, len(q.Destinations)),
		PlayerLatencyPolicies: make([]api.PlayerLatencyPolicy, len(q.Policies))}
	for i, d := range q.Destinations {
		out.Destinations[i] = api.GameSessionQueueDestination{DestinationArn: api.String(d)}
	}
	for i, p := range q.Policies {
		out.PlayerLatencyPolicies[i] = api.PlayerLatencyPolicy{MaximumIndividualPlayerLatencyMilliseconds: api.Int32(p.MaxMillis),
			PolicyDurationSeconds: p.Duration}
	}
	if q.Filtered {
		out.FilterConfiguration = &api.FilterConfiguration{AllowedLocations: slices.Clone(q.AllowedLocations)}
	}
	if q.Prioritised {
		out.PriorityConfiguration = &api.PriorityConfiguration{LocationOrder: slices.Clone(q.LocationOrder)}
		for _, k := range q.PriorityOrder {
			out.PriorityConfiguration.PriorityOrder = append(out.PriorityConfiguration.PriorityOrder, api.PriorityType(k))
		}
	}
	return out
}
