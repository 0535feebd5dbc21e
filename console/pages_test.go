package console_test

import (
	"context"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"
	"github.com/chromedp/chromedp"

	"github.com/hoist-gg/hoist/internal/testwait"
)

// rules is a small FlexMatch rule set: two teams of one.
const rules = `{"ruleLanguageVersion": "1.0", "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 1},
  {"name": "blue", "minPlayers": 1, "maxPlayers": 1}]}`

// world is one resource of every kind the console shows.
type world struct {
	fleet, alias, build, queue, config, ticket, placement, group, server string
}

func makeWorld(t *testing.T, gl *gamelift.Client) world {
	t.Helper()
	ctx := context.Background()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	w := world{fleet: createFleet(t, gl), queue: "console-queue", config: "console-match", group: "console-group", server: "gs-1"}
	a, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String("console-alias"),
		RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeSimple, FleetId: aws.String(w.fleet)}})
	must("CreateAlias", err)
	w.alias = aws.ToString(a.Alias.AliasId)
	b, err := gl.CreateBuild(ctx, &gamelift.CreateBuildInput{Name: aws.String("console-build"), Version: aws.String("1"),
		OperatingSystem: types.OperatingSystemAmazonLinux2023})
	must("CreateBuild", err)
	w.build = aws.ToString(b.Build.BuildId)
	_, err = gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String(w.queue), TimeoutInSeconds: aws.Int32(600),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + w.fleet)}}})
	must("CreateGameSessionQueue", err)
	_, err = gl.CreateMatchmakingRuleSet(ctx, &gamelift.CreateMatchmakingRuleSetInput{Name: aws.String("duel"), RuleSetBody: aws.String(rules)})
	must("CreateMatchmakingRuleSet", err)
	_, err = gl.CreateMatchmakingConfiguration(ctx, &gamelift.CreateMatchmakingConfigurationInput{Name: aws.String(w.config),
		RuleSetName: aws.String("duel"), RequestTimeoutSeconds: aws.Int32(600), AcceptanceRequired: aws.Bool(false),
		FlexMatchMode: types.FlexMatchModeStandalone})
	must("CreateMatchmakingConfiguration", err)
	tk, err := gl.StartMatchmaking(ctx, &gamelift.StartMatchmakingInput{ConfigurationName: aws.String(w.config),
		Players: []types.Player{{PlayerId: aws.String("player-a")}}})
	must("StartMatchmaking", err)
	w.ticket = aws.ToString(tk.MatchmakingTicket.TicketId)
	w.placement = "console-placement"
	_, err = gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String(w.placement),
		GameSessionQueueName: aws.String(w.queue), MaximumPlayerSessionCount: aws.Int32(2)})
	must("StartGameSessionPlacement", err)
	w.makeGroup(t, gl)
	for i := range 26 { // one more than a page
		_, err := gl.CreateAlias(ctx, &gamelift.CreateAliasInput{Name: aws.String(fmt.Sprintf("paged-%02d", i)),
			RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("closed")}})
		must("CreateAlias", err)
	}
	return w
}

// makeGroup creates a FleetIQ game server group with one registered game server.
func (w world) makeGroup(t *testing.T, gl *gamelift.Client) {
	t.Helper()
	ctx := context.Background()
	_, err := gl.CreateGameServerGroup(ctx, &gamelift.CreateGameServerGroupInput{GameServerGroupName: aws.String(w.group),
		RoleArn: aws.String("arn:aws:iam::111122223333:role/fleetiq"), MinSize: aws.Int32(0), MaxSize: aws.Int32(4),
		LaunchTemplate:      &types.LaunchTemplateSpecification{LaunchTemplateId: aws.String("lt-0123456789abcdef0")},
		InstanceDefinitions: []types.InstanceDefinition{{InstanceType: types.GameServerGroupInstanceTypeC5Large}, {InstanceType: types.GameServerGroupInstanceTypeC5Xlarge}}})
	if err != nil {
		t.Fatalf("CreateGameServerGroup: %v", err)
	}
	testwait.Until(t, 20*time.Second, 50*time.Millisecond, "a game server registered in the new group", func() bool {
		_, err = gl.RegisterGameServer(ctx, &gamelift.RegisterGameServerInput{GameServerGroupName: aws.String(w.group),
			GameServerId: aws.String(w.server), InstanceId: aws.String("i-00000000000000001"), ConnectionInfo: aws.String("127.0.0.1:7777")})
		return err == nil // the group takes a moment to become ACTIVE
	})
}

// TestEveryPageRenders opens each list and detail page of the console with a resource of its
// kind and checks that it shows the resource, with no script error.
func TestEveryPageRenders(t *testing.T) {
	srv := startServer(t)
	gl := client(srv)
	w := makeWorld(t, gl)
	p := newPage(t)
	p.run("open the console", 20*time.Second, chromedp.Navigate(srv.URL()+"/console#/fleets"))
	p.waitFor("the login form", "#access-key-id")
	p.run("log in", 10*time.Second, chromedp.SendKeys("#access-key-id", testKeyID), chromedp.SendKeys("#secret-access-key", testSecret),
		chromedp.Click(`#login button[type="submit"]`))
	p.waitFor("the fleets page", `tr[data-id="`+w.fleet+`"]`)
	p.eval("collect script errors", `window.hoistErrors = []; addEventListener('error', e => hoistErrors.push(e.message));
		addEventListener('unhandledrejection', e => hoistErrors.push(String(e.reason)));
		window.hoistTestMarker = "loaded-once"`)
	esc := url.PathEscape
	pages := []struct{ route, selector, shot string }{
		{"/game-sessions?fleet=" + w.fleet, `#page-body .card`, ""},
		{"/aliases", `tr[data-id="` + w.alias + `"]`, ""},
		{"/aliases/" + w.alias, `[data-field="Routing"]`, ""},
		{"/builds?status=INITIALIZED", `tr[data-id="` + w.build + `"]`, ""},
		{"/builds/" + w.build, `[data-field="Status"] .status-INITIALIZED`, ""},
		{"/locations", `tr[data-id="` + location + `"]`, ""},
		{"/queues", `tr[data-id="` + w.queue + `"]`, ""},
		{"/queues/" + w.queue, `#page-body code`, ""},
		{"/placements", `#page-body p.muted`, ""},
		{"/placements/" + w.placement, `[data-field="Status"] .status-PENDING`, ""},
		{"/matchmaking", `tr[data-id="` + w.config + `"]`, ""},
		{"/matchmaking/" + w.config, `#page-body pre`, "matchmaking-configuration"},
		{"/tickets/" + esc(w.ticket), `tr[data-id="player-a"]`, ""},
		{"/fleetiq", `tr[data-id="` + w.group + `"]`, ""},
		{"/fleetiq/" + w.group, `tr[data-id="` + w.server + `"]`, "fleetiq-group"},
		{"/fleetiq/" + w.group + "/" + w.server, `[data-field="Status"] .status-AVAILABLE`, ""},
		{"/player-sessions?player=nobody", `#page-body p.muted`, ""},
		{"/fleets/" + w.fleet + "/computes/none", `#page-body p.error`, ""},
	}
	for _, pg := range pages {
		p.goTo(pg.route)
		p.waitFor(pg.route, pg.selector)
		if pg.shot != "" {
			p.screenshot(pg.shot)
		}
	}
	p.checkPaging()
	if errs := p.eval("read script errors", `JSON.stringify(window.hoistErrors)`); errs != "[]" {
		t.Errorf("script errors: %s", errs)
	}
	if failed := p.eval("look for render failures", `String(document.body.innerText.includes('failed to render'))`); failed != "false" {
		t.Error("a page failed to render")
	}
	p.notReloaded()
}

// checkPaging pages through the aliases (27, in creation order) with the Next and Previous
// buttons, and filters them by routing type.
func (p *page) checkPaging() {
	p.t.Helper()
	p.goTo("/aliases")
	p.waitFor("the first page of aliases", `#next-page`)
	p.run("next page", 10*time.Second, chromedp.Click(`#next-page`))
	p.waitFor("the second page", `//td[text()="paged-25"]`)
	if got := p.eval("rows of the second page", `String(document.querySelectorAll('#page-body tbody tr').length)`); got != "2" {
		p.t.Errorf("the second page of aliases has %s rows, want 2", got)
	}
	p.run("previous page", 10*time.Second, chromedp.Click(`//button[text()="Previous page"]`))
	p.waitFor("the first page again", `//td[text()="console-alias"]`)
	p.goTo("/aliases?type=SIMPLE")
	p.waitFor("only the SIMPLE aliases", `//tbody[count(tr)=1]/tr/td[text()="console-alias"]`)
	if got := p.eval("rows of SIMPLE aliases", `String(document.querySelectorAll('#page-body tbody tr').length)`); got != "1" {
		p.t.Errorf("%s SIMPLE aliases shown, want 1", got)
	}
}
