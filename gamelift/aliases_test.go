package gamelift

import (
	"reflect"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

func simple(fleet string) *api.RoutingStrategy {
	typ := api.RoutingStrategyTypeSimple
	return &api.RoutingStrategy{Type: &typ, FleetId: api.String(fleet)}
}

func terminal(msg string) *api.RoutingStrategy {
	typ := api.RoutingStrategyTypeTerminal
	return &api.RoutingStrategy{Type: &typ, Message: api.String(msg)}
}

func (f *fixture) createAlias(t *testing.T, name string, rs *api.RoutingStrategy) *api.Alias {
	t.Helper()
	return ok(f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String(name), RoutingStrategy: rs}))(t).Alias
}

const fleet1 = "fleet-11111111-2222-3333-4444-555555555555"

func TestCreateAndDescribeAlias(t *testing.T) {
	f := newFixture(t, "")
	out := ok(f.h.CreateAlias(f.ctx, &api.CreateAliasInput{
		Name: api.String("live"), Description: api.String("the live fleet"), RoutingStrategy: simple(fleet1),
	}))(t)
	id := "alias-00000000-0000-4000-8000-000000000001"
	want := &api.Alias{
		AliasId: api.String(id), Name: api.String("live"), AliasArn: api.String("arn:aws:gamelift:us-west-2::alias/" + id),
		Description: api.String("the live fleet"), RoutingStrategy: simple(fleet1),
		CreationTime: api.Time(t0), LastUpdatedTime: api.Time(t0),
	}
	if !reflect.DeepEqual(out.Alias, want) {
		t.Errorf("CreateAlias = %+v\nwant        %+v", out.Alias, want)
	}
	for _, key := range []*string{want.AliasId, want.AliasArn} {
		got := ok(f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: key}))(t)
		if !reflect.DeepEqual(got.Alias, want) {
			t.Errorf("DescribeAlias(%s) = %+v", *key, got.Alias)
		}
	}
}

func TestCreateAliasTerminalDropsFleetID(t *testing.T) {
	f := newFixture(t, "")
	rs := terminal("goodbye")
	rs.FleetId = api.String(fleet1)
	a := f.createAlias(t, "closed", rs)
	if !reflect.DeepEqual(a.RoutingStrategy, terminal("goodbye")) {
		t.Errorf("RoutingStrategy = %+v, want TERMINAL without FleetId", a.RoutingStrategy)
	}
}

func TestCreateAliasRoutingErrors(t *testing.T) {
	f := newFixture(t, "")
	noFleet := simple("")
	noFleet.FleetId = nil
	noType := &api.RoutingStrategy{FleetId: api.String(fleet1)}
	for name, rs := range map[string]*api.RoutingStrategy{
		"SIMPLE without FleetId":   noFleet,
		"TERMINAL without Message": {Type: terminal("").Type},
		"no Type":                  noType,
	} {
		t.Run(name, func(t *testing.T) {
			f.unchanged(t, api.InvalidRequestException, func() error {
				_, err := f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("a"), RoutingStrategy: rs})
				return err
			})
		})
	}
	f.unchanged(t, api.TaggingFailedException, func() error {
		_, err := f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("a"), RoutingStrategy: simple(fleet1),
			Tags: []api.Tag{{Key: api.String("aws:cloudformation:stack-name"), Value: api.String("s")}}})
		return err
	})
}

func TestDescribeAliasErrors(t *testing.T) {
	f := newFixture(t, testAccount)
	a := f.createAlias(t, "a", simple(fleet1))
	_, err := f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: api.String("alias-missing")})
	if msg := wantCode(t, err, api.NotFoundException); msg != "Alias alias-missing not found." {
		t.Errorf("message = %q", msg)
	}
	// The documented ARN form without an account names the same alias.
	got := ok(f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{
		AliasId: api.String("arn:aws:gamelift:us-west-2::alias/" + *a.AliasId)}))(t)
	if *got.Alias.AliasId != *a.AliasId {
		t.Errorf("by account-less ARN: %s", *got.Alias.AliasId)
	}
	for _, arn := range []string{
		"arn:aws:gamelift:eu-west-1:123456789012:alias/" + *a.AliasId,
		"arn:aws:gamelift:us-west-2:999999999999:alias/" + *a.AliasId,
		"arn:aws:s3:us-west-2:123456789012:alias/" + *a.AliasId,
	} {
		_, err := f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: api.String(arn)})
		wantCode(t, err, api.InvalidRequestException)
	}
}

func TestUpdateAlias(t *testing.T) {
	f := newFixture(t, "")
	a := f.createAlias(t, "a", simple(fleet1))
	f.clock.Advance(90 * time.Second)
	out := ok(f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: a.AliasArn, Name: api.String("b"),
		Description: api.String("d"), RoutingStrategy: terminal("maintenance")}))(t)
	want := *a
	want.Name, want.Description, want.RoutingStrategy = api.String("b"), api.String("d"), terminal("maintenance")
	want.LastUpdatedTime = api.Time(t0.Add(90 * time.Second))
	if !reflect.DeepEqual(out.Alias, &want) {
		t.Errorf("UpdateAlias = %+v\nwant        %+v", out.Alias, &want)
	}
	got := ok(f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: a.AliasId}))(t)
	if !reflect.DeepEqual(got.Alias, &want) {
		t.Errorf("stored %+v", got.Alias)
	}
	// Name only: the routing strategy stays.
	out = ok(f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: a.AliasId, Name: api.String("c")}))(t)
	if !reflect.DeepEqual(out.Alias.RoutingStrategy, terminal("maintenance")) || *out.Alias.Name != "c" {
		t.Errorf("after name-only update: %+v", out.Alias)
	}
}

func TestUpdateAliasErrors(t *testing.T) {
	f := newFixture(t, "")
	a := f.createAlias(t, "a", simple(fleet1))
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: api.String("alias-x"), Name: api.String("n")})
		return err
	})
	f.unchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: a.AliasId, Name: api.String("n"),
			RoutingStrategy: &api.RoutingStrategy{Type: terminal("").Type}})
		return err
	})
}

func TestDeleteAlias(t *testing.T) {
	f := newFixture(t, "")
	a := f.createAlias(t, "a", simple(fleet1))
	keep := f.createAlias(t, "b", simple(fleet1))
	ok(f.h.DeleteAlias(f.ctx, &api.DeleteAliasInput{AliasId: a.AliasArn}))(t)
	_, err := f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: a.AliasId})
	wantCode(t, err, api.NotFoundException)
	ok(f.h.DescribeAlias(f.ctx, &api.DescribeAliasInput{AliasId: keep.AliasId}))(t)
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeleteAlias(f.ctx, &api.DeleteAliasInput{AliasId: a.AliasId})
		return err
	})
}

func TestResolveAlias(t *testing.T) {
	f := newFixture(t, testAccount)
	s := f.createAlias(t, "s", simple(fleet1))
	out := ok(f.h.ResolveAlias(f.ctx, &api.ResolveAliasInput{AliasId: s.AliasArn}))(t)
	wantARN := "arn:aws:gamelift:us-west-2:123456789012:fleet/" + fleet1
	if api.Deref(out.FleetId) != fleet1 || api.Deref(out.FleetArn) != wantARN {
		t.Errorf("ResolveAlias = %s, %s", api.Deref(out.FleetId), api.Deref(out.FleetArn))
	}
	term := f.createAlias(t, "t", terminal("Servers are down for maintenance."))
	_, err := f.h.ResolveAlias(f.ctx, &api.ResolveAliasInput{AliasId: term.AliasId})
	if msg := wantCode(t, err, api.TerminalRoutingStrategyException); msg != "Servers are down for maintenance." {
		t.Errorf("message = %q, want the alias's message", msg)
	}
	_, err = f.h.ResolveAlias(f.ctx, &api.ResolveAliasInput{AliasId: api.String("alias-none")})
	wantCode(t, err, api.NotFoundException)
}

func aliasNames(as []api.Alias) []string {
	var names []string
	for _, a := range as {
		names = append(names, *a.Name)
	}
	return names
}

// listAliasPages pages through ListAliases and returns each page's names.
func (f *fixture) listAliasPages(t *testing.T, in *api.ListAliasesInput) [][]string {
	t.Helper()
	var pages [][]string
	for len(pages) < 20 {
		out := ok(f.h.ListAliases(f.ctx, in))(t)
		pages = append(pages, aliasNames(out.Aliases))
		if out.NextToken == nil {
			return pages
		}
		in.NextToken = out.NextToken
	}
	t.Fatal("pagination does not end")
	return nil
}

func TestListAliasesFiltersAcrossPages(t *testing.T) {
	f := newFixture(t, "")
	f.createAlias(t, "s1", simple(fleet1))
	f.createAlias(t, "t1", terminal("m"))
	f.createAlias(t, "s2", simple(fleet1))
	f.createAlias(t, "t2", terminal("m"))
	f.createAlias(t, "s3", simple(fleet1))
	f.createAlias(t, "dup", simple(fleet1))
	f.createAlias(t, "dup", terminal("m"))
	simpleType := api.RoutingStrategyTypeSimple
	cases := []struct {
		in   *api.ListAliasesInput
		want [][]string
	}{
		{&api.ListAliasesInput{Limit: api.Int32(3)}, [][]string{{"s1", "t1", "s2"}, {"t2", "s3", "dup"}, {"dup"}}},
		{&api.ListAliasesInput{RoutingStrategyType: &simpleType, Limit: api.Int32(2)}, [][]string{{"s1", "s2"}, {"s3", "dup"}}},
		{&api.ListAliasesInput{Name: api.String("dup"), Limit: api.Int32(1)}, [][]string{{"dup"}, {"dup"}}},
		{&api.ListAliasesInput{Name: api.String("dup"), RoutingStrategyType: &simpleType}, [][]string{{"dup"}}},
		{&api.ListAliasesInput{Name: api.String("nothing")}, [][]string{nil}},
	}
	for i, c := range cases {
		if got := f.listAliasPages(t, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("case %d: %v, want %v", i, got, c.want)
		}
	}
}

func TestListAliasesTokenOfOtherFilter(t *testing.T) {
	f := newFixture(t, "")
	f.createAlias(t, "a", simple(fleet1))
	f.createAlias(t, "b", simple(fleet1))
	out := ok(f.h.ListAliases(f.ctx, &api.ListAliasesInput{Limit: api.Int32(1)}))(t)
	_, err := f.h.ListAliases(f.ctx, &api.ListAliasesInput{Name: api.String("a"), NextToken: out.NextToken})
	wantCode(t, err, api.InvalidRequestException)
	ok(f.h.ListAliases(f.ctx, &api.ListAliasesInput{NextToken: out.NextToken}))(t)
}

// BenchmarkDescribeAlias measures the domain's share of DescribeAlias: one store read and one
// small decode (the end-to-end comparison with a bare HTTP handler lives with the HTTP layer).
func BenchmarkDescribeAlias(b *testing.B) {
	f := newFixture(b, testAccount)
	a := ok(f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("bench"), RoutingStrategy: simple(fleet1),
		Tags: []api.Tag{tg("team", "core")}}))(b).Alias
	in := &api.DescribeAliasInput{AliasId: a.AliasId}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.h.DescribeAlias(f.ctx, in); err != nil {
			b.Fatal(err)
		}
	}
}
