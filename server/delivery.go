package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/message"
	"github.com/hoist-gg/hoist/store"
)

// EventSink takes events (gamelift.MessageEvent) out of the outbox: Take runs inside the
// transaction that removes the event, so a sink that writes to the store (an SNS topic's
// delivery queue) receives each event exactly once, whichever node takes it.
type EventSink interface {
	Take(tx store.Tx, m gamelift.Message) error
}

// delivery is this node's delivery component (ARCHITECTURE §7): it delivers the outbox
// messages addressed to the process and agent sockets this node holds, in order, and hands
// events to the EventSink. It learns of new messages from the store's announcements
// (store.Watcher), from sockets connecting, and from a catch-up sweep every sweepEvery.
// Each address is drained by one goroutine at a time, so its messages stay in order.
type delivery struct {
	svc    *gamelift.Service
	hub    *sdkws.Hub
	events EventSink
	log    *slog.Logger

	mu       sync.Mutex
	draining map[string]bool // addresses with a drain running
	again    map[string]bool // addresses to drain once more when their drain ends
	ctx      context.Context
	wg       sync.WaitGroup
}

// deliveryBatch is how many messages of one address a drain reads at a time.
const deliveryBatch = 64

// sweepEvery is how often a node rereads the whole outbox for what it holds, in case an
// announcement was lost; it is wall-clock time, since it paces work rather than deciding any
// outcome.
const sweepEvery = 2 * time.Second

// pushTimeout bounds one push on a socket.
const pushTimeout = 10 * time.Second

func newDelivery(svc *gamelift.Service, hub *sdkws.Hub, events EventSink, log *slog.Logger) *delivery {
	return &delivery{svc: svc, hub: hub, events: events, log: log,
		draining: map[string]bool{}, again: map[string]bool{}, ctx: context.Background()}
}

// run watches the store and sweeps until ctx is done, then waits for running drains.
func (d *delivery) run(ctx context.Context, st store.Store) {
	d.mu.Lock()
	d.ctx = ctx
	d.mu.Unlock()
	if w, ok := st.(store.Watcher); ok {
		w.Watch(ctx, d.announced)
	}
	clock.Every(ctx, clock.Real{}, sweepEvery, func(ctx context.Context) error { return d.sweep(ctx) },
		func(err error) { d.log.Warn("outbox sweep failed", "err", err) })
	d.wg.Wait()
}

// announced is the store's announcement callback: it must not block.
func (d *delivery) announced(a store.Announcement) {
	switch {
	case a.Missed:
		d.schedule(sweepAddress)
	case a.Kind == store.AnnouncedPrefix && d.holds(a.Parent):
		d.schedule(a.Parent)
	}
}

// sweepAddress is a pseudo-address whose drain sweeps the whole outbox.
const sweepAddress = "*sweep"

// holds reports whether this node delivers to addr now.
func (d *delivery) holds(addr string) bool {
	kind, fleet, name := gamelift.ParseAddress(addr)
	switch kind {
	case "process":
		return d.hub.Connected(name)
	case "agent":
		return d.hub.AgentConnected(sdkws.ComputeRef{FleetID: fleet, ComputeName: name})
	case gamelift.EventsAddress:
		return d.events != nil
	}
	return false
}

// processConnected and agentConnected are the Hub's connect hooks.
func (d *delivery) processConnected(r sdkws.ProcessRef) {
	d.schedule(gamelift.ProcessAddress(r.FleetID, r.ProcessID))
}

func (d *delivery) agentConnected(r sdkws.ComputeRef) {
	d.schedule(gamelift.AgentAddress(r.FleetID, r.ComputeName))
}

// schedule starts a drain of addr, or asks the running one to go round once more.
func (d *delivery) schedule(addr string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ctx.Err() != nil {
		return
	}
	if d.draining[addr] {
		d.again[addr] = true
		return
	}
	d.draining[addr] = true
	d.wg.Add(1)
	go d.drainLoop(d.ctx, addr)
}

// drainLoop drains addr until no new announcement came in meanwhile.
func (d *delivery) drainLoop(ctx context.Context, addr string) {
	defer d.wg.Done()
	for {
		var err error
		if addr == sweepAddress {
			err = d.sweep(ctx)
		} else {
			err = d.drain(ctx, addr)
		}
		if err != nil && ctx.Err() == nil {
			d.log.Warn("outbox delivery failed; it is retried", "address", addr, "err", err)
		}
		d.mu.Lock()
		if !d.again[addr] || ctx.Err() != nil {
			delete(d.draining, addr)
			d.mu.Unlock()
			return
		}
		delete(d.again, addr)
		d.mu.Unlock()
	}
}

// sweep schedules every address with messages that this node holds.
func (d *delivery) sweep(ctx context.Context) error {
	addrs, err := d.svc.OutboxAddresses(ctx)
	for _, a := range addrs {
		if d.holds(a) {
			d.schedule(a)
		}
	}
	return err
}

// drain delivers addr's messages, oldest first, until none is left or one cannot be
// delivered here (the socket went away: it is delivered where the socket comes back).
func (d *delivery) drain(ctx context.Context, addr string) error {
	if addr == gamelift.EventsAddress {
		return d.drainEvents(ctx)
	}
	for ctx.Err() == nil {
		msgs, err := d.svc.Outbox(ctx, addr, deliveryBatch)
		if err != nil || len(msgs) == 0 {
			return err
		}
		var done []string
		for _, m := range msgs {
			if err := d.push(ctx, m); err != nil {
				if errors.Is(err, sdkws.ErrNotConnected) || errors.Is(err, sdkws.ErrClosed) {
					err = nil
				}
				return errors.Join(err, d.svc.Delivered(ctx, done...))
			}
			done = append(done, m.ID)
		}
		if err := d.svc.Delivered(ctx, done...); err != nil {
			return err
		}
	}
	return nil
}

// drainEvents hands every waiting event to the sink, and logs each at debug level once it is
// taken.
func (d *delivery) drainEvents(ctx context.Context) error {
	for ctx.Err() == nil {
		taken, err := d.svc.TakeEvents(ctx, deliveryBatch, d.events.Take)
		for _, m := range taken {
			d.log.Debug("event", "body", string(m.Body))
		}
		if err != nil || len(taken) < deliveryBatch {
			return err
		}
	}
	return nil
}

// push delivers one message to its socket on this node.
func (d *delivery) push(ctx context.Context, m gamelift.Message) error {
	_, fleet, name := gamelift.ParseAddress(m.Address)
	p, err := pushMessage(m)
	if err != nil {
		d.log.Error("outbox message cannot be pushed; dropped", "address", m.Address, "type", m.Type, "err", err)
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	if kind, _, _ := gamelift.ParseAddress(m.Address); kind == "agent" {
		return d.hub.PushAgent(ctx, sdkws.ComputeRef{FleetID: fleet, ComputeName: name}, p)
	}
	return d.hub.Push(ctx, name, p)
}

// pushMessage translates an outbox message into its websocket push.
func pushMessage(m gamelift.Message) (message.Message, error) {
	if kind, _, _ := gamelift.ParseAddress(m.Address); kind == "agent" {
		return agentMessage(m)
	}
	switch m.Type {
	case gamelift.MessageCreateGameSession:
		var gs gamelift.GameSessionStart
		if err := json.Unmarshal(m.Body, &gs); err != nil {
			return nil, err
		}
		return message.CreateGameSession{GameSessionID: gs.GameSessionID, GameSessionName: gs.Name,
			GameSessionData: gs.GameSessionData, MatchmakerData: gs.MatchmakerData, IPAddress: gs.IPAddress,
			DNSName: gs.DNSName, Port: gs.Port, MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount,
			GameProperties: gs.GameProperties}, nil
	case gamelift.MessageUpdateGameSession:
		var u gamelift.GameSessionUpdate
		if err := json.Unmarshal(m.Body, &u); err != nil {
			return nil, err
		}
		return updateMessage(u), nil
	case gamelift.MessageTerminateProcess:
		var t gamelift.ProcessTermination
		if err := json.Unmarshal(m.Body, &t); err != nil {
			return nil, err
		}
		return message.TerminateProcess{TerminationTime: t.Time.UnixMilli()}, nil
	}
	return nil, fmt.Errorf("unknown outbox message type %q", m.Type)
}

// updateMessage is the UpdateGameSession push of a game session change.
func updateMessage(u gamelift.GameSessionUpdate) message.UpdateGameSession {
	gs := u.GameSession
	return message.UpdateGameSession{UpdateReason: u.Reason, BackfillTicketID: u.BackfillTicketID,
		GameSession: message.GameSession{GameSessionID: gs.GameSessionID, Name: gs.Name, FleetID: u.FleetID,
			GameSessionData: gs.GameSessionData, MatchmakerData: gs.MatchmakerData, DNSName: gs.DNSName,
			IPAddress: gs.IPAddress, MaximumPlayerSessionCount: gs.MaximumPlayerSessionCount, Port: gs.Port,
			GameProperties: gs.GameProperties, Location: u.Location}}
}

// agentMessage translates an outbox message for an agent into its websocket push.
func agentMessage(m gamelift.Message) (message.Message, error) {
	var n gamelift.AgentNotice
	if err := json.Unmarshal(m.Body, &n); err != nil {
		return nil, err
	}
	switch m.Type {
	case gamelift.MessageAgentRuntimeConfiguration:
		if n.Runtime == nil {
			return nil, errors.New("runtime configuration missing")
		}
		return runtimeConfigurationPush{agentRuntimeConfiguration(n.Runtime)}, nil
	case gamelift.MessageAgentStopCompute:
		return message.StartComputeTermination{}, nil
	case gamelift.MessageAgentForceExit:
		return message.ForceExitServerProcess{ProcessID: n.ProcessID, TerminationReason: n.Reason}, nil
	case gamelift.MessageAgentProcessRegistered:
		return message.NotifyProcessRegistered{ProcessID: n.ProcessID, LogPaths: n.LogPaths}, nil
	case gamelift.MessageAgentSessionActivated:
		return message.NotifyGameSessionActivated{ProcessID: n.ProcessID, GameSessionID: n.GameSessionID}, nil
	case gamelift.MessageAgentCrashProcess:
		return crashProcessPush{ProcessID: n.ProcessID}, nil
	}
	return nil, fmt.Errorf("unknown agent message type %q", m.Type)
}

// logExpired reports outbox messages given up undelivered.
func (d *delivery) logExpired(msgs []gamelift.Message) {
	for _, m := range msgs {
		d.log.Warn("push not delivered before its deadline; the change's own timeout ends it",
			"address", m.Address, "type", m.Type, "created", m.Created, "deadline", m.Deadline)
	}
}
