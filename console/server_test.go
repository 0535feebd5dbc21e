package console_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// consoleLogin logs in to srv's console and returns the session cookie.
func consoleLogin(t *testing.T, srv *server.Server) *http.Cookie {
	t.Helper()
	body := `{"AccessKeyId":"` + testKeyID + `","SecretAccessKey":"` + testSecret + `"}`
	req, _ := http.NewRequest("POST", srv.URL()+"/console/session", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Hoist-Console", "1")
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 || len(res.Cookies()) != 1 {
		t.Fatalf("console login: %v %v", err, res)
	}
	res.Body.Close()
	return res.Cookies()[0]
}

// answers opens srv's event stream for queries and delivers each answer's Key and Body.
func answers(t *testing.T, srv *server.Server, ck *http.Cookie, queries string) <-chan [2]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL()+"/console/events?q="+url.QueryEscape(queries), nil)
	req.AddCookie(ck)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("opening the event stream: %v %v", err, res)
	}
	out := make(chan [2]string, 16)
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev struct {
				Key  string
				Body json.RawMessage
			}
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && json.Unmarshal([]byte(data), &ev) == nil && ev.Key != "" {
				out <- [2]string{ev.Key, string(ev.Body)}
			}
		}
	}()
	return out
}

// awaitAnswer waits for an answer of key containing want and returns how long it took.
func awaitAnswer(t *testing.T, ch <-chan [2]string, key, want string) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case a := <-ch:
			if a[0] == key && strings.Contains(a[1], want) {
				return time.Since(start)
			}
		case <-deadline:
			t.Fatalf("no answer of %s with %q within 15s", key, want)
		}
	}
}

// TestChangesThroughAnotherNodeShow runs two server nodes on one PostgreSQL database: a
// console session cookie from one works on the other, and a console stream on one node shows
// a fleet and a location created through the other.
func TestChangesThroughAnotherNodeShow(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := startServerOn(t, dsn), startServerOn(t, dsn)
	ck := consoleLogin(t, a)
	req, _ := http.NewRequest("GET", b.URL()+"/console/session", nil)
	req.AddCookie(ck)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
		t.Fatalf("node A's cookie on node B: %v %v", err, res)
	}
	ch := answers(t, a, ck, `{"fleets":{"Op":"DescribeFleetAttributes"},"locations":{"Op":"ListLocations","Input":{"Filters":["CUSTOM"]}}}`)
	awaitAnswer(t, ch, "fleets", `"FleetAttributes":[]`)
	fleet := createFleet(t, client(b)) // also creates the location
	t.Logf("a fleet created through node B showed on node A's stream after %v", awaitAnswer(t, ch, "fleets", fleet))
	awaitAnswer(t, ch, "locations", location)
	if _, err := client(b).CreateLocation(context.Background(), &gamelift.CreateLocationInput{LocationName: aws.String("custom-second")}); err != nil {
		t.Fatal(err)
	}
	t.Logf("a location created through node B showed on node A's stream after %v", awaitAnswer(t, ch, "locations", "custom-second"))
}

// TestShutdownEndsStreams checks that a server with an open console stream shuts down
// without waiting for the stream.
func TestShutdownEndsStreams(t *testing.T) {
	srv, err := server.New(context.Background(), server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(),
		AccessKeyID: testKeyID, SecretAccessKey: testSecret, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	ch := answers(t, srv, consoleLogin(t, srv), `{"locations":{"Op":"ListLocations"}}`)
	awaitAnswer(t, ch, "locations", "us-west-2")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with an open stream: %v", err)
	}
}

// TestAnyCredentialsOpenTheConsole checks that a server that verifies no signatures asks for
// no console login either, and that one that does refuses the console without a session.
func TestAnyCredentialsOpenTheConsole(t *testing.T) {
	open, err := server.New(context.Background(), server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(),
		AllowAnyCredentials: true, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	go open.Serve()
	t.Cleanup(func() { open.Shutdown(context.Background()) })
	for _, c := range []struct {
		srv  *server.Server
		want int
	}{{open, 200}, {startServer(t), 401}} {
		res, err := http.Get(c.srv.URL() + "/console/session")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != c.want {
			t.Errorf("GET /console/session without a cookie: %d, want %d", res.StatusCode, c.want)
		}
	}
}
