package gamelift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

// The outbox holds every consequence of a state change that must leave the store: a push to
// a server process or to a host agent, an event for subscribers. The domain writes an outbox
// message in the same transaction as the change that causes it, so a message exists exactly
// when its change committed; a delivery component on each node (server/delivery.go) reads the
// messages for the sockets and subscribers it holds, delivers them in order and removes them
// (Delivered). A message nobody delivers before its deadline is removed by the OutboxMonitor
// and reported: the change's own timers (activation timeout, termination grace) then end it
// the way GameLift would.
//
// Messages are store records of kindOutbox whose Parent is an address: ProcessAddress,
// AgentAddress or EventsAddress. The store announces their writes (store.Watcher), which is
// how a node learns at once that there is something to deliver.
const kindOutbox = store.AnnouncedPrefix

// Address prefixes of outbox messages.
const (
	processAddressPrefix = "process/"
	agentAddressPrefix   = "agent/"
)

// EventsAddress is the address of events for subscribers (placement events and, later,
// matchmaking and fleet events): one delivery component in the cluster takes them.
const EventsAddress = "events"

// ProcessAddress is the outbox address of a server process's pushes.
func ProcessAddress(fleetID, processID string) string {
	return processAddressPrefix + fleetID + "/" + processID
}

// AgentAddress is the outbox address of the pushes to a compute's host agent.
func AgentAddress(fleetID, compute string) string {
	return agentAddressPrefix + fleetID + "/" + compute
}

// ParseAddress splits an outbox address into its kind ("process", "agent" or "events") and,
// for the first two, the fleet and the process ID or compute name.
func ParseAddress(addr string) (kind, fleetID, name string) {
	k, rest, ok := strings.Cut(addr, "/")
	if !ok {
		return addr, "", ""
	}
	fleetID, name, _ = strings.Cut(rest, "/")
	return k, fleetID, name
}

// Message types in the outbox.
const (
	// MessageCreateGameSession carries a GameSessionStart for the process.
	MessageCreateGameSession = "CreateGameSession"
	// MessageUpdateGameSession carries a GameSessionUpdate for the process.
	MessageUpdateGameSession = "UpdateGameSession"
	// MessageTerminateProcess carries a ProcessTermination for the process.
	MessageTerminateProcess = "TerminateProcess"
	// MessageEvent carries an Event for subscribers.
	MessageEvent = "Event"
)

// ProcessTermination is the body of a MessageTerminateProcess: the process must end by Time.
type ProcessTermination struct {
	Time time.Time `json:"time"`
}

// outboxDoc is a stored outbox message. Deadline (Unix ms, 0 for none) is when an
// undelivered message is given up.
type outboxDoc struct {
	Type     string          `json:"type"`
	Body     json.RawMessage `json:"body"`
	Created  int64           `json:"created"`
	Deadline int64           `json:"deadline,omitempty"`
}

// Message is an outbox message handed to a delivery component.
type Message struct {
	// ID identifies the message for Delivered.
	ID string
	// Address is where it goes (ProcessAddress, AgentAddress, EventsAddress).
	Address string
	// Type says what Body holds (MessageCreateGameSession, ...).
	Type string
	// Body is the JSON of the typed body.
	Body json.RawMessage
	// Created is when the change that caused it committed; Deadline, when not zero, is when
	// it is given up.
	Created, Deadline time.Time
}

// enqueue writes an outbox message in tx. deadline is a Unix millisecond time, 0 for none.
func (s *Service) enqueue(tx store.Tx, address, typ string, body any, deadline int64) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	return insertChild(tx, kindOutbox, s.newID(), address, &outboxDoc{Type: typ, Body: data, Created: s.nowMillis(), Deadline: deadline})
}

// Outbox returns up to limit messages waiting for address (0: all), oldest first.
func (s *Service) Outbox(ctx context.Context, address string, limit int) ([]Message, error) {
	var out []Message
	err := s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindOutbox, store.ListOptions{Parent: address, Limit: limit})
		if err != nil {
			return err
		}
		out, err = messages(recs)
		return err
	})
	return out, err
}

// messages decodes outbox records.
func messages(recs []*store.Record) ([]Message, error) {
	out := make([]Message, 0, len(recs))
	for _, r := range recs {
		var d outboxDoc
		if err := unmarshal(r.Data, &d); err != nil {
			return nil, err
		}
		m := Message{ID: r.ID, Address: r.Parent, Type: d.Type, Body: d.Body, Created: time.UnixMilli(d.Created)}
		if d.Deadline > 0 {
			m.Deadline = time.UnixMilli(d.Deadline)
		}
		out = append(out, m)
	}
	return out, nil
}

// Delivered removes delivered messages, in one transaction. A message already removed
// (delivered by another node, or given up) is not an error: pushes are delivered at least
// once, and the SDKs take a repeated push as the one they already have.
func (s *Service) Delivered(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	return s.update(ctx, func(tx store.Tx) error {
		for _, id := range ids {
			if err := deleteIfThere(tx, kindOutbox, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// OutboxAddresses returns the addresses that have messages waiting, each once.
func (s *Service) OutboxAddresses(ctx context.Context) ([]string, error) {
	var out []string
	err := s.view(ctx, func(tx store.Tx) error {
		out = nil
		recs, err := tx.List(kindOutbox, store.ListOptions{})
		seen := map[string]bool{}
		for _, r := range recs {
			if !seen[r.Parent] {
				seen[r.Parent] = true
				out = append(out, r.Parent)
			}
		}
		return err
	})
	return out, err
}

// TakeEvents removes up to limit events from the outbox, oldest first, calling take for each
// inside the transaction that removes them: whatever take writes commits together with the
// removal, so an event is taken exactly once however many nodes try. It returns the events
// taken, once their removal has committed.
func (s *Service) TakeEvents(ctx context.Context, limit int, take func(store.Tx, Message) error) ([]Message, error) {
	return s.takeOutbox(ctx, EventsAddress, limit, take)
}

// takeOutbox removes up to limit messages of an address, oldest first, calling take for each
// in the transaction that removes them (TakeEvents).
func (s *Service) takeOutbox(ctx context.Context, address string, limit int, take func(store.Tx, Message) error) ([]Message, error) {
	var taken []Message
	err := s.update(ctx, func(tx store.Tx) error {
		taken = taken[:0]
		recs, err := tx.List(kindOutbox, store.ListOptions{Parent: address, Limit: limit})
		if err != nil {
			return err
		}
		msgs, err := messages(recs)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if err := tx.Delete(kindOutbox, m.ID); err != nil {
				return conflictIfGone(err)
			}
			if err := take(tx, m); err != nil {
				return err
			}
			taken = append(taken, m)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return taken, nil
}

// conflictIfGone turns the ErrNotFound of a record another transaction removed into a
// conflict, so that the store runs the transaction again.
func conflictIfGone(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("%w: %w", store.ErrConflict, err)
	}
	return err
}

// OutboxMonitor gives up outbox messages whose deadline has passed.
type OutboxMonitor struct{ s *Service }

// OutboxMonitor returns the monitor of s's outbox.
func (s *Service) OutboxMonitor() *OutboxMonitor { return &OutboxMonitor{s: s} }

// Run calls Step every interval until ctx is done; onExpired receives what Step gave up and
// onError its errors.
func (m *OutboxMonitor) Run(ctx context.Context, interval time.Duration, onExpired func([]Message), onError func(error)) {
	clock.Every(ctx, m.s.clock, interval, func(ctx context.Context) error {
		gone, err := m.Step(ctx)
		if len(gone) > 0 && onExpired != nil {
			onExpired(gone)
		}
		return err
	}, onError)
}

// Step removes every message whose deadline has passed and returns them, for the log.
func (m *OutboxMonitor) Step(ctx context.Context) ([]Message, error) {
	now := m.s.nowMillis()
	var due []Message
	err := m.s.view(ctx, func(tx store.Tx) error {
		recs, err := tx.List(kindOutbox, store.ListOptions{})
		if err != nil {
			return err
		}
		all, err := messages(recs)
		due = due[:0]
		for _, msg := range all {
			if !msg.Deadline.IsZero() && msg.Deadline.UnixMilli() <= now {
				due = append(due, msg)
			}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, msg := range due {
		errs = append(errs, m.s.Delivered(ctx, msg.ID))
	}
	return due, errors.Join(errs...)
}
