package console_test

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/chromedp"

	"github.com/hoist-gg/hoist/server"
	"github.com/hoist-gg/hoist/serversdk"
)

const (
	testKeyID  = "AKIAHOISTCONSOLE0001"
	testSecret = "hoist-console-test-secret-0123456789abcd"
	chromium   = "/usr/bin/chromium"
	location   = "custom-console-lab"
)

// startServer runs a hoist server in-process on a free loopback port, on the embedded store.
func startServer(t *testing.T) *server.Server { return startServerOn(t, "") }

// startServerOn runs a hoist server on the store dsn ("" for the embedded one).
func startServerOn(t *testing.T, dsn string) *server.Server {
	t.Helper()
	srv, err := server.New(context.Background(), server.Config{Listen: "127.0.0.1:0", DataDir: t.TempDir(), Store: dsn,
		AccessKeyID: testKeyID, SecretAccessKey: testSecret, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return srv
}

// quietLogger discards the server's log.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// client is the real aws-sdk-go-v2 GameLift client pointed at srv.
func client(srv *server.Server) *gamelift.Client {
	return gamelift.New(gamelift.Options{Region: "us-west-2", BaseEndpoint: aws.String(srv.URL()),
		Credentials: credentials.NewStaticCredentialsProvider(testKeyID, testSecret, ""), RetryMaxAttempts: 1})
}

// browser starts Debian's Chromium headless with a fresh profile and nothing that reaches
// the network on its own, or skips the test when Chromium is missing and not required.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("HOIST_REQUIRE_BROWSER") != "" {
			t.Fatalf("HOIST_REQUIRE_BROWSER is set but %s is missing: %v", chromium, err)
		}
		t.Skipf("%s is not installed (apt-get install chromium); set HOIST_REQUIRE_BROWSER=1 to fail instead", chromium)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true), chromedp.Flag("disable-extensions", true),
		chromedp.WindowSize(1280, 860),
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	return ctx
}

// page drives one browser tab and saves its screenshots.
type page struct {
	t    *testing.T
	ctx  context.Context
	shot string // directory screenshots go to
}

func newPage(t *testing.T) *page {
	dir := os.Getenv("HOIST_CONSOLE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &page{t: t, ctx: browser(t), shot: dir}
}

// run runs actions, failing the test after d.
func (p *page) run(what string, d time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until selector is visible.
func (p *page) waitFor(what, selector string) {
	p.t.Helper()
	p.waitForLong(what, selector, 20*time.Second)
}

// waitForLong waits until selector is visible, for at most d.
func (p *page) waitForLong(what, selector string, d time.Duration) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, d)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.WaitVisible(selector)); err != nil {
		p.screenshot("failed")
		p.t.Fatalf("%s (%s): %v", what, selector, err)
	}
}

// screenshot saves the viewport as name.png.
func (p *page) screenshot(name string) { p.save(name, chromedp.CaptureScreenshot()) }

// screenshotWhole saves the whole page as name.png.
func (p *page) screenshotWhole(name string) { p.save(name, chromedp.FullScreenshot(100)) }

func (p *page) save(name string, shot chromedp.Action[[]byte]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, shot)
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	path := filepath.Join(p.shot, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	p.t.Logf("screenshot: %s", path)
}

// goTo changes the route inside the application, without loading the page again.
func (p *page) goTo(route string) {
	p.t.Helper()
	p.eval("route "+route, `location.hash = `+jsString("#"+route))
}

// notReloaded checks that the document loaded at login is still the one shown.
func (p *page) notReloaded() {
	p.t.Helper()
	if marker := p.eval("read the load marker", `window.hoistTestMarker || ""`); marker != "loaded-once" {
		p.t.Fatalf("the page was reloaded (marker %q)", marker)
	}
}

// eval runs a script and returns its string value.
func (p *page) eval(what, script string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[string](script))
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return v
}

func jsString(s string) string {
	return "decodeURIComponent(\"" + url.PathEscape(s) + "\")"
}

// sdkProcess is a server process speaking the Server SDK over the real websocket; it
// activates the game session it is given only when told to.
type sdkProcess struct {
	sdk     *serversdk.SDK
	started chan serversdk.GameSession
}

func startProcess(t *testing.T, srv *server.Server, gl *gamelift.Client, fleet string) *sdkProcess {
	t.Helper()
	ctx := context.Background()
	if _, err := gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(fleet),
		ComputeName: aws.String("console-host"), IpAddress: aws.String("127.0.0.1"), Location: aws.String(location)}); err != nil {
		t.Fatalf("RegisterCompute: %v", err)
	}
	tok, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleet), ComputeName: aws.String("console-host")})
	if err != nil {
		t.Fatalf("GetComputeAuthToken: %v", err)
	}
	p := &sdkProcess{started: make(chan serversdk.GameSession, 1)}
	p.sdk = serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Getenv: func(string) string { return "" }})
	if err := p.sdk.InitSDK(ctx, serversdk.ServerParameters{WebSocketURL: srv.SDKEndpoint(), ProcessID: "console-p1",
		HostID: "console-host", FleetID: fleet, AuthToken: aws.ToString(tok.AuthToken)}); err != nil {
		t.Fatalf("InitSDK: %v", err)
	}
	if err := p.sdk.ProcessReady(ctx, serversdk.ProcessParameters{Port: 27015,
		OnStartGameSession: func(gs serversdk.GameSession) { p.started <- gs },
		OnProcessTerminate: func() { p.sdk.ProcessEnding(context.Background()) }}); err != nil {
		t.Fatalf("ProcessReady: %v", err)
	}
	t.Cleanup(func() { p.sdk.Destroy() })
	return p
}

// TestConsoleInABrowser logs in with the key pair in headless Chromium, watches a fleet
// created through the API appear on the fleets page, and watches a game session go from
// ACTIVATING to ACTIVE when its server process activates it, all without reloading the page.
func TestConsoleInABrowser(t *testing.T) {
	srv := startServer(t)
	gl := client(srv)
	p := newPage(t)

	p.run("open the console", 20*time.Second, chromedp.Navigate(srv.URL()+"/console"))
	p.waitFor("the login form", "#access-key-id")
	p.run("fill the login form", 10*time.Second,
		chromedp.SendKeys("#access-key-id", testKeyID),
		chromedp.SendKeys("#secret-access-key", "wrong-secret"),
		chromedp.Click(`#login button[type="submit"]`))
	p.waitFor("the wrong secret refused", "#login-error:not(:empty)")
	p.screenshot("login")
	p.run("log in", 10*time.Second,
		chromedp.SetValue("#secret-access-key", testSecret),
		chromedp.Click(`#login button[type="submit"]`))
	p.waitFor("the fleets page, live", "#live.on")
	p.waitFor("the empty fleets list", "#page-body .card")
	p.eval("mark the document", `window.hoistTestMarker = "loaded-once"`)

	fleet := createFleet(t, gl)
	p.waitFor("the new fleet on the fleets page", `tr[data-id="`+fleet+`"]`)
	p.notReloaded()
	p.screenshot("fleets")

	proc := startProcess(t, srv, gl, fleet)
	p.goTo("/fleets/" + fleet)
	p.waitFor("the compute on the fleet page", `tr[data-id="console-host"]`)
	p.waitFor("the server process, ACTIVE and healthy", `tr[data-id="console-p1"] .status-ACTIVE`)
	p.waitFor("the location's capacity", `tr[data-id="`+location+`"]`)
	p.screenshotWhole("fleet")

	gs := createSession(t, gl, fleet)
	p.goTo("/game-sessions/" + url.PathEscape(gs))
	p.waitFor("the session ACTIVATING", `[data-field="Status"] .status-ACTIVATING`)
	p.screenshot("game-session-activating")
	select {
	case <-proc.started:
	case <-time.After(20 * time.Second):
		t.Fatal("the process got no CreateGameSession push")
	}
	if err := proc.sdk.ActivateGameSession(context.Background()); err != nil {
		t.Fatalf("ActivateGameSession: %v", err)
	}
	p.waitFor("the session ACTIVE without a reload", `[data-field="Status"] .status-ACTIVE`)
	p.notReloaded()
	if _, err := gl.CreatePlayerSession(context.Background(), &gamelift.CreatePlayerSessionInput{GameSessionId: aws.String(gs),
		PlayerId: aws.String("player-1")}); err != nil {
		t.Fatalf("CreatePlayerSession: %v", err)
	}
	p.waitFor("the player session, live", `tr[data-id^="psess-"]`)
	p.screenshot("game-session-active")
	p.goTo("/fleets/" + fleet)
	p.waitFor("the process hosting the session", `tr[data-id="console-p1"] a[href*="gsess-"]`)

	p.goTo("/game-sessions/" + url.PathEscape(gs))
	p.waitFor("the Terminate button", `#terminate`)
	p.run("force-terminate the session", 10*time.Second, chromedp.Click(`#terminate`), chromedp.WaitVisible(`#terminate-force`),
		chromedp.Click(`#terminate-force`))
	p.waitFor("the session TERMINATED", `[data-field="Status"] .status-TERMINATED`)
	p.notReloaded()
}

func createFleet(t *testing.T, gl *gamelift.Client) string {
	t.Helper()
	ctx := context.Background()
	if _, err := gl.CreateLocation(ctx, &gamelift.CreateLocationInput{LocationName: aws.String(location)}); err != nil {
		t.Fatalf("CreateLocation: %v", err)
	}
	f, err := gl.CreateFleet(ctx, &gamelift.CreateFleetInput{Name: aws.String("console-fleet"), ComputeType: types.ComputeTypeAnywhere,
		Locations: []types.LocationConfiguration{{Location: aws.String(location)}}})
	if err != nil {
		t.Fatalf("CreateFleet: %v", err)
	}
	return aws.ToString(f.FleetAttributes.FleetId)
}

func createSession(t *testing.T, gl *gamelift.Client, fleet string) string {
	t.Helper()
	out, err := gl.CreateGameSession(context.Background(), &gamelift.CreateGameSessionInput{FleetId: aws.String(fleet),
		Location: aws.String(location), MaximumPlayerSessionCount: aws.Int32(4), Name: aws.String("console-match"),
		GameProperties: []types.GameProperty{{Key: aws.String("mode"), Value: aws.String("capture-the-flag")}}})
	if err != nil {
		t.Fatalf("CreateGameSession: %v", err)
	}
	if out.GameSession.Status != types.GameSessionStatusActivating {
		t.Fatalf("CreateGameSession returned status %s, want ACTIVATING", out.GameSession.Status)
	}
	return aws.ToString(out.GameSession.GameSessionId)
}
