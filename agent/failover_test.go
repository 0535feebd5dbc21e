package agent

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestParseServers(t *testing.T) {
	got := ParseServers(" http://a:1, ,http://b:2,http://c:3 ")
	if want := []string{"http://a:1", "http://b:2", "http://c:3"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ParseServers = %q, want %q", got, want)
	}
}

func TestRotationStartsWithWhatWorked(t *testing.T) {
	r := rotation{n: 3}
	if got := r.order(); !reflect.DeepEqual(got, []int{0, 1, 2}) {
		t.Errorf("first order %v", got)
	}
	r.worked(2)
	if got := r.order(); !reflect.DeepEqual(got, []int{2, 0, 1}) {
		t.Errorf("after 2 worked: %v", got)
	}
}

func TestUnanswered(t *testing.T) {
	ctx := context.Background()
	if !unanswered(ctx, errors.New("dial tcp: connection refused")) || unanswered(ctx, nil) {
		t.Error("a transport error is unanswered; nil is not")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if unanswered(cancelled, errors.New("context canceled")) {
		t.Error("a cancelled call is not unanswered")
	}
}

// tagServer is an upstream that answers each line with its tag and the line.
type tagServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newTagServer(t *testing.T, tag string) *tagServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &tagServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, c)
			s.mu.Unlock()
			go func() {
				in := bufio.NewScanner(c)
				for in.Scan() {
					if line := strings.TrimSpace(in.Text()); line != "" {
						fmt.Fprintf(c, "%s %s\n", tag, line)
					}
				}
			}()
		}
	}()
	t.Cleanup(s.kill)
	return s
}

func (s *tagServer) url() string { return "ws://" + s.ln.Addr().String() + "/" }

// kill stops listening and drops every connection, as a node that dies.
func (s *tagServer) kill() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range s.conns {
		c.Close()
	}
}

func ask(t *testing.T, addr, line string) (string, net.Conn) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "%s\r\n\r\n", line) // the proxy waits for a request head
	in := bufio.NewScanner(c)
	in.Scan()
	return in.Text(), c
}

// hangUp accepts connections and closes them at once, as a node being killed can.
func hangUp(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return "ws://" + ln.Addr().String() + "/"
}

// TestSDKProxyMovesToALiveNode: connections go to the first upstream that answers — past a
// dead one and one that hangs up before answering, with the request sent again; when that
// upstream dies the open connection drops, and the next one goes to the next upstream.
func TestSDKProxyMovesToALiveNode(t *testing.T) {
	dead := newTagServer(t, "dead")
	dead.kill()
	a, b := newTagServer(t, "a"), newTagServer(t, "b")
	hangs := hangUp(t)
	p, err := startSDKProxy("127.0.0.1:0", func() []string { return []string{dead.url(), hangs, a.url(), b.url()} }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	addr := p.ln.Addr().String()
	got, c := ask(t, addr, "hello")
	if got != "a hello" {
		t.Fatalf("first connection answered %q, want node a", got)
	}
	a.kill()
	if _, err := io.ReadAll(c); err != nil && !errors.Is(err, net.ErrClosed) {
		t.Logf("the dropped connection ended with %v", err)
	}
	if got, _ := ask(t, addr, "again"); got != "b again" {
		t.Errorf("after node a died: %q, want node b", got)
	}
}

func TestLinkEndpointsFallBackToEveryServer(t *testing.T) {
	a := &Agent{cfg: Config{Servers: []string{"http://h1:9080", "https://h2:9443", "http://h1:9080"}}}
	a.reg.AgentEndpoint = "ws://registered:9080/agent"
	want := []string{"ws://registered:9080/agent", "ws://h1:9080/agent", "wss://h2:9443/agent"}
	if got := a.linkEndpoints(); !reflect.DeepEqual(got, want) {
		t.Errorf("linkEndpoints = %q, want %q", got, want)
	}
	a.cfg.AgentEndpoint = "wss://fixed/agent"
	a.reg.AgentEndpoint = a.cfg.AgentEndpoint
	if got := a.linkEndpoints(); !reflect.DeepEqual(got, []string{"wss://fixed/agent"}) {
		t.Errorf("with --agent-endpoint: %q", got)
	}
}
