package gamelift

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
)

const (
	testSDKEndpoint   = "wss://hoist.test:9443/sdk"
	testAgentEndpoint = "wss://hoist.test:9443/agent"
)

// push is one TerminateProcess message in the outbox.
type push struct {
	Ref ProcessRef
	At  time.Time
}

// recNotifier reads the pushes the domain put in the outbox (nothing delivers them in these
// tests, so they accumulate).
type recNotifier struct{ st store.Store }

// outbox returns the outbox messages of type typ, oldest first, with their processes.
func (n *recNotifier) outbox(typ string) (refs []ProcessRef, bodies []json.RawMessage) {
	_ = n.st.View(context.Background(), func(tx store.Tx) error {
		refs, bodies = nil, nil
		recs, err := tx.List(kindOutbox, store.ListOptions{})
		if err != nil {
			return err
		}
		msgs, err := messages(recs)
		for _, m := range msgs {
			if m.Type != typ {
				continue
			}
			_, fleet, id := ParseAddress(m.Address)
			var p processDoc
			if _, err := getDoc(tx, kindProcess, processKey(fleet, id), &p, func() error { return nil }); err != nil {
				return err
			}
			refs, bodies = append(refs, ProcessRef{fleet, p.Compute, id}), append(bodies, m.Body)
		}
		return err
	})
	return refs, bodies
}

// startPush is one CreateGameSession message in the outbox.
type startPush struct {
	Ref ProcessRef
	GS  GameSessionStart
}

func (n *recNotifier) started() []startPush {
	refs, bodies := n.outbox(MessageCreateGameSession)
	out := make([]startPush, len(refs))
	for i := range refs {
		out[i].Ref = refs[i]
		_ = json.Unmarshal(bodies[i], &out[i].GS)
	}
	return out
}

func (n *recNotifier) pushes() []push {
	refs, bodies := n.outbox(MessageTerminateProcess)
	out := make([]push, len(refs))
	for i := range refs {
		var pt ProcessTermination
		_ = json.Unmarshal(bodies[i], &pt)
		out[i] = push{refs[i], pt.Time}
	}
	return out
}

// newHostFixture is newFixture with the hosting settings (endpoints, an outbox reader).
func newHostFixture(t *testing.T) (*fixture, *recNotifier) {
	t.Helper()
	return hostFixtureOn(t, tempStore(t), clock.NewFake(t0), "n")
}

// hostFixtureOn builds a host fixture over an existing store and clock: a second "server
// node" when called twice with the same store. prefix keeps the nodes' IDs apart.
func hostFixtureOn(t *testing.T, st store.Store, clk *clock.Fake, prefix string) (*fixture, *recNotifier) {
	return nodeFixtureOn(t, st, clk, prefix, "")
}

// twoNodes returns two server nodes, node-a and node-b, on one new store and fake clock.
func twoNodes(t *testing.T) (a, b *fixture) {
	t.Helper()
	st, clk := tempStore(t), clock.NewFake(t0)
	a, _ = nodeFixtureOn(t, st, clk, "a", "node-a")
	b, _ = nodeFixtureOn(t, st, clk, "b", "node-b")
	return a, b
}

// nodeFixtureOn is hostFixtureOn for a server node with an ID (Config.NodeID).
func nodeFixtureOn(t *testing.T, st store.Store, clk *clock.Fake, prefix, node string) (*fixture, *recNotifier) {
	n := 0
	var mu sync.Mutex
	notifier := &recNotifier{st: st}
	svc := New(Config{Store: st, Clock: clk, Region: testRegion, AccountID: testAccount,
		SDKEndpoint: testSDKEndpoint, AgentEndpoint: testAgentEndpoint, NodeID: node,
		NewID: func() string {
			mu.Lock()
			defer mu.Unlock()
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%s%011d", prefix, n)[:36]
		}})
	return &fixture{svc: svc, h: svc.Handlers(), store: st, clock: clk, ctx: t.Context()}, notifier
}

// location creates a custom location.
func (f *fixture) location(t *testing.T, name string) {
	t.Helper()
	ok(f.h.CreateLocation(f.ctx, &api.CreateLocationInput{LocationName: api.String(name)}))(t)
}

func anywhere() *api.ComputeType { ct := api.ComputeTypeAnywhere; return &ct }

func locations(names ...string) []api.LocationConfiguration {
	out := make([]api.LocationConfiguration, len(names))
	for i, n := range names {
		out[i] = api.LocationConfiguration{Location: api.String(n)}
	}
	return out
}

// anywhereFleet creates custom-loc-1 (if needed) and an Anywhere fleet there.
func (f *fixture) anywhereFleet(t *testing.T, name string) string {
	t.Helper()
	if _, err := f.store.Get(f.ctx, kindLocation, "custom-loc-1"); err != nil {
		f.location(t, "custom-loc-1")
	}
	out := ok(f.h.CreateFleet(f.ctx, &api.CreateFleetInput{Name: api.String(name), ComputeType: anywhere(),
		Locations: locations("custom-loc-1")}))(t)
	return *out.FleetAttributes.FleetId
}

func (f *fixture) attributes(t *testing.T, id string) *api.FleetAttributes {
	t.Helper()
	out := ok(f.h.DescribeFleetAttributes(f.ctx, &api.DescribeFleetAttributesInput{FleetIds: []string{id}}))(t)
	if len(out.FleetAttributes) != 1 {
		t.Fatalf("DescribeFleetAttributes(%s) = %d fleets", id, len(out.FleetAttributes))
	}
	return &out.FleetAttributes[0]
}

// eventCodes returns the codes of a fleet's events, in order.
func (f *fixture) eventCodes(t *testing.T, fleetID string) []string {
	t.Helper()
	out := ok(f.h.DescribeFleetEvents(f.ctx, &api.DescribeFleetEventsInput{FleetId: api.String(fleetID)}))(t)
	codes := make([]string, len(out.Events))
	for i, e := range out.Events {
		codes[i] = string(*e.EventCode)
	}
	return codes
}

func TestCreateAnywhereFleet(t *testing.T) {
	f, _ := newHostFixture(t)
	f.location(t, "custom-home-lab")
	f.location(t, "custom-office")
	rc := &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{
		{LaunchPath: api.String("/local/game/server"), Parameters: api.String("-port 7777"), ConcurrentExecutions: api.Int32(2)}}}
	out := ok(f.h.CreateFleet(f.ctx, &api.CreateFleetInput{
		Name: api.String("lab"), Description: api.String("the lab machines"), ComputeType: anywhere(),
		Locations:             locations("custom-home-lab", testRegion, "custom-office"),
		MetricGroups:          []string{"lab-group"},
		AnywhereConfiguration: &api.AnywhereConfiguration{Cost: api.String("0.25")},
		RuntimeConfiguration:  rc, Tags: []api.Tag{tg("team", "core")},
		ResourceCreationLimitPolicy: &api.ResourceCreationLimitPolicy{
			NewGameSessionsPerCreator: api.Int32(3), PolicyPeriodInMinutes: api.Int32(15)},
	}))(t)
	id := "fleet-00000000-0000-4000-8000-n00000000001"
	active, ct, noProt, disabled := api.FleetStatusActive, api.ComputeTypeAnywhere,
		api.ProtectionPolicyNoProtection, api.CertificateTypeDisabled
	want := &api.FleetAttributes{
		FleetId: api.String(id), FleetArn: api.String("arn:aws:gamelift:us-west-2:123456789012:fleet/" + id),
		Name: api.String("lab"), Description: api.String("the lab machines"), Status: &active, ComputeType: &ct,
		CreationTime: api.Time(t0), NewGameSessionProtectionPolicy: &noProt,
		CertificateConfiguration: &api.CertificateConfiguration{CertificateType: &disabled},
		MetricGroups:             []string{"lab-group"},
		AnywhereConfiguration:    &api.AnywhereConfiguration{Cost: api.String("0.25")},
		ResourceCreationLimitPolicy: &api.ResourceCreationLimitPolicy{
			NewGameSessionsPerCreator: api.Int32(3), PolicyPeriodInMinutes: api.Int32(15)},
	}
	if !reflect.DeepEqual(out.FleetAttributes, want) {
		t.Errorf("CreateFleet = %+v\nwant         %+v", out.FleetAttributes, want)
	}
	var locs []string
	for _, ls := range out.LocationStates {
		if *ls.Status != api.FleetStatusActive {
			t.Errorf("location %s is %s", *ls.Location, *ls.Status)
		}
		locs = append(locs, *ls.Location)
	}
	if !slices.Equal(locs, []string{testRegion, "custom-home-lab", "custom-office"}) {
		t.Errorf("LocationStates = %v", locs)
	}
	for _, key := range []string{id, *want.FleetArn} {
		if got := f.attributes(t, key); !reflect.DeepEqual(got, want) {
			t.Errorf("DescribeFleetAttributes(%s) = %+v", key, got)
		}
	}
	if got := f.eventCodes(t, id); !slices.Equal(got, []string{"FLEET_CREATED", "FLEET_STATE_ACTIVE"}) {
		t.Errorf("events = %v", got)
	}
	gotRC := ok(f.h.DescribeRuntimeConfiguration(f.ctx, &api.DescribeRuntimeConfigurationInput{FleetId: api.String(id)}))(t)
	if !reflect.DeepEqual(gotRC.RuntimeConfiguration, rc) {
		t.Errorf("runtime configuration = %+v", gotRC.RuntimeConfiguration)
	}
	if got := f.tags(t, want.FleetArn); !reflect.DeepEqual(got, []api.Tag{tg("team", "core")}) {
		t.Errorf("tags = %v", got)
	}
}

func TestCreateFleetErrors(t *testing.T) {
	f, _ := newHostFixture(t)
	f.location(t, "custom-loc-1")
	ec2 := api.ComputeTypeEc2
	tooMany := &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{
		{LaunchPath: api.String("/a"), ConcurrentExecutions: api.Int32(30)},
		{LaunchPath: api.String("/b"), ConcurrentExecutions: api.Int32(21)}}}
	cases := map[string]struct {
		in   api.CreateFleetInput
		code api.ErrorCode
		msg  string
	}{
		"EC2 by default, no build": {api.CreateFleetInput{Locations: locations("custom-loc-1")}, api.InvalidRequestException, "BuildId is required"},
		"EC2 explicitly, no build": {api.CreateFleetInput{ComputeType: &ec2}, api.InvalidRequestException, "BuildId is required"},
		"BuildId":                  {api.CreateFleetInput{ComputeType: anywhere(), BuildId: api.String("build-1"), Locations: locations("custom-loc-1")}, api.InvalidRequestException, "BuildId"},
		"no Locations":             {api.CreateFleetInput{ComputeType: anywhere()}, api.InvalidRequestException, "custom location"},
		"home Region only":         {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations(testRegion)}, api.InvalidRequestException, "custom location"},
		"other Region":             {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations("custom-loc-1", "eu-west-1")}, api.InvalidRequestException, "eu-west-1"},
		"repeated location":        {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations("custom-loc-1", "custom-loc-1")}, api.InvalidRequestException, "more than once"},
		"unknown custom location":  {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations("custom-nowhere")}, api.NotFoundException, "custom-nowhere"},
		"51 processes":             {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations("custom-loc-1"), RuntimeConfiguration: tooMany}, api.InvalidRequestException, "51"},
		"reserved tag":             {api.CreateFleetInput{ComputeType: anywhere(), Locations: locations("custom-loc-1"), Tags: []api.Tag{tg("aws:x", "y")}}, api.TaggingFailedException, "aws:"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.in.Name = api.String("f")
			msg := f.unchanged(t, c.code, func() error { _, err := f.h.CreateFleet(f.ctx, &c.in); return err })
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not mention %q", msg, c.msg)
			}
		})
	}
}

func TestListAndDescribeFleetsPaging(t *testing.T) {
	f, _ := newHostFixture(t)
	ids := []string{f.anywhereFleet(t, "a"), f.anywhereFleet(t, "b"), f.anywhereFleet(t, "c")}
	var got []string
	var token *string
	for page := 0; ; page++ {
		out := ok(f.h.ListFleets(f.ctx, &api.ListFleetsInput{Limit: api.Int32(2), NextToken: token}))(t)
		got = append(got, out.FleetIds...)
		if token = out.NextToken; token == nil {
			break
		}
		if page > 2 {
			t.Fatal("ListFleets does not end")
		}
	}
	if !slices.Equal(got, ids) {
		t.Errorf("ListFleets = %v, want %v", got, ids)
	}
	byBuild := ok(f.h.ListFleets(f.ctx, &api.ListFleetsInput{BuildId: api.String("build-1")}))(t)
	if len(byBuild.FleetIds) != 0 {
		t.Errorf("ListFleets(BuildId) = %v, want none: Anywhere fleets have no build", byBuild.FleetIds)
	}
	first := ok(f.h.DescribeFleetAttributes(f.ctx, &api.DescribeFleetAttributesInput{Limit: api.Int32(2)}))(t)
	rest := ok(f.h.DescribeFleetAttributes(f.ctx, &api.DescribeFleetAttributesInput{NextToken: first.NextToken}))(t)
	if len(first.FleetAttributes) != 2 || len(rest.FleetAttributes) != 1 || rest.NextToken != nil ||
		*rest.FleetAttributes[0].FleetId != ids[2] {
		t.Errorf("DescribeFleetAttributes pages: %d then %d", len(first.FleetAttributes), len(rest.FleetAttributes))
	}
	named := ok(f.h.DescribeFleetAttributes(f.ctx, &api.DescribeFleetAttributesInput{
		FleetIds: []string{ids[2], "fleet-00000000-0000-0000-0000-000000000000", ids[0]}, Limit: api.Int32(1)}))(t)
	if len(named.FleetAttributes) != 2 || *named.FleetAttributes[0].FleetId != ids[2] || named.NextToken != nil {
		t.Errorf("DescribeFleetAttributes(FleetIds) = %d fleets, want the 2 that exist in request order", len(named.FleetAttributes))
	}
	_, err := f.h.ListFleets(f.ctx, &api.ListFleetsInput{NextToken: first.NextToken})
	wantCode(t, err, api.InvalidRequestException)
}

func TestUpdateFleetAttributes(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "before")
	full := api.ProtectionPolicyFullProtection
	out := ok(f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(id),
		Name: api.String("after"), Description: api.String("d"), NewGameSessionProtectionPolicy: &full,
		MetricGroups: []string{"g"}, AnywhereConfiguration: &api.AnywhereConfiguration{Cost: api.String("1.5")}}))(t)
	if *out.FleetId != id || !strings.HasSuffix(*out.FleetArn, ":fleet/"+id) {
		t.Errorf("UpdateFleetAttributes = %+v", out)
	}
	a := f.attributes(t, id)
	if *a.Name != "after" || *a.Description != "d" || *a.NewGameSessionProtectionPolicy != full ||
		!slices.Equal(a.MetricGroups, []string{"g"}) || *a.AnywhereConfiguration.Cost != "1.5" {
		t.Errorf("attributes after update = %+v", a)
	}
	if codes := f.eventCodes(t, id); codes[len(codes)-1] != "FLEET_NEW_GAME_SESSION_PROTECTION_POLICY_UPDATED" {
		t.Errorf("events = %v", codes)
	}
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String("fleet-nope"), Name: api.String("x")})
		return err
	})
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(id)}))(t)
	f.unchanged(t, api.InvalidFleetStatusException, func() error {
		_, err := f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(id), Name: api.String("x")})
		return err
	})
}

func TestRuntimeConfiguration(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "a")
	empty := ok(f.h.DescribeRuntimeConfiguration(f.ctx, &api.DescribeRuntimeConfigurationInput{FleetId: api.String(id)}))(t)
	if empty.RuntimeConfiguration == nil || len(empty.RuntimeConfiguration.ServerProcesses) != 0 {
		t.Errorf("runtime configuration of a new Anywhere fleet = %+v, want empty", empty.RuntimeConfiguration)
	}
	rc := &api.RuntimeConfiguration{ServerProcesses: []api.ServerProcess{
		{LaunchPath: api.String("/game/a"), ConcurrentExecutions: api.Int32(25)},
		{LaunchPath: api.String("/game/b"), ConcurrentExecutions: api.Int32(25)}},
		GameSessionActivationTimeoutSeconds: api.Int32(300)}
	ok(f.h.UpdateRuntimeConfiguration(f.ctx, &api.UpdateRuntimeConfigurationInput{FleetId: api.String(id), RuntimeConfiguration: rc}))(t)
	got, err := f.svc.RuntimeConfigurationFor(f.ctx, id)
	if err != nil || !reflect.DeepEqual(got, rc) {
		t.Errorf("RuntimeConfigurationFor = %+v, %v", got, err)
	}
	sp := func(n int) []api.ServerProcess {
		out := make([]api.ServerProcess, n)
		for i := range out {
			out[i] = api.ServerProcess{LaunchPath: api.String("/g"), ConcurrentExecutions: api.Int32(1)}
		}
		return out
	}
	for name, bad := range map[string]*api.RuntimeConfiguration{
		"no entries": {}, "51 entries": {ServerProcesses: sp(51)},
		"51 processes": {ServerProcesses: append(sp(1), api.ServerProcess{LaunchPath: api.String("/g"), ConcurrentExecutions: api.Int32(50)})},
		"missing":      nil,
	} {
		t.Run(name, func(t *testing.T) {
			f.unchanged(t, api.InvalidRequestException, func() error {
				_, err := f.h.UpdateRuntimeConfiguration(f.ctx, &api.UpdateRuntimeConfigurationInput{FleetId: api.String(id), RuntimeConfiguration: bad})
				return err
			})
		})
	}
	_, err = f.svc.RuntimeConfigurationFor(f.ctx, "fleet-nope")
	wantCode(t, err, api.NotFoundException)
	_, err = f.h.DescribeRuntimeConfiguration(f.ctx, &api.DescribeRuntimeConfigurationInput{FleetId: api.String("fleet-nope")})
	wantCode(t, err, api.NotFoundException)
}

func TestFleetTags(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "a")
	arn := api.String(f.svc.arn(arnFleet, id))
	ok(f.h.TagResource(f.ctx, &api.TagResourceRequest{ResourceARN: arn, Tags: []api.Tag{tg("env", "dev")}}))(t)
	ok(f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(id), Name: api.String("b")}))(t)
	if got := f.tags(t, arn); !reflect.DeepEqual(got, []api.Tag{tg("env", "dev")}) {
		t.Errorf("fleet tags = %v", got)
	}
	ok(f.h.UntagResource(f.ctx, &api.UntagResourceRequest{ResourceARN: arn, TagKeys: []string{"env"}}))(t)
	if got := f.tags(t, arn); len(got) != 0 {
		t.Errorf("fleet tags after untag = %v", got)
	}
	_, err := f.h.ListTagsForResource(f.ctx, &api.ListTagsForResourceRequest{ResourceARN: api.String(f.svc.arn(arnFleet, "fleet-nope"))})
	wantCode(t, err, api.NotFoundException)
}

func TestAliasesNeedExistingFleets(t *testing.T) {
	f, _ := newHostFixture(t)
	_, err := f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("a"), RoutingStrategy: simple("fleet-nope")})
	if msg := wantCode(t, err, api.NotFoundException); !strings.Contains(msg, "fleet-nope") {
		t.Errorf("message %q", msg)
	}
	id := f.anywhereFleet(t, "a")
	alias := ok(f.h.CreateAlias(f.ctx, &api.CreateAliasInput{Name: api.String("a"), RoutingStrategy: simple(id)}))(t).Alias
	res := ok(f.h.ResolveAlias(f.ctx, &api.ResolveAliasInput{AliasId: alias.AliasId}))(t)
	if *res.FleetId != id || *res.FleetArn != f.svc.arn(arnFleet, id) {
		t.Errorf("ResolveAlias = %+v", res)
	}
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(id)}))(t)
	f.step(t)
	_, err = f.h.UpdateAlias(f.ctx, &api.UpdateAliasInput{AliasId: alias.AliasId, RoutingStrategy: simple(id)})
	wantCode(t, err, api.NotFoundException)
}

func TestLocationInUseByFleet(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "a")
	msg := f.unchanged(t, api.InvalidRequestException, func() error {
		_, err := f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{LocationName: api.String("custom-loc-1")})
		return err
	})
	if !strings.Contains(msg, id) {
		t.Errorf("message %q does not name the fleet", msg)
	}
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(id)}))(t)
	f.step(t) // no processes: the fleet is TERMINATED at once
	ok(f.h.DeleteLocation(f.ctx, &api.DeleteLocationInput{LocationName: api.String("custom-loc-1")}))(t)
}

func TestDescribeFleetLocationAttributes(t *testing.T) {
	f, _ := newHostFixture(t)
	f.location(t, "custom-a")
	f.location(t, "custom-b")
	id := *ok(f.h.CreateFleet(f.ctx, &api.CreateFleetInput{Name: api.String("x"), ComputeType: anywhere(),
		Locations: locations("custom-a", "custom-b")}))(t).FleetAttributes.FleetId
	var got []string
	var token *string
	for {
		out := ok(f.h.DescribeFleetLocationAttributes(f.ctx, &api.DescribeFleetLocationAttributesInput{
			FleetId: api.String(id), Limit: api.Int32(1), NextToken: token}))(t)
		for _, la := range out.LocationAttributes {
			got = append(got, *la.LocationState.Location+"="+string(*la.LocationState.Status))
		}
		if token = out.NextToken; token == nil || len(got) > 3 {
			break
		}
	}
	if !slices.Equal(got, []string{testRegion + "=ACTIVE", "custom-a=ACTIVE", "custom-b=ACTIVE"}) {
		t.Errorf("locations = %v", got)
	}
	only := ok(f.h.DescribeFleetLocationAttributes(f.ctx, &api.DescribeFleetLocationAttributesInput{
		FleetId: api.String(id), Locations: []string{"custom-b"}}))(t)
	if len(only.LocationAttributes) != 1 || *only.LocationAttributes[0].LocationState.Location != "custom-b" {
		t.Errorf("filtered = %+v", only.LocationAttributes)
	}
	_, err := f.h.DescribeFleetLocationAttributes(f.ctx, &api.DescribeFleetLocationAttributesInput{FleetId: api.String("fleet-nope")})
	wantCode(t, err, api.NotFoundException)
}

func TestDescribeFleetEventsTimeRangeAndPaging(t *testing.T) {
	f, _ := newHostFixture(t)
	id := f.anywhereFleet(t, "a") // FLEET_CREATED, FLEET_STATE_ACTIVE at t0
	for i := 1; i <= 3; i++ {
		f.clock.Advance(time.Minute)
		p := protectionAt(i)
		ok(f.h.UpdateFleetAttributes(f.ctx, &api.UpdateFleetAttributesInput{FleetId: api.String(id), NewGameSessionProtectionPolicy: &p}))(t)
	}
	in := &api.DescribeFleetEventsInput{FleetId: api.String(id), StartTime: api.Time(t0.Add(time.Minute)),
		EndTime: api.Time(t0.Add(2 * time.Minute)), Limit: api.Int32(1)}
	first := ok(f.h.DescribeFleetEvents(f.ctx, in))(t)
	if len(first.Events) != 1 || !first.Events[0].EventTime.Equal(t0.Add(time.Minute)) || first.NextToken == nil {
		t.Fatalf("first page = %+v", first)
	}
	in.NextToken = first.NextToken
	second := ok(f.h.DescribeFleetEvents(f.ctx, in))(t)
	if len(second.Events) != 1 || !second.Events[0].EventTime.Equal(t0.Add(2*time.Minute)) || second.NextToken != nil {
		t.Fatalf("second page = %+v", second)
	}
	if e := second.Events[0]; *e.ResourceId != id || *e.EventId == "" || *e.Message == "" {
		t.Errorf("event = %+v", e)
	}
	in.EndTime = nil
	_, err := f.h.DescribeFleetEvents(f.ctx, in)
	wantCode(t, err, api.InvalidRequestException) // the token belongs to another time range
	_, err = f.h.DescribeFleetEvents(f.ctx, &api.DescribeFleetEventsInput{FleetId: api.String("fleet-nope")})
	wantCode(t, err, api.NotFoundException)
}

// protectionAt alternates the two protection policies, starting with FullProtection.
func protectionAt(i int) api.ProtectionPolicy {
	if i%2 == 1 {
		return api.ProtectionPolicyFullProtection
	}
	return api.ProtectionPolicyNoProtection
}

// step runs one ProcessMonitor step and fails on an error.
func (f *fixture) step(t *testing.T) {
	t.Helper()
	if err := f.svc.ProcessMonitor().Step(f.ctx); err != nil {
		t.Fatal(err)
	}
}
