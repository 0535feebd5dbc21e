package console

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/httpapi"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store/sqlite"
)

const (
	keyID  = "AKIACONSOLEUNIT00001"
	secret = "console-unit-secret-0123456789abcdefghij"
)

// rig is a console over a real domain on the embedded store, served by httptest.
type rig struct {
	t       *testing.T
	clk     *clock.Fake
	svc     *gamelift.Service
	changes *Changes
	c       *Console
	srv     *httptest.Server
}

func newRig(t *testing.T, cfg Config) *rig {
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &rig{t: t, clk: clock.NewFake(time.Now()), changes: NewChanges()}
	r.svc = gamelift.New(gamelift.Config{Store: st, Region: "us-west-2", OnCommit: r.changes.Notify})
	cfg.API = httpapi.New(httpapi.Config{Handlers: r.svc.Handlers()})
	cfg.Clock = r.clk
	if cfg.Changes == nil {
		cfg.Changes = r.changes
	}
	r.c = New(cfg)
	r.srv = httptest.NewServer(r.c)
	t.Cleanup(r.srv.Close)
	return r
}

func withKeys() Config {
	return Config{Keys: func(id string) (string, bool) { return secret, id == keyID }}
}

// do sends a console request; header adds the CSRF header.
func (r *rig) do(method, path, body string, cookie *http.Cookie, header bool) (*http.Response, string) {
	r.t.Helper()
	req, _ := http.NewRequest(method, r.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if header {
		req.Header.Set(CSRFHeader, "1")
	}
	if cookie != nil {
		req.AddCookie(cookie)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func (r *rig) login() *http.Cookie {
	r.t.Helper()
	res, body := r.do("POST", "/console/session", `{"AccessKeyId":"`+keyID+`","SecretAccessKey":"`+secret+`"}`, nil, true)
	if res.StatusCode != 200 || len(res.Cookies()) != 1 {
		r.t.Fatalf("login: %d %s", res.StatusCode, body)
	}
	return res.Cookies()[0]
}

func TestTokens(t *testing.T) {
	r := newRig(t, withKeys())
	exp := r.clk.Now().Add(time.Hour)
	tok := newToken(secret, keyID, exp)
	if id, ok := r.c.checkToken(tok); !ok || id != keyID {
		t.Fatalf("a fresh token is refused: %q %v", id, ok)
	}
	for name, bad := range map[string]string{
		"another secret":  newToken("another-secret", keyID, exp),
		"unknown key":     newToken(secret, "AKIAUNKNOWN", exp),
		"longer lifetime": strings.Replace(tok, ".", ".9", 1),
		"truncated":       tok[:len(tok)-2],
		"empty":           "",
	} {
		if _, ok := r.c.checkToken(bad); ok {
			t.Errorf("%s: token accepted", name)
		}
	}
	r.clk.Advance(time.Hour)
	if _, ok := r.c.checkToken(tok); ok {
		t.Error("an expired token is accepted")
	}
}

func TestLoginCookieAndCSRF(t *testing.T) {
	r := newRig(t, withKeys())
	if res, _ := r.do("POST", "/console/session", `{"AccessKeyId":"`+keyID+`","SecretAccessKey":"`+secret+`"}`, nil, false); res.StatusCode != 403 {
		t.Errorf("login without %s: %d, want 403", CSRFHeader, res.StatusCode)
	}
	if res, _ := r.do("POST", "/console/session", `{"AccessKeyId":"`+keyID+`","SecretAccessKey":"wrong"}`, nil, true); res.StatusCode != 401 || len(res.Cookies()) != 0 {
		t.Errorf("login with a wrong secret: %d %v", res.StatusCode, res.Cookies())
	}
	ck := r.login()
	if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != Path || ck.Secure {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=%s, not Secure over http", ck, Path)
	}
	if res, body := r.do("GET", "/console/session", "", ck, false); res.StatusCode != 200 || !strings.Contains(body, keyID) {
		t.Errorf("session with the cookie: %d %s", res.StatusCode, body)
	}
	if res, _ := r.do("GET", "/console/session", "", nil, false); res.StatusCode != 401 {
		t.Errorf("session without a cookie: %d, want 401", res.StatusCode)
	}
	res, _ := r.do("DELETE", "/console/session", "", ck, true)
	if res.StatusCode != 204 || len(res.Cookies()) != 1 || res.Cookies()[0].MaxAge >= 0 {
		t.Errorf("logout: %d %v", res.StatusCode, res.Cookies())
	}
}

func TestCookieIsSecureOverTLS(t *testing.T) {
	c := New(Config{API: http.NotFoundHandler(), Keys: withKeys().Keys})
	req := httptest.NewRequest("POST", "/console/session", strings.NewReader(`{"AccessKeyId":"`+keyID+`","SecretAccessKey":"`+secret+`"}`))
	req.Header.Set(CSRFHeader, "1")
	req.TLS = &tls.ConnectionState{}
	w := httptest.NewRecorder()
	c.ServeHTTP(w, req)
	if cks := w.Result().Cookies(); len(cks) != 1 || !cks[0].Secure {
		t.Errorf("cookies over TLS: %v, want one Secure cookie", cks)
	}
}

func TestAPIAnswersReadsAndButtonsOnly(t *testing.T) {
	r := newRig(t, withKeys())
	ck := r.login()
	if _, err := r.svc.CreateLocation(context.Background(), &api.CreateLocationInput{LocationName: api.String("custom-unit")}); err != nil {
		t.Fatal(err)
	}
	res, body := r.do("POST", "/console/api/ListLocations", `{"Filters":["CUSTOM"]}`, ck, true)
	if res.StatusCode != 200 || !strings.Contains(body, `"LocationName":"custom-unit"`) || strings.Contains(body, `"us-west-2"`) {
		t.Errorf("ListLocations: %d %s", res.StatusCode, body)
	}
	cases := []struct {
		op, body string
		cookie   *http.Cookie
		header   bool
		want     int
	}{
		{"CreateLocation", `{"LocationName":"custom-x"}`, ck, true, 403},
		{"UpdateFleetCapacity", `{"FleetId":"fleet-missing","DesiredInstances":1}`, ck, true, 400}, // NotFoundException
		{"UpdateFleetCapacity", `{"FleetId":"fleet-missing","DesiredInstances":1}`, ck, false, 403},
		{"GetComputeAccess", `{}`, ck, true, 403},
		{"Hoist.InjectFault", `{}`, ck, true, 403},
		{"ListLocations", `{}`, nil, true, 401},
		{"ListLocations", `{}`, ck, false, 403},
		{"DescribeFleetEvents", `{"FleetId":"fleet-missing"}`, ck, true, 400},
	}
	for _, c := range cases {
		if res, body := r.do("POST", "/console/api/"+c.op, c.body, c.cookie, c.header); res.StatusCode != c.want {
			t.Errorf("%s (cookie %v, header %v): %d %s, want %d", c.op, c.cookie != nil, c.header, res.StatusCode, body, c.want)
		}
	}
}

func TestOpenConsoleNeedsNoLogin(t *testing.T) {
	r := newRig(t, Config{})
	if res, body := r.do("GET", "/console/session", "", nil, false); res.StatusCode != 200 || !strings.Contains(body, `"Open":true`) {
		t.Errorf("session of an open console: %d %s", res.StatusCode, body)
	}
	if res, _ := r.do("POST", "/console/api/ListLocations", `{}`, nil, true); res.StatusCode != 200 {
		t.Errorf("ListLocations on an open console: %d", res.StatusCode)
	}
}

// events reads server-sent events.
type events struct {
	t  *testing.T
	sc *bufio.Scanner
}

func (r *rig) open(queries string, cookie *http.Cookie) *events {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", r.srv.URL+"/console/events?q="+url.QueryEscape(queries), nil)
	req.AddCookie(cookie)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" {
		r.t.Fatalf("opening the stream: %v %v", err, res)
	}
	r.t.Cleanup(func() { res.Body.Close() })
	return &events{t: r.t, sc: bufio.NewScanner(res.Body)}
}

// next returns the next event's name and data.
func (e *events) next() (string, string) {
	e.t.Helper()
	var name, data string
	for e.sc.Scan() {
		line := e.sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && name != "":
			return name, data
		}
	}
	e.t.Fatalf("the stream ended: %v", e.sc.Err())
	return "", ""
}

// answer reads one answer and the synced event after it.
func (e *events) answer() event {
	e.t.Helper()
	name, data := e.next()
	var ev event
	if err := json.Unmarshal([]byte(data), &ev); name != "answer" || err != nil {
		e.t.Fatalf("got %s %s, want an answer", name, data)
	}
	if name, _ := e.next(); name != "synced" {
		e.t.Fatalf("got %s after an answer, want synced", name)
	}
	return ev
}

func TestEventsSendChangesOnly(t *testing.T) {
	r := newRig(t, Config{Keys: withKeys().Keys, Sweep: time.Hour}) // only Changes wake the stream
	ck := r.login()
	ev := r.open(`{"aliases":{"Op":"ListAliases","Input":{"Limit":10}}}`, ck)
	if a := ev.answer(); a.Key != "aliases" || a.Status != 200 || string(a.Body) != `{"Aliases":[]}` {
		t.Fatalf("first answer %+v", a)
	}
	r.changes.Notify() // nothing changed: nothing is sent
	ctx := context.Background()
	terminal := api.RoutingStrategyTypeTerminal
	term := &api.RoutingStrategy{Type: &terminal, Message: api.String("gone")}
	if _, err := r.svc.CreateAlias(ctx, &api.CreateAliasInput{Name: api.String("first"), RoutingStrategy: term}); err != nil {
		t.Fatal(err)
	}
	if a := ev.answer(); !strings.Contains(string(a.Body), `"Name":"first"`) {
		t.Fatalf("after CreateAlias: %s", a.Body)
	}
	if _, err := r.svc.CreateAlias(ctx, &api.CreateAliasInput{Name: api.String("second"), RoutingStrategy: term}); err != nil {
		t.Fatal(err)
	}
	if a := ev.answer(); !strings.Contains(string(a.Body), `"Name":"second"`) {
		t.Fatalf("after the second CreateAlias: %s", a.Body)
	}
}

func TestEventsSweepWithoutAnnouncements(t *testing.T) {
	r := newRig(t, Config{Keys: withKeys().Keys, Sweep: 20 * time.Millisecond})
	r.c.cfg.Changes = nil // a change made elsewhere: no announcement reaches this stream
	ck := r.login()
	ev := r.open(`{"locs":{"Op":"ListLocations","Input":{"Filters":["CUSTOM"]}}}`, ck)
	ev.answer()
	if _, err := r.svc.CreateLocation(context.Background(), &api.CreateLocationInput{LocationName: api.String("custom-swept")}); err != nil {
		t.Fatal(err)
	}
	if a := ev.answer(); !strings.Contains(string(a.Body), "custom-swept") {
		t.Fatalf("after the sweep: %s", a.Body)
	}
}

func TestEventsRefuseBadQueries(t *testing.T) {
	r := newRig(t, withKeys())
	ck := r.login()
	for _, q := range []string{`{}`, `[]`, `{"x":{"Op":"CreateAlias"}}`, `{"x":{"Op":"GetInstanceAccess"}}`, `{"x":{"Op":"TerminateGameSession"}}`} {
		req, _ := http.NewRequest("GET", r.srv.URL+"/console/events?q="+url.QueryEscape(q), nil)
		req.AddCookie(ck)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 400 {
			t.Errorf("queries %s: %d, want 400", q, res.StatusCode)
		}
	}
	if res, _ := r.do("GET", "/console/events?q="+url.QueryEscape(`{"x":{"Op":"ListAliases"}}`), "", nil, false); res.StatusCode != 401 {
		t.Errorf("a stream without a session: %d, want 401", res.StatusCode)
	}
}

func TestAssets(t *testing.T) {
	r := newRig(t, withKeys())
	res, body := r.do("GET", "/console", "", nil, false)
	if res.StatusCode != 200 || !strings.Contains(body, `src="/console/static/app.js"`) ||
		!strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'self'") {
		t.Errorf("/console: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := r.do("GET", "/console/static/app.js", "", nil, false); res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Type"), "javascript") {
		t.Errorf("app.js: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if res, _ := r.do("GET", "/console/static/missing.js", "", nil, false); res.StatusCode != 404 {
		t.Errorf("a missing file: %d, want 404", res.StatusCode)
	}
}

// TestModulesImportEmbeddedFiles checks that every module the application imports is
// embedded and that no asset is fetched from another origin.
func TestModulesImportEmbeddedFiles(t *testing.T) {
	importRE := regexp.MustCompile(`(?m)^import .* from '\./([^']+)';$`)
	files, _ := fs.Sub(static, "static")
	names, _ := fs.Glob(files, "*")
	for _, name := range names {
		b, _ := fs.ReadFile(files, name)
		if regexp.MustCompile(`https?://`).Match(b) {
			t.Errorf("%s refers to another origin", name)
		}
		for _, m := range importRE.FindAllSubmatch(b, -1) {
			if _, err := fs.Stat(files, string(m[1])); err != nil {
				t.Errorf("%s imports %s, which is not embedded", name, m[1])
			}
		}
	}
}
