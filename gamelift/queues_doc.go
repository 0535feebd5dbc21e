package gamelift

import (
	"strings"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// kindQueue holds game session queues, with ID = the queue name (unique per Region).
const kindQueue = "queue"

// arnQueue is the ARN resource type of game session queues.
const arnQueue = "gamesessionqueue"

// DefaultQueueTimeoutSeconds is the TimeoutInSeconds of a queue created without one.
const DefaultQueueTimeoutSeconds = 600

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
	// AllowedLocations is FilterConfiguration.AllowedLocations; empty allows every location.
	AllowedLocations []string `json:"allowedLocations,omitempty"`
	// PriorityOrder and LocationOrder are the PriorityConfiguration; PriorityOrder empty means
	// the default prioritisation.
	PriorityOrder      []string `json:"priorityOrder,omitempty"`
	LocationOrder      []string `json:"locationOrder,omitempty"`
	CustomEventData    string   `json:"customEventData,omitempty"`
	NotificationTarget string   `json:"notificationTarget,omitempty"`
	tagged
}

// latencyPolicyDoc is one PlayerLatencyPolicy. Duration 0 means "until the queue times out"
// (the field was omitted).
type latencyPolicyDoc struct {
	MaxMillis int32 `json:"maxMillis"`
	Duration  int32 `json:"duration,omitempty"`
}

// queueNotFound answers a queue name that names no queue.
func queueNotFound(name string) func() error {
	return func() error {
		return api.Errorf(api.NotFoundException, "Game session queue %s not found.", name)
	}
}

// queueName turns a queue name or ARN into the name.
func (s *Service) queueName(nameOrARN string) (string, error) {
	if !strings.HasPrefix(nameOrARN, "arn:") {
		return nameOrARN, nil
	}
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
