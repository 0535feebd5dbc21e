package agent

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"sync"
	"time"
)

// sdkProxy is the agent's forwarder for its server processes' SDK websockets: processes get a
// loopback URL as GAMELIFT_SDK_WEBSOCKET_URL, and each connection they open is forwarded, byte
// for byte, to a live server node — the registration's SDK endpoint first, then the
// control-plane URLs in turn. When the node a connection goes to dies, the process's
// connection drops; the Server SDKs reconnect to the same URL at once (server-sdk-protocol.md
// §1.6), and the new connection goes to the next node that answers. The handshake, the
// process's credentials and every frame pass through unchanged; a wss:// (or https://)
// upstream is dialled with TLS, trusting the system's roots (SSL_CERT_FILE included).
type sdkProxy struct {
	ln        net.Listener
	upstreams func() []string // candidate upstream URLs, best first
	log       *slog.Logger

	mu    sync.Mutex
	last  string // the upstream that accepted the last connection
	conns map[net.Conn]bool
}

// proxyDialTimeout bounds one upstream dial, so a dead node's address is passed quickly;
// proxyHandshakeTimeout bounds reading the process's handshake request and an upstream's
// first answer.
const (
	proxyDialTimeout      = 2 * time.Second
	proxyHandshakeTimeout = 10 * time.Second
)

// startSDKProxy listens on addr (host:port; port 0 picks one) and forwards until Close.
func startSDKProxy(addr string, upstreams func() []string, log *slog.Logger) (*sdkProxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("SDK proxy: %w", err)
	}
	p := &sdkProxy{ln: ln, upstreams: upstreams, log: log, conns: map[net.Conn]bool{}}
	go p.accept()
	return p, nil
}

// URL is the websocket URL processes are given.
func (p *sdkProxy) URL() string { return "ws://" + p.ln.Addr().String() }

// Close stops listening and drops every forwarded connection.
func (p *sdkProxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *sdkProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

// forward reads the process's handshake request, hands it to the first upstream that answers
// it, and then copies both ways until either side ends.
func (p *sdkProxy) forward(c net.Conn) {
	head, err := readRequestHead(c)
	if err != nil {
		c.Close()
		return
	}
	up, first, err := p.handshake(head)
	if err != nil {
		p.log.Warn("SDK proxy: no server node answered", "err", err)
		c.Close()
		return
	}
	if _, err := c.Write(first); err != nil || !p.track(c, up) {
		c.Close()
		up.Close()
		return
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	c.Close()
	up.Close()
	<-done
	p.untrack(c, up)
}

// maxRequestHead bounds the handshake request the proxy holds before an upstream answers.
const maxRequestHead = 64 << 10

// readRequestHead reads the HTTP request head (through the blank line) of the websocket
// handshake; it is sent again to the next node when one accepts the connection but dies
// before answering (a node being killed can accept for a moment).
func readRequestHead(c net.Conn) ([]byte, error) {
	c.SetReadDeadline(time.Now().Add(proxyHandshakeTimeout))
	defer c.SetReadDeadline(time.Time{})
	var head []byte
	buf := make([]byte, 4096)
	for !bytes.Contains(head, []byte("\r\n\r\n")) {
		if len(head) > maxRequestHead {
			return nil, errors.New("SDK proxy: request head too large")
		}
		n, err := c.Read(buf)
		head = append(head, buf[:n]...)
		if err != nil {
			return nil, err
		}
	}
	return head, nil
}

// handshake sends head to the upstreams in turn until one answers with at least one byte; it
// returns that connection and what it answered so far.
func (p *sdkProxy) handshake(head []byte) (net.Conn, []byte, error) {
	var errs []error
	for _, u := range p.candidates() {
		up, err := dialWebsocketHost(u)
		if err == nil {
			var first []byte
			if first, err = exchange(up, head); err == nil {
				p.mu.Lock()
				p.last = u
				p.mu.Unlock()
				return up, first, nil
			}
			up.Close()
		}
		errs = append(errs, fmt.Errorf("%s: %w", u, err))
	}
	return nil, nil, errors.Join(errs...)
}

// exchange writes head to up and reads the first bytes of its answer.
func exchange(up net.Conn, head []byte) ([]byte, error) {
	up.SetDeadline(time.Now().Add(proxyHandshakeTimeout))
	defer up.SetDeadline(time.Time{})
	if _, err := up.Write(head); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	n, err := up.Read(buf)
	if n > 0 {
		return buf[:n], nil
	}
	return nil, cmp.Or(err, io.ErrUnexpectedEOF)
}

// track records a forwarded pair so that Close drops it; false when the proxy is closed.
func (p *sdkProxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		c.Close()
		up.Close()
		return false
	}
	p.conns[c], p.conns[up] = true, true
	return true
}

func (p *sdkProxy) untrack(c, up net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.conns, c)
	delete(p.conns, up)
}

// candidates lists the upstreams to try: the one that worked last, then the others in
// order.
func (p *sdkProxy) candidates() []string {
	p.mu.Lock()
	last := p.last
	p.mu.Unlock()
	var out []string
	for _, u := range append([]string{last}, p.upstreams()...) {
		if u != "" && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	return out
}

// dialWebsocketHost opens a connection to the host of a ws, wss, http or https URL, with TLS
// for wss and https.
func dialWebsocketHost(raw string) (net.Conn, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("upstream %q is not a URL", raw)
	}
	secure := u.Scheme == "wss" || u.Scheme == "https"
	port := u.Port()
	if port == "" {
		port = map[bool]string{false: "80", true: "443"}[secure]
	}
	ctx, cancel := context.WithTimeout(context.Background(), proxyDialTimeout)
	defer cancel()
	d := net.Dialer{}
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil || !secure {
		return c, err
	}
	tc := tls.Client(c, &tls.Config{ServerName: u.Hostname(), MinVersion: tls.VersionTLS12})
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}
