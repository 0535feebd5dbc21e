package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// linkWriteTimeout bounds one websocket write (a network deadline, not a behaviour interval).
const linkWriteTimeout = 10 * time.Second

// DialLink opens the agent websocket: p.Endpoint with the query FleetId, ComputeName and
// Authorization (the compute auth token), as the GameLift Agent connects. Every text frame the
// server sends is decoded and passed to onMessage from one reader goroutine. A refused
// handshake (HTTP 401/403) is reported as ErrUnauthorized.
func DialLink(ctx context.Context, p LinkParams, onMessage func(Message), log *slog.Logger) (Link, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	u, err := linkURL(p)
	if err != nil {
		return nil, err
	}
	conn, resp, err := websocket.Dial(ctx, u, nil)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return nil, fmt.Errorf("agent websocket handshake: HTTP %d: %w", resp.StatusCode, ErrUnauthorized)
		}
		return nil, fmt.Errorf("agent websocket: %w", err)
	}
	conn.SetReadLimit(1 << 20)
	l := &wsLink{conn: conn, done: make(chan struct{}), log: log}
	go l.read(onMessage)
	return l, nil
}

// linkURL appends the agent's query parameters to the endpoint.
func linkURL(p LinkParams) (string, error) {
	u, err := url.Parse(p.Endpoint)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("agent endpoint %q is not a URL", p.Endpoint)
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	q := u.Query()
	q.Set("FleetId", p.FleetID)
	q.Set("ComputeName", p.ComputeName)
	q.Set("Authorization", p.AuthToken)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

type wsLink struct {
	conn *websocket.Conn
	log  *slog.Logger
	done chan struct{}
	once sync.Once
}

func (l *wsLink) read(onMessage func(Message)) {
	defer l.once.Do(func() { close(l.done) })
	for {
		typ, b, err := l.conn.Read(context.Background())
		if err != nil {
			l.log.Info("agent websocket closed", "err", err)
			return
		}
		if typ != websocket.MessageText {
			continue
		}
		var m Message
		if err := json.Unmarshal(b, &m); err != nil {
			l.log.Warn("agent websocket: undecodable frame", "err", err)
			continue
		}
		onMessage(m)
	}
}

func (l *wsLink) send(ctx context.Context, frame map[string]any) error {
	b, err := json.Marshal(frame)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, linkWriteTimeout)
	defer cancel()
	if err := l.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("agent websocket write %s: %w", frame["Action"], err)
	}
	return nil
}

func request(action string) map[string]any {
	return map[string]any{"Action": action, "RequestId": uuid.NewString()}
}

// SendHeartbeat sends SendHeartbeat with Status, ProcessList and HeartbeatTimeMillis.
func (l *wsLink) SendHeartbeat(ctx context.Context, hb Heartbeat) error {
	f := request(ActionSendHeartbeat)
	f["Status"] = hb.Status
	f["ProcessList"] = append([]string{}, hb.ProcessList...)
	f["HeartbeatTimeMillis"] = hb.Time.UnixMilli()
	return l.send(ctx, f)
}

// NotifyTermination sends NotifyServerProcessTermination; EventCode is null when empty.
func (l *wsLink) NotifyTermination(ctx context.Context, t Termination) error {
	f := request(ActionNotifyServerProcessTermination)
	f["ProcessId"] = t.ProcessID
	f["EventCode"] = nil
	if t.EventCode != "" {
		f["EventCode"] = t.EventCode
	}
	f["TerminationReason"] = t.TerminationReason
	return l.send(ctx, f)
}

// RequestRuntimeConfiguration sends DescribeRuntimeConfiguration.
func (l *wsLink) RequestRuntimeConfiguration(ctx context.Context) error {
	return l.send(ctx, request(ActionDescribeRuntimeConfiguration))
}

// Done is closed when the reader has stopped.
func (l *wsLink) Done() <-chan struct{} { return l.done }

// Close closes the websocket with a normal closure (at once if it is already broken).
func (l *wsLink) Close() error {
	select {
	case <-l.done:
		return l.conn.CloseNow()
	default:
	}
	return l.conn.Close(websocket.StatusNormalClosure, "agent closing")
}
