package gamelift

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/gamelift/flexmatch"
	"github.com/hoist-gg/hoist/store"
)

// duelBody is a valid rule set: a red team of 2–4 players and two blue teams of 2–4, so at
// most 12 players.
const duelBody = `{"name":"duel","ruleLanguageVersion":"1.0",
 "playerAttributes":[{"name":"skill","type":"number","default":10}],
 "teams":[{"name":"red","minPlayers":2,"maxPlayers":4},{"name":"blue","minPlayers":2,"maxPlayers":4,"quantity":2}]}`

// duelTeams are duelBody's teams as flexmatch.Parse reads them.
var duelTeams = []flexmatch.Team{{Name: "red", MinPlayers: 2, MaxPlayers: 4, Quantity: 1},
	{Name: "blue", MinPlayers: 2, MaxPlayers: 4, Quantity: 2}}

// createRuleSet creates a rule set with duelBody and makes the cached parse carry duelTeams,
// so that the checks depending on team sizes do not depend on how complete the parser is.
func (f *fixture) createRuleSet(t *testing.T, name string) *api.MatchmakingRuleSet {
	t.Helper()
	r := ok(f.h.CreateMatchmakingRuleSet(f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String(name),
		RuleSetBody: api.String(duelBody)}))(t).RuleSet
	f.svc.ruleSets.put(name, r.CreationTime.UnixMilli(), &flexmatch.RuleSet{Name: "duel", Teams: duelTeams})
	return r
}

// mmSnapshot is snapshot with the matchmaking kinds added.
func (f *fixture) mmSnapshot(t *testing.T) string {
	t.Helper()
	return f.snapshotOf(t, kindRuleSet, kindMatchConfig, kindMatchTicket) + f.snapshot(t)
}

// mmUnchanged runs op, which must fail with code, and checks that no record changed,
// matchmaking records included. It returns the error message.
func (f *fixture) mmUnchanged(t *testing.T, code api.ErrorCode, op func() error) string {
	t.Helper()
	before := f.mmSnapshot(t)
	msg := wantCode(t, op(), code)
	if after := f.mmSnapshot(t); after != before {
		t.Fatalf("store changed by a failed operation:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	return msg
}

func TestRuleSetLifecycle(t *testing.T) {
	f := newFixture(t, testAccount)
	arn := "arn:aws:gamelift:" + testRegion + ":" + testAccount + ":matchmakingruleset/duel"
	r := ok(f.h.CreateMatchmakingRuleSet(f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String("duel"),
		RuleSetBody: api.String(duelBody), Tags: []api.Tag{{Key: api.String("team"), Value: api.String("core")}}}))(t).RuleSet
	want := &api.MatchmakingRuleSet{RuleSetName: api.String("duel"), RuleSetArn: api.String(arn),
		RuleSetBody: api.String(duelBody), CreationTime: api.Time(t0)}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("CreateMatchmakingRuleSet = %s\nwant %s", mustJSON(r), mustJSON(want))
	}
	for _, name := range []string{"duel", arn} {
		got := ok(f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: []string{name}}))(t)
		if len(got.RuleSets) != 1 || !reflect.DeepEqual(&got.RuleSets[0], want) || got.NextToken != nil {
			t.Errorf("DescribeMatchmakingRuleSets(%s) = %s", name, mustJSON(got))
		}
	}
	tags := ok(f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: api.String(arn)}))(t).Tags
	if len(tags) != 1 || *tags[0].Key != "team" || *tags[0].Value != "core" {
		t.Errorf("tags %s", mustJSON(tags))
	}

	ok(f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String(arn)}))(t)
	_, err := f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: []string{"duel"}})
	wantCode(t, err, api.NotFoundException)
	f.mmUnchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String("duel")})
		return err
	})
}

// TestRuleSetTxCachesParsedRuleSets: ruleSetTx parses a rule set once; a rule set deleted and
// created again under the same name is parsed anew.
func TestRuleSetTxCachesParsedRuleSets(t *testing.T) {
	f := newFixture(t, testAccount)
	ok(f.h.CreateMatchmakingRuleSet(f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String("duel"), RuleSetBody: api.String(duelBody)}))(t)
	parsed := func(nameOrARN string) (*ruleSetDoc, *flexmatch.RuleSet) {
		t.Helper()
		var doc *ruleSetDoc
		var rs *flexmatch.RuleSet
		must(t, f.store.View(f.ctx, func(tx store.Tx) (err error) {
			doc, rs, err = f.svc.ruleSetTx(tx, nameOrARN)
			return err
		}))
		return doc, rs
	}
	doc, first := parsed("duel")
	if doc.Name != "duel" || doc.Body != duelBody || doc.Created != t0.UnixMilli() || first == nil {
		t.Fatalf("ruleSetTx = %+v, %v", doc, first)
	}
	if _, again := parsed(doc.ARN); again != first {
		t.Error("a second ruleSetTx parsed the rule set again")
	}
	f.svc.ruleSets.drop("duel") // as on another node: the body is parsed, then cached
	_, fresh := parsed("duel")
	if _, again := parsed("duel"); fresh == first || again != fresh {
		t.Error("ruleSetTx did not parse an uncached rule set once")
	}
	ok(f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String("duel")}))(t)
	f.clock.Advance(time.Second)
	ok(f.h.CreateMatchmakingRuleSet(f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String("duel"), RuleSetBody: api.String(duelBody)}))(t)
	if doc, re := parsed("duel"); re == fresh || doc.Created != t0.Add(time.Second).UnixMilli() {
		t.Error("a re-created rule set got the old parse")
	}
	_, _, err := f.svc.ruleSetTx(nil, "arn:aws:gamelift:"+testRegion+"::fleet/duel")
	wantCode(t, err, api.InvalidRequestException)
}

func TestRuleSetErrors(t *testing.T) {
	f := newFixture(t, testAccount)
	f.createRuleSet(t, "duel")
	_, parseErr := flexmatch.Parse([]byte("{"))
	create := func(name, body string, tags ...api.Tag) func() error {
		return func() error {
			_, err := f.h.CreateMatchmakingRuleSet(f.ctx, &api.CreateMatchmakingRuleSetInput{Name: api.String(name), RuleSetBody: api.String(body), Tags: tags})
			return err
		}
	}
	bad := []struct {
		name string
		op   func() error
		code api.ErrorCode
		msg  string
	}{
		{"name taken", create("duel", duelBody), api.InvalidRequestException, "duel already exists"},
		{"unparsable body", create("x", "{"), api.InvalidRequestException, parseErr.Error()},
		{"empty body", create("x", ""), api.InvalidRequestException, ""},
		{"no name", create("", duelBody), api.InvalidRequestException, "Name"},
		{"name too long", create(strings.Repeat("n", 129), duelBody), api.InvalidRequestException, "Name"},
		{"name with a slash", create("a/b", duelBody), api.InvalidRequestException, "a/b"},
		{"reserved tag", create("x", duelBody, api.Tag{Key: api.String("aws:x"), Value: api.String("v")}), api.TaggingFailedException, "aws:"},
		{"describe unknown", func() error {
			_, err := f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: []string{"duel", "nope"}})
			return err
		}, api.NotFoundException, "nope"},
		{"describe a fleet ARN", func() error {
			_, err := f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: []string{"arn:aws:gamelift:" + testRegion + "::fleet/duel"}})
			return err
		}, api.InvalidRequestException, "fleet/duel"},
		{"describe another Region", func() error {
			_, err := f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: []string{"arn:aws:gamelift:eu-west-1::matchmakingruleset/duel"}})
			return err
		}, api.InvalidRequestException, "eu-west-1"},
		{"delete unknown", func() error {
			_, err := f.h.DeleteMatchmakingRuleSet(f.ctx, &api.DeleteMatchmakingRuleSetInput{Name: api.String("nope")})
			return err
		}, api.NotFoundException, "nope"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if msg := f.mmUnchanged(t, b.code, b.op); !strings.Contains(msg, b.msg) {
				t.Errorf("message %q does not contain %q", msg, b.msg)
			}
		})
	}
}

// TestValidateMatchmakingRuleSet: a valid body is Valid; an invalid one is an
// InvalidRequestException with the parser's reason. Nothing is stored either way.
func TestValidateMatchmakingRuleSet(t *testing.T) {
	f := newFixture(t, testAccount)
	before := f.mmSnapshot(t)
	out := ok(f.h.ValidateMatchmakingRuleSet(f.ctx, &api.ValidateMatchmakingRuleSetInput{RuleSetBody: api.String(duelBody)}))(t)
	if out.Valid == nil || !*out.Valid {
		t.Errorf("ValidateMatchmakingRuleSet(valid) = %s", mustJSON(out))
	}
	_, parseErr := flexmatch.Parse([]byte(`{"teams":`))
	msg := f.mmUnchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.ValidateMatchmakingRuleSet(f.ctx, &api.ValidateMatchmakingRuleSetInput{RuleSetBody: api.String(`{"teams":`)})
		return err
	})
	if msg != parseErr.Error() {
		t.Errorf("message %q, want the parser's %q", msg, parseErr.Error())
	}
	if after := f.mmSnapshot(t); after != before {
		t.Errorf("ValidateMatchmakingRuleSet stored something:\n%s", after)
	}
}

func TestDescribeMatchmakingRuleSetsPaging(t *testing.T) {
	f := newFixture(t, testAccount)
	var names []string
	for i := range 12 {
		names = append(names, fmt.Sprintf("r%d", i))
		f.createRuleSet(t, names[i])
	}
	collect := func(in *api.DescribeMatchmakingRuleSetsInput) (got []string, pages int) {
		for {
			out := ok(f.h.DescribeMatchmakingRuleSets(f.ctx, in))(t)
			pages++
			for _, r := range out.RuleSets {
				got = append(got, *r.RuleSetName)
			}
			if out.NextToken == nil {
				return got, pages
			}
			in.NextToken = out.NextToken
		}
	}
	if got, pages := collect(&api.DescribeMatchmakingRuleSetsInput{Limit: api.Int32(5)}); !reflect.DeepEqual(got, names) || pages != 3 {
		t.Errorf("all rule sets by 5 in %d pages: %v", pages, got)
	}
	if got, pages := collect(&api.DescribeMatchmakingRuleSetsInput{}); !reflect.DeepEqual(got, names) || pages != 2 {
		t.Errorf("all rule sets by the default 10 in %d pages: %v", pages, got)
	}
	want := []string{"r3", "r0", f.svc.arn(arnRuleSet, "r4")}
	got, pages := collect(&api.DescribeMatchmakingRuleSetsInput{Names: want, Limit: api.Int32(2)})
	if !reflect.DeepEqual(got, []string{"r3", "r0", "r4"}) || pages != 2 {
		t.Errorf("named rule sets in %d pages: %v", pages, got)
	}
	first := ok(f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Limit: api.Int32(2)}))(t)
	_, err := f.h.DescribeMatchmakingRuleSets(f.ctx, &api.DescribeMatchmakingRuleSetsInput{Names: want, NextToken: first.NextToken})
	wantCode(t, err, api.InvalidRequestException)
}
