package gamelift

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/store"
)

// mmWorld is a fixture with the rule sets "duel" and "solo" (duelBody: at most 12 players)
// and two game session queues, q1 and q2.
type mmWorld struct {
	f      *fixture
	duel   *api.MatchmakingRuleSet
	q1, q2 string
}

func newMMWorld(t *testing.T) *mmWorld {
	f := newFixture(t, testAccount)
	w := &mmWorld{f: f, duel: f.createRuleSet(t, "duel")}
	f.createRuleSet(t, "solo")
	for _, q := range []string{"q1", "q2"} {
		ok(f.h.CreateGameSessionQueue(f.ctx, &api.CreateGameSessionQueueInput{Name: api.String(q)}))(t)
	}
	w.q1, w.q2 = f.svc.arn(arnQueue, "q1"), f.svc.arn(arnQueue, "q2")
	return w
}

// minimal is the smallest valid CreateMatchmakingConfigurationInput: WITH_QUEUE on q1.
func (w *mmWorld) minimal(name, ruleSet string) *api.CreateMatchmakingConfigurationInput {
	return &api.CreateMatchmakingConfigurationInput{Name: api.String(name), RuleSetName: api.String(ruleSet),
		RequestTimeoutSeconds: api.Int32(60), AcceptanceRequired: api.Bool(false), GameSessionQueueArns: []string{w.q1}}
}

// create creates a configuration and returns it.
func (w *mmWorld) create(t *testing.T, in *api.CreateMatchmakingConfigurationInput) *api.MatchmakingConfiguration {
	t.Helper()
	return ok(w.f.h.CreateMatchmakingConfiguration(w.f.ctx, in))(t).Configuration
}

// describe answers DescribeMatchmakingConfigurations for names.
func (w *mmWorld) describe(t *testing.T, names ...string) []api.MatchmakingConfiguration {
	t.Helper()
	return ok(w.f.h.DescribeMatchmakingConfigurations(w.f.ctx, &api.DescribeMatchmakingConfigurationsInput{Names: names}))(t).Configurations
}

func TestMatchmakingConfigLifecycle(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	arn := "arn:aws:gamelift:" + testRegion + ":" + testAccount + ":matchmakingconfiguration/ranked"
	props := []api.GameProperty{{Key: api.String("mode"), Value: api.String("ranked")}, {Key: api.String("map"), Value: api.String("dust")}}
	in := &api.CreateMatchmakingConfigurationInput{Name: api.String("ranked"), Description: api.String("ranked 1v2"),
		RuleSetName: w.duel.RuleSetArn, RequestTimeoutSeconds: api.Int32(120), AcceptanceRequired: api.Bool(true),
		AcceptanceTimeoutSeconds: api.Int32(30), GameSessionQueueArns: []string{w.q2, "arn:aws:gamelift:" + testRegion + "::gamesessionqueue/q1"},
		AdditionalPlayerCount: api.Int32(11), BackfillMode: ptr(api.BackfillModeAutomatic), FlexMatchMode: ptr(api.FlexMatchModeWithQueue),
		CustomEventData: api.String("ced"), NotificationTarget: api.String("arn:aws:sns:us-west-2:123456789012:mm"),
		GameProperties: props, GameSessionData: api.String("gsd"), Tags: []api.Tag{{Key: api.String("team"), Value: api.String("core")}}}
	got := w.create(t, in)
	want := &api.MatchmakingConfiguration{Name: api.String("ranked"), ConfigurationArn: api.String(arn), Description: api.String("ranked 1v2"),
		RuleSetName: api.String("duel"), RuleSetArn: w.duel.RuleSetArn, RequestTimeoutSeconds: api.Int32(120),
		AcceptanceRequired: api.Bool(true), AcceptanceTimeoutSeconds: api.Int32(30), GameSessionQueueArns: []string{w.q2, w.q1},
		AdditionalPlayerCount: api.Int32(11), BackfillMode: ptr(api.BackfillModeAutomatic), FlexMatchMode: ptr(api.FlexMatchModeWithQueue),
		CustomEventData: api.String("ced"), NotificationTarget: in.NotificationTarget, GameProperties: props,
		GameSessionData: api.String("gsd"), CreationTime: api.Time(t0)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CreateMatchmakingConfiguration = %s\nwant %s", mustJSON(got), mustJSON(want))
	}
	for _, name := range []string{"ranked", arn} {
		if got := w.describe(t, name); len(got) != 1 || !reflect.DeepEqual(&got[0], want) {
			t.Errorf("DescribeMatchmakingConfigurations(%s) = %s", name, mustJSON(got))
		}
	}
	tags := ok(f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: api.String(arn)}))(t).Tags
	if len(tags) != 1 || *tags[0].Key != "team" {
		t.Errorf("tags %s", mustJSON(tags))
	}
	var doc *matchConfigDoc
	must(t, f.store.View(f.ctx, func(tx store.Tx) (err error) { _, doc, err = f.svc.matchConfigTx(tx, arn); return err }))
	wantDoc := &matchConfigDoc{Name: "ranked", ARN: arn, Description: "ranked 1v2", RuleSetName: "duel", RuleSetARN: *w.duel.RuleSetArn,
		RequestTimeout: 120, AcceptanceTimeout: 30, AcceptanceRequired: true, Queues: []string{w.q2, w.q1}, AdditionalPlayers: 11,
		BackfillMode: "AUTOMATIC", FlexMatchMode: "WITH_QUEUE", CustomEventData: "ced", NotificationTarget: *in.NotificationTarget,
		GameProps: []gameProperty{{"mode", "ranked"}, {"map", "dust"}}, GameSessionData: "gsd", Created: t0.UnixMilli(),
		tagged: tagged{Tags: []tag{{"team", "core"}}}}
	if !reflect.DeepEqual(doc, wantDoc) {
		t.Errorf("matchConfigTx = %+v\nwant %+v", doc, wantDoc)
	}

	up := ok(f.h.UpdateMatchmakingConfiguration(f.ctx, &api.UpdateMatchmakingConfigurationInput{Name: api.String(arn),
		Description: api.String("casual"), RequestTimeoutSeconds: api.Int32(300), GameSessionQueueArns: []string{w.q1},
		GameProperties: []api.GameProperty{}, NotificationTarget: api.String(""), RuleSetName: api.String("solo")}))(t).Configuration
	want.Description, want.RequestTimeoutSeconds, want.GameSessionQueueArns = api.String("casual"), api.Int32(300), []string{w.q1}
	want.GameProperties, want.NotificationTarget = []api.GameProperty{}, nil
	want.RuleSetName, want.RuleSetArn = api.String("solo"), api.String(f.svc.arn(arnRuleSet, "solo"))
	if !reflect.DeepEqual(up, want) {
		t.Errorf("UpdateMatchmakingConfiguration = %s\nwant %s", mustJSON(up), mustJSON(want))
	}
	if got := w.describe(t, "ranked"); len(got) != 1 || !reflect.DeepEqual(&got[0], want) {
		t.Errorf("after the update: %s", mustJSON(got))
	}

	ok(f.h.DeleteMatchmakingConfiguration(f.ctx, &api.DeleteMatchmakingConfigurationInput{Name: api.String("ranked")}))(t)
	if got := w.describe(t, "ranked"); len(got) != 0 {
		t.Errorf("a deleted configuration is described: %s", mustJSON(got))
	}
	f.mmUnchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeleteMatchmakingConfiguration(f.ctx, &api.DeleteMatchmakingConfigurationInput{Name: api.String("ranked")})
		return err
	})
}

func TestMatchmakingConfigDefaults(t *testing.T) {
	w := newMMWorld(t)
	c := w.create(t, w.minimal("bare", "duel"))
	if *c.FlexMatchMode != api.FlexMatchModeWithQueue || *c.BackfillMode != api.BackfillModeManual || *c.AdditionalPlayerCount != 0 ||
		c.AcceptanceTimeoutSeconds != nil || *c.AcceptanceRequired || c.Description != nil || c.CustomEventData != nil ||
		c.NotificationTarget != nil || c.GameSessionData != nil || len(c.GameProperties) != 0 || *c.RuleSetArn != *w.duel.RuleSetArn {
		t.Errorf("a configuration with defaults: %s", mustJSON(c))
	}
	in := w.minimal("alone", "duel")
	in.FlexMatchMode, in.GameSessionQueueArns = ptr(api.FlexMatchModeStandalone), nil
	if c := w.create(t, in); *c.FlexMatchMode != api.FlexMatchModeStandalone || len(c.GameSessionQueueArns) != 0 || *c.BackfillMode != api.BackfillModeManual {
		t.Errorf("a STANDALONE configuration: %s", mustJSON(c))
	}
}

func TestMatchmakingConfigCreateErrors(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	w.create(t, w.minimal("taken", "duel"))
	with := func(edit func(in *api.CreateMatchmakingConfigurationInput)) *api.CreateMatchmakingConfigurationInput {
		in := w.minimal("x", "duel")
		edit(in)
		return in
	}
	standalone := func(edit func(in *api.CreateMatchmakingConfigurationInput)) *api.CreateMatchmakingConfigurationInput {
		return with(func(in *api.CreateMatchmakingConfigurationInput) {
			in.FlexMatchMode, in.GameSessionQueueArns = ptr(api.FlexMatchModeStandalone), nil
			edit(in)
		})
	}
	var seventeen []api.GameProperty
	for i := range 17 {
		seventeen = append(seventeen, api.GameProperty{Key: api.String(fmt.Sprint(i)), Value: api.String("v")})
	}
	type cin = api.CreateMatchmakingConfigurationInput
	bad := []struct {
		name string
		in   *api.CreateMatchmakingConfigurationInput
		code api.ErrorCode
		msg  string
	}{
		{"name taken", w.minimal("taken", "duel"), api.InvalidRequestException, "taken already exists"},
		{"no name", w.minimal("", "duel"), api.InvalidRequestException, "Name"},
		{"bad name", w.minimal("a:b", "duel"), api.InvalidRequestException, "a:b"},
		{"no request timeout", with(func(in *cin) { in.RequestTimeoutSeconds = nil }), api.InvalidRequestException, "RequestTimeoutSeconds"},
		{"no acceptance flag", with(func(in *cin) { in.AcceptanceRequired = nil }), api.InvalidRequestException, "AcceptanceRequired"},
		{"no rule set", with(func(in *cin) { in.RuleSetName = nil }), api.InvalidRequestException, "RuleSetName"},
		{"request timeout 0", with(func(in *cin) { in.RequestTimeoutSeconds = api.Int32(0) }), api.InvalidRequestException, "RequestTimeoutSeconds"},
		{"request timeout too long", with(func(in *cin) { in.RequestTimeoutSeconds = api.Int32(43201) }), api.InvalidRequestException, "43201"},
		{"acceptance timeout 0", with(func(in *cin) { in.AcceptanceTimeoutSeconds = api.Int32(0) }), api.InvalidRequestException, "AcceptanceTimeoutSeconds"},
		{"acceptance timeout too long", with(func(in *cin) { in.AcceptanceTimeoutSeconds = api.Int32(601) }), api.InvalidRequestException, "601"},
		{"acceptance without timeout", with(func(in *cin) { in.AcceptanceRequired = api.Bool(true) }), api.InvalidRequestException, "AcceptanceTimeoutSeconds"},
		{"unknown rule set", w.minimal("x", "nope"), api.NotFoundException, "nope"},
		{"rule set ARN of a queue", w.minimal("x", w.q1), api.InvalidRequestException, w.q1},
		{"no queue", with(func(in *cin) { in.GameSessionQueueArns = nil }), api.InvalidRequestException, "GameSessionQueueArns"},
		{"unknown queue", with(func(in *cin) { in.GameSessionQueueArns = []string{f.svc.arn(arnQueue, "nope")} }), api.NotFoundException, "nope"},
		{"a queue name, not an ARN", with(func(in *cin) { in.GameSessionQueueArns = []string{"q1"} }), api.InvalidRequestException, "q1"},
		{"a fleet ARN", with(func(in *cin) { in.GameSessionQueueArns = []string{f.svc.arn(arnFleet, fleet1)} }), api.InvalidRequestException, fleet1},
		{"queue of another Region", with(func(in *cin) {
			in.GameSessionQueueArns = []string{"arn:aws:gamelift:eu-west-1:" + testAccount + ":gamesessionqueue/q1"}
		}), api.InvalidRequestException, "eu-west-1"},
		{"queue twice", with(func(in *cin) { in.GameSessionQueueArns = []string{w.q1, w.q1} }), api.InvalidRequestException, "more than once"},
		{"standalone with a queue", standalone(func(in *cin) { in.GameSessionQueueArns = []string{w.q1} }), api.InvalidRequestException, "GameSessionQueueArns"},
		{"standalone with additional players", standalone(func(in *cin) { in.AdditionalPlayerCount = api.Int32(1) }), api.InvalidRequestException, "AdditionalPlayerCount"},
		{"standalone with automatic backfill", standalone(func(in *cin) { in.BackfillMode = ptr(api.BackfillModeAutomatic) }), api.InvalidRequestException, "BackfillMode"},
		{"standalone with game properties", standalone(func(in *cin) { in.GameProperties = seventeen[:1] }), api.InvalidRequestException, "GameProperties"},
		{"standalone with game session data", standalone(func(in *cin) { in.GameSessionData = api.String("d") }), api.InvalidRequestException, "GameSessionData"},
		{"no room left", with(func(in *cin) { in.AdditionalPlayerCount = api.Int32(12) }), api.InvalidRequestException, "AdditionalPlayerCount 12"},
		{"negative additional players", with(func(in *cin) { in.AdditionalPlayerCount = api.Int32(-1) }), api.InvalidRequestException, "AdditionalPlayerCount"},
		{"unknown mode", with(func(in *cin) { in.FlexMatchMode = ptr(api.FlexMatchMode("SOLO")) }), api.InvalidRequestException, "SOLO"},
		{"unknown backfill", with(func(in *cin) { in.BackfillMode = ptr(api.BackfillMode("SOMETIMES")) }), api.InvalidRequestException, "SOMETIMES"},
		{"not an SNS topic", with(func(in *cin) { in.NotificationTarget = api.String("topic") }), api.InvalidRequestException, "NotificationTarget topic"},
		{"custom event data too long", with(func(in *cin) { in.CustomEventData = api.String(strings.Repeat("c", 257)) }), api.InvalidRequestException, "CustomEventData"},
		{"description too long", with(func(in *cin) { in.Description = api.String(strings.Repeat("d", 1025)) }), api.InvalidRequestException, "Description"},
		{"game session data too long", with(func(in *cin) { in.GameSessionData = api.String(strings.Repeat("d", 4097)) }), api.InvalidRequestException, "GameSessionData"},
		{"17 game properties", with(func(in *cin) { in.GameProperties = seventeen }), api.InvalidRequestException, "GameProperties"},
		{"reserved tag", with(func(in *cin) { in.Tags = []api.Tag{{Key: api.String("aws:x"), Value: api.String("v")}} }), api.TaggingFailedException, "aws:"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			msg := f.mmUnchanged(t, b.code, func() error { _, err := f.h.CreateMatchmakingConfiguration(f.ctx, b.in); return err })
			if !strings.Contains(msg, b.msg) {
				t.Errorf("message %q does not contain %q", msg, b.msg)
			}
		})
	}
}

// TestMatchmakingConfigUpdateErrors: an update is checked on the merged configuration, and a
// refused one changes nothing.
func TestMatchmakingConfigUpdateErrors(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	in := w.minimal("c", "duel")
	in.AdditionalPlayerCount = api.Int32(4)
	w.create(t, in)
	update := func(in *api.UpdateMatchmakingConfigurationInput) func() error {
		return func() error { _, err := f.h.UpdateMatchmakingConfiguration(f.ctx, in); return err }
	}
	name := api.String("c")
	bad := []struct {
		name string
		in   *api.UpdateMatchmakingConfigurationInput
		code api.ErrorCode
		msg  string
	}{
		{"unknown configuration", &api.UpdateMatchmakingConfigurationInput{Name: api.String("nope"), RequestTimeoutSeconds: api.Int32(5)}, api.NotFoundException, "nope"},
		{"standalone keeping the queue", &api.UpdateMatchmakingConfigurationInput{Name: name, FlexMatchMode: ptr(api.FlexMatchModeStandalone),
			AdditionalPlayerCount: api.Int32(0)}, api.InvalidRequestException, "GameSessionQueueArns"},
		{"standalone keeping additional players", &api.UpdateMatchmakingConfigurationInput{Name: name, FlexMatchMode: ptr(api.FlexMatchModeStandalone),
			GameSessionQueueArns: []string{}}, api.InvalidRequestException, "AdditionalPlayerCount"},
		{"clearing the queues", &api.UpdateMatchmakingConfigurationInput{Name: name, GameSessionQueueArns: []string{}}, api.InvalidRequestException, "GameSessionQueueArns"},
		{"acceptance without timeout", &api.UpdateMatchmakingConfigurationInput{Name: name, AcceptanceRequired: api.Bool(true)}, api.InvalidRequestException, "AcceptanceTimeoutSeconds"},
		{"unknown rule set", &api.UpdateMatchmakingConfigurationInput{Name: name, RuleSetName: api.String("nope")}, api.NotFoundException, "nope"},
		{"request timeout too long", &api.UpdateMatchmakingConfigurationInput{Name: name, RequestTimeoutSeconds: api.Int32(50000)}, api.InvalidRequestException, "50000"},
		{"no room left", &api.UpdateMatchmakingConfigurationInput{Name: name, AdditionalPlayerCount: api.Int32(13)}, api.InvalidRequestException, "AdditionalPlayerCount 13"},
		{"a rule set ARN as the name", &api.UpdateMatchmakingConfigurationInput{Name: w.duel.RuleSetArn}, api.InvalidRequestException, "matchmakingruleset"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if msg := f.mmUnchanged(t, b.code, update(b.in)); !strings.Contains(msg, b.msg) {
				t.Errorf("message %q does not contain %q", msg, b.msg)
			}
		})
	}
	c := ok(f.h.UpdateMatchmakingConfiguration(f.ctx, &api.UpdateMatchmakingConfigurationInput{Name: name,
		FlexMatchMode: ptr(api.FlexMatchModeStandalone), GameSessionQueueArns: []string{}, AdditionalPlayerCount: api.Int32(0)}))(t).Configuration
	if *c.FlexMatchMode != api.FlexMatchModeStandalone || len(c.GameSessionQueueArns) != 0 || *c.RequestTimeoutSeconds != 60 {
		t.Errorf("switched to STANDALONE: %s", mustJSON(c))
	}
}

func TestDescribeMatchmakingConfigurationsPaging(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("c%d", i))
		w.create(t, w.minimal(names[i], map[bool]string{true: "solo", false: "duel"}[i%3 == 0]))
	}
	collect := func(in *api.DescribeMatchmakingConfigurationsInput) (got []string, pages int) {
		for {
			out := ok(f.h.DescribeMatchmakingConfigurations(f.ctx, in))(t)
			pages++
			for _, c := range out.Configurations {
				got = append(got, *c.Name)
			}
			if out.NextToken == nil {
				return got, pages
			}
			in.NextToken = out.NextToken
		}
	}
	cases := []struct {
		name  string
		in    *api.DescribeMatchmakingConfigurationsInput
		want  []string
		pages int
	}{
		{"all by 5", &api.DescribeMatchmakingConfigurationsInput{Limit: api.Int32(5)}, names, 3},
		{"all by the default 10", &api.DescribeMatchmakingConfigurationsInput{}, names, 2},
		{"a Limit over 10 is 10", &api.DescribeMatchmakingConfigurationsInput{Limit: api.Int32(50)}, names, 2},
		{"by rule set", &api.DescribeMatchmakingConfigurationsInput{RuleSetName: api.String(f.svc.arn(arnRuleSet, "solo")), Limit: api.Int32(3)},
			[]string{"c0", "c3", "c6", "c9"}, 2},
		{"unused rule set", &api.DescribeMatchmakingConfigurationsInput{RuleSetName: api.String("nope")}, nil, 1},
		{"named, unknown left out", &api.DescribeMatchmakingConfigurationsInput{Names: []string{"c3", "nope", f.svc.arn(arnMatchConfig, "c1"), "c4", "gone"},
			Limit: api.Int32(2)}, []string{"c3", "c1", "c4"}, 2},
		{"named and by rule set", &api.DescribeMatchmakingConfigurationsInput{Names: []string{"c3", "c1", "c6"}, RuleSetName: api.String("solo"),
			Limit: api.Int32(1)}, []string{"c3", "c6"}, 2},
		{"named, none exists", &api.DescribeMatchmakingConfigurationsInput{Names: []string{"nope"}}, nil, 1},
	}
	for _, c := range cases {
		if got, pages := collect(c.in); !reflect.DeepEqual(got, c.want) || pages != c.pages {
			t.Errorf("%s: %v in %d pages, want %v in %d", c.name, got, pages, c.want, c.pages)
		}
	}
	first := ok(f.h.DescribeMatchmakingConfigurations(f.ctx, &api.DescribeMatchmakingConfigurationsInput{Limit: api.Int32(2)}))(t)
	_, err := f.h.DescribeMatchmakingConfigurations(f.ctx, &api.DescribeMatchmakingConfigurationsInput{RuleSetName: api.String("solo"), NextToken: first.NextToken})
	wantCode(t, err, api.InvalidRequestException)
	_, err = f.h.DescribeMatchmakingConfigurations(f.ctx, &api.DescribeMatchmakingConfigurationsInput{Names: []string{w.q1}})
	wantCode(t, err, api.InvalidRequestException)
}

// TestDeleteMatchmakingConfigurationWithActiveTickets: a configuration with a ticket that has
// not ended cannot be deleted; once every ticket has ended it can.
func TestDeleteMatchmakingConfigurationWithActiveTickets(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	w.create(t, w.minimal("c", "duel"))
	w.create(t, w.minimal("other", "duel"))
	ticket := func(id, parent, status string) {
		data, _ := json.Marshal(map[string]string{"status": status, "ticketId": id})
		must(t, f.store.Update(f.ctx, func(tx store.Tx) error {
			if err := tx.Delete(kindMatchTicket, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return tx.Insert(&store.Record{Kind: kindMatchTicket, ID: id, Parent: parent, Data: data})
		}))
	}
	for _, s := range []string{"COMPLETED", "FAILED", "CANCELLED", "TIMED_OUT"} {
		ticket("t-"+s, "c", s)
	}
	ticket("t-other", "other", "SEARCHING")
	for _, s := range []string{"QUEUED", "SEARCHING", "REQUIRES_ACCEPTANCE", "PLACING"} {
		ticket("t-live", "c", s)
		msg := f.mmUnchanged(t, api.InvalidRequestException, func() error {
			_, err := f.h.DeleteMatchmakingConfiguration(f.ctx, &api.DeleteMatchmakingConfigurationInput{Name: api.String("c")})
			return err
		})
		if !strings.Contains(msg, "c has 1 active") {
			t.Errorf("%s: message %q", s, msg)
		}
	}
	ticket("t-live", "c", "COMPLETED")
	ok(f.h.DeleteMatchmakingConfiguration(f.ctx, &api.DeleteMatchmakingConfigurationInput{Name: api.String(f.svc.arn(arnMatchConfig, "c"))}))(t)
	if got := w.describe(t, "c", "other"); len(got) != 1 || *got[0].Name != "other" {
		t.Errorf("after the delete: %s", mustJSON(got))
	}
}

// TestDeleteRuleSetInUseByMatchmakingConfig: a rule set a configuration uses cannot be
// deleted until no configuration uses it.
func TestDeleteRuleSetInUseByMatchmakingConfig(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	w.create(t, w.minimal("c", "duel"))
	del := func() error {
		_, err := f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String("duel")})
		return err
	}
	if msg := f.mmUnchanged(t, api.InvalidRequestException, del); !strings.Contains(msg, "configuration c") {
		t.Errorf("message %q does not name the configuration", msg)
	}
	ok(f.h.UpdateMatchmakingConfiguration(f.ctx, &api.UpdateMatchmakingConfigurationInput{Name: api.String("c"), RuleSetName: api.String("solo")}))(t)
	must(t, del())
	f.mmUnchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String("solo")})
		return err
	})
}

// TestMatchmakingRuleSetAndConfigTags: both resource types work with the tag operations.
func TestMatchmakingRuleSetAndConfigTags(t *testing.T) {
	w := newMMWorld(t)
	f := w.f
	config := w.create(t, w.minimal("c", "duel"))
	for _, arn := range []string{*w.duel.RuleSetArn, *config.ConfigurationArn} {
		ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: api.String(arn),
			Tags: []api.Tag{{Key: api.String("a"), Value: api.String("1")}, {Key: api.String("b"), Value: api.String("2")}}}))(t)
		ok(f.h.UntagResource(f.ctx, &api.UntagResourceRequest{ResourceARN: api.String(arn), TagKeys: []string{"a"}}))(t)
		tags := ok(f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: api.String(arn)}))(t).Tags
		if len(tags) != 1 || *tags[0].Key != "b" || *tags[0].Value != "2" {
			t.Errorf("%s: tags %s", arn, mustJSON(tags))
		}
	}
	if got := w.describe(t, "c"); len(got) != 1 || *got[0].RequestTimeoutSeconds != 60 {
		t.Errorf("tagging changed the configuration: %s", mustJSON(got))
	}
	f.mmUnchanged(t, api.NotFoundException, func() error {
		_, err := f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: api.String(f.svc.arn(arnMatchConfig, "nope")),
			Tags: []api.Tag{{Key: api.String("a"), Value: api.String("1")}}})
		return err
	})
}
