package serversdk

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/sdkws/message"
)

// link is the websocket connection of an SDK, with its reconnects (§1.6): a dropped socket is
// replaced by a new one to the same URL; the new socket is opened before the old one is
// closed; a close with status 1000 or 1001 from the service ends the connection for good.
type link struct {
	sdk *SDK

	mu      sync.Mutex
	url     string          // the full URL with query, reused for automatic reconnects
	ws      *websocket.Conn // the current socket; nil while reconnecting
	up      chan struct{}   // closed while ws is set
	closed  bool
	pending map[string]chan []byte
}

func newLink(sdk *SDK, url string) *link {
	return &link{sdk: sdk, url: url, up: make(chan struct{}), pending: make(map[string]chan []byte)}
}

// dial opens one socket, giving up after CallTimeout on the SDK's clock.
func (l *link) dial(ctx context.Context, url string) (*websocket.Conn, error) {
	ctx, cancel := clock.WithTimeout(ctx, l.sdk.opt.Clock, l.sdk.opt.CallTimeout)
	defer cancel()
	opts := &websocket.DialOptions{HTTPHeader: http.Header{"User-Agent": {"hoist-serversdk/" + SdkVersion}}}
	if l.sdk.opt.TLSConfig != nil {
		opts.HTTPClient = &http.Client{Transport: &http.Transport{TLSClientConfig: l.sdk.opt.TLSConfig.Clone()}}
	}
	ws, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		if resp != nil && resp.StatusCode == http.StatusForbidden {
			return nil, &Error{Action: "Connect", StatusCode: resp.StatusCode, Message: "the service refused the credentials"}
		}
		return nil, err
	}
	ws.SetReadLimit(1 << 20)
	return ws, nil
}

// install makes ws the current socket and closes the previous one, if any, with 1001
// (as the C++ SDK does on reconnect, §1.6).
func (l *link) install(ws *websocket.Conn) bool {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		ws.CloseNow()
		return false
	}
	old := l.ws
	l.ws = ws
	if old == nil {
		close(l.up)
	}
	l.mu.Unlock()
	go l.read(ws)
	if old != nil {
		go old.Close(websocket.StatusGoingAway, "reconnecting")
	}
	return true
}

// read dispatches ws's frames until it fails, then reports the loss.
func (l *link) read(ws *websocket.Conn) {
	for {
		typ, frame, err := ws.Read(context.Background())
		if err != nil {
			l.lost(ws, err)
			return
		}
		if typ == websocket.MessageText {
			l.dispatch(frame)
		}
	}
}

// lost handles the end of ws. Only the current socket matters: an older one was replaced.
func (l *link) lost(ws *websocket.Conn, err error) {
	l.mu.Lock()
	if l.ws != ws || l.closed {
		l.mu.Unlock()
		return
	}
	l.ws = nil
	l.up = make(chan struct{})
	code := websocket.CloseStatus(err)
	final := code == websocket.StatusNormalClosure || code == websocket.StatusGoingAway
	if final {
		l.closed = true
	}
	l.mu.Unlock()
	ws.CloseNow()
	if final {
		l.sdk.log.Warn("serversdk: the service closed the connection", "status", code)
		return
	}
	l.sdk.log.Info("serversdk: connection lost; reconnecting", "err", err)
	go l.reconnect(l.currentURL())
}

func (l *link) currentURL() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.url
}

// reconnect dials url until it succeeds or the link is closed, waiting between attempts with
// the connect backoff on the SDK's clock.
func (l *link) reconnect(url string) {
	wait := l.sdk.opt.ConnectBackoff
	for !l.isClosed() {
		ws, err := l.dial(context.Background(), url)
		if err == nil {
			l.install(ws)
			return
		}
		l.sdk.log.Warn("serversdk: reconnect failed", "err", err, "retry_in", wait)
		<-l.sdk.opt.Clock.After(wait)
		wait = min(2*wait, l.sdk.opt.MaxConnectBackoff)
	}
}

// refresh moves the link to a new URL (RefreshConnection, §4): the new socket first, then the
// old one closes.
func (l *link) refresh(url string) error {
	ws, err := l.dial(context.Background(), url)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.url = url
	l.mu.Unlock()
	l.install(ws)
	return nil
}

func (l *link) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// close ends the link for good (Destroy, §6.10): no more reconnects, the socket closes with
// 1001.
func (l *link) close() {
	l.mu.Lock()
	ws := l.ws
	l.closed, l.ws = true, nil
	l.mu.Unlock()
	if ws != nil {
		ws.Close(websocket.StatusGoingAway, "process ending")
	}
}

// dispatch routes one inbound frame (§2.2): error replies and replies to their waiter, pushes
// to the SDK.
func (l *link) dispatch(frame []byte) {
	env, err := message.Decode(frame)
	if err != nil {
		l.sdk.log.Warn("serversdk: dropping a malformed frame", "err", err)
		return
	}
	if env.StatusCode == message.StatusOK && l.sdk.push(env.Action, frame) {
		return
	}
	l.mu.Lock()
	ch := l.pending[env.RequestID]
	delete(l.pending, env.RequestID)
	l.mu.Unlock()
	if ch != nil {
		ch <- frame
	}
}

// send writes frame to the current socket, waiting for a reconnect while there is none.
func (l *link) send(ctx context.Context, frame []byte) error {
	for {
		l.mu.Lock()
		ws, up, closed := l.ws, l.up, l.closed
		l.mu.Unlock()
		if closed {
			return ErrClosed
		}
		if ws == nil {
			select {
			case <-up:
				continue
			case <-ctx.Done():
				return ErrTimeout
			}
		}
		err := ws.Write(ctx, websocket.MessageText, frame)
		if err == nil || ctx.Err() != nil {
			return err
		}
		l.lost(ws, err)
	}
}

// call sends a request and waits for its reply, decoding the reply's payload into out (when
// not nil). An error reply becomes an *Error.
func (l *link) call(ctx context.Context, req message.Message, timeout time.Duration, out any) error {
	id := uuid.NewString()
	frame, err := message.Encode(message.Envelope{Action: req.Action(), RequestID: id}, req)
	if err != nil {
		return err
	}
	ch := make(chan []byte, 1)
	l.mu.Lock()
	l.pending[id] = ch
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		delete(l.pending, id)
		l.mu.Unlock()
	}()
	ctx, cancel := clock.WithTimeout(ctx, l.sdk.opt.Clock, timeout)
	defer cancel()
	if err := l.send(ctx, frame); err != nil {
		return timeoutOr(err, ctx)
	}
	select {
	case reply := <-ch:
		return decodeReply(req.Action(), reply, out)
	case <-ctx.Done():
		return ErrTimeout
	}
}

func timeoutOr(err error, ctx context.Context) error {
	if ctx.Err() != nil && !errors.Is(err, ErrClosed) {
		return ErrTimeout
	}
	return err
}

func decodeReply(action string, reply []byte, out any) error {
	env, err := message.Decode(reply)
	if err != nil {
		return err
	}
	if env.StatusCode != message.StatusOK {
		return &Error{Action: action, StatusCode: env.StatusCode, Message: env.ErrorMessage}
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(reply, out)
}
