package gamelift

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
)

func registerInput(fleet, name, loc string) *api.RegisterComputeInput {
	return &api.RegisterComputeInput{FleetId: api.String(fleet), ComputeName: api.String(name),
		IpAddress: api.String("10.0.0.7"), Location: api.String(loc)}
}

func (f *fixture) register(t *testing.T, fleet, name string) *api.Compute {
	t.Helper()
	return ok(f.h.RegisterCompute(f.ctx, registerInput(fleet, name, "custom-loc-1")))(t).Compute
}

// token returns a fresh auth token for a compute.
func (f *fixture) token(t *testing.T, fleet, compute string) string {
	t.Helper()
	return *ok(f.h.GetComputeAuthToken(f.ctx, &api.GetComputeAuthTokenInput{
		FleetId: api.String(fleet), ComputeName: api.String(compute)}))(t).AuthToken
}

func TestRegisterAndDescribeCompute(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	c := f.register(t, fleet, "host-1")
	if *c.FleetId != fleet || *c.FleetArn != f.svc.arn(arnFleet, fleet) || *c.ComputeName != "host-1" ||
		*c.ComputeArn != "arn:aws:gamelift:us-west-2:123456789012:compute/host-1" || *c.IpAddress != "10.0.0.7" ||
		string(*c.ComputeStatus) != "Active" || *c.Location != "custom-loc-1" || !c.CreationTime.Equal(t0) ||
		*c.GameLiftServiceSdkEndpoint != testSDKEndpoint || *c.GameLiftAgentEndpoint != testAgentEndpoint {
		t.Errorf("RegisterCompute = %+v", c)
	}
	for _, name := range []string{"host-1", *c.ComputeArn} {
		got := ok(f.h.DescribeCompute(f.ctx, &api.DescribeComputeInput{FleetId: api.String(fleet), ComputeName: api.String(name)}))(t)
		if *got.Compute.ComputeName != "host-1" || *got.Compute.GameLiftServiceSdkEndpoint != testSDKEndpoint {
			t.Errorf("DescribeCompute(%s) = %+v", name, got.Compute)
		}
	}
	_, err := f.h.DescribeCompute(f.ctx, &api.DescribeComputeInput{FleetId: api.String(fleet), ComputeName: api.String("host-9")})
	wantCode(t, err, api.NotFoundException)
}

func TestRegisterComputeErrors(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	f.location(t, "custom-other")
	f.register(t, fleet, "host-1")
	noAddress := registerInput(fleet, "host-2", "custom-loc-1")
	noAddress.IpAddress = nil
	cases := map[string]struct {
		in   *api.RegisterComputeInput
		code api.ErrorCode
		msg  string
	}{
		"no Location":        {registerInput(fleet, "host-2", ""), api.InvalidRequestException, "Location is required"},
		"not a fleet locale": {registerInput(fleet, "host-2", "custom-other"), api.InvalidRequestException, "custom-other"},
		"no address":         {noAddress, api.InvalidRequestException, "IpAddress or DnsName"},
		"name taken":         {registerInput(fleet, "host-1", "custom-loc-1"), api.ConflictException, "already registered"},
		"unknown fleet":      {registerInput("fleet-nope", "host-2", "custom-loc-1"), api.InvalidRequestException, "fleet-nope"},
	}
	cases["no Location"].in.Location = nil
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			msg := f.unchanged(t, c.code, func() error { _, err := f.h.RegisterCompute(f.ctx, c.in); return err })
			if !strings.Contains(msg, c.msg) {
				t.Errorf("message %q does not mention %q", msg, c.msg)
			}
		})
	}
	dns := registerInput(fleet, "host-dns", "custom-loc-1")
	dns.IpAddress, dns.DnsName = nil, api.String("game-1.example.com")
	if c := ok(f.h.RegisterCompute(f.ctx, dns))(t).Compute; *c.DnsName != "game-1.example.com" || c.IpAddress != nil {
		t.Errorf("DNS-only compute = %+v", c)
	}
	ok(f.h.DeleteFleet(f.ctx, &api.DeleteFleetInput{FleetId: api.String(fleet)}))(t)
	f.unchanged(t, api.ConflictException, func() error {
		_, err := f.h.RegisterCompute(f.ctx, registerInput(fleet, "host-3", "custom-loc-1"))
		return err
	})
}

func TestListCompute(t *testing.T) {
	f, _ := newHostFixture(t)
	f.location(t, "custom-loc-1")
	f.location(t, "custom-loc-2")
	fleet := *ok(f.h.CreateFleet(f.ctx, &api.CreateFleetInput{Name: api.String("x"), ComputeType: anywhere(),
		Locations: locations("custom-loc-1", "custom-loc-2")}))(t).FleetAttributes.FleetId
	other := f.anywhereFleet(t, "other")
	f.register(t, other, "host-x")
	for i, loc := range []string{"custom-loc-1", "custom-loc-2", "custom-loc-1"} {
		ok(f.h.RegisterCompute(f.ctx, registerInput(fleet, "host-"+string(rune('a'+i)), loc)))(t)
	}
	list := func(in *api.ListComputeInput) []string {
		var names []string
		in.FleetId, in.Limit = api.String(fleet), api.Int32(1)
		for n := 0; n < 10; n++ {
			out := ok(f.h.ListCompute(f.ctx, in))(t)
			for _, c := range out.ComputeList {
				names = append(names, *c.ComputeName)
			}
			if in.NextToken = out.NextToken; in.NextToken == nil {
				break
			}
		}
		return names
	}
	active, impaired := api.ListComputeInputStatusActive, api.ListComputeInputStatusImpaired
	for name, c := range map[string]struct {
		in   *api.ListComputeInput
		want []string
	}{
		"all":          {&api.ListComputeInput{}, []string{"host-a", "host-b", "host-c"}},
		"one location": {&api.ListComputeInput{Location: api.String("custom-loc-1")}, []string{"host-a", "host-c"}},
		"ACTIVE":       {&api.ListComputeInput{ComputeStatus: &active}, []string{"host-a", "host-b", "host-c"}},
		"IMPAIRED":     {&api.ListComputeInput{ComputeStatus: &impaired}, nil},
	} {
		if got := list(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%s: ListCompute = %v, want %v", name, got, c.want)
		}
	}
	_, err := f.h.ListCompute(f.ctx, &api.ListComputeInput{FleetId: api.String("fleet-nope")})
	wantCode(t, err, api.InvalidRequestException)
}

func TestComputeAuthTokens(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	f.register(t, fleet, "host-1")
	f.register(t, fleet, "host-2")
	out := ok(f.h.GetComputeAuthToken(f.ctx, &api.GetComputeAuthTokenInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")}))(t)
	if *out.FleetId != fleet || *out.ComputeName != "host-1" || !strings.HasSuffix(*out.ComputeArn, ":compute/host-1") ||
		!out.ExpirationTimestamp.Equal(t0.Add(DefaultComputeAuthTokenLifetime)) || len(*out.AuthToken) != 36 {
		t.Errorf("GetComputeAuthToken = %+v", out)
	}
	tok := *out.AuthToken
	if again := f.token(t, fleet, "host-1"); again == tok {
		t.Error("two tokens are the same")
	}
	ref := ProcessRef{FleetID: fleet, ComputeName: "host-1", ProcessID: "p-1"}
	for name, c := range map[string]struct {
		ref   ProcessRef
		token string
	}{
		"other compute": {ProcessRef{FleetID: fleet, ComputeName: "host-2", ProcessID: "p-1"}, tok},
		"unknown token": {ref, "00000000-0000-4000-8000-000000000000"},
		"no token":      {ref, ""},
	} {
		t.Run(name, func(t *testing.T) {
			f.unchanged(t, api.UnauthorizedException, func() error { return f.svc.AuthenticateProcess(f.ctx, c.ref, c.token) })
		})
	}
	f.clock.Advance(DefaultComputeAuthTokenLifetime - time.Millisecond)
	if err := f.svc.AuthenticateProcess(f.ctx, ref, tok); err != nil {
		t.Fatalf("token rejected before it expires: %v", err)
	}
	f.clock.Advance(time.Millisecond)
	wantCode(t, f.svc.AuthenticateProcess(f.ctx, ref, tok), api.UnauthorizedException)
	f.step(t)
	if _, err := f.store.Get(f.ctx, kindComputeToken, tok); err == nil {
		t.Error("expired token not purged by the monitor")
	}
	_, err := f.h.GetComputeAuthToken(f.ctx, &api.GetComputeAuthTokenInput{FleetId: api.String(fleet), ComputeName: api.String("host-9")})
	wantCode(t, err, api.NotFoundException)
	_, err = f.h.GetComputeAuthToken(f.ctx, &api.GetComputeAuthTokenInput{FleetId: api.String("fleet-nope"), ComputeName: api.String("host-1")})
	wantCode(t, err, api.NotFoundException)
}

func TestDeregisterCompute(t *testing.T) {
	f, n := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	f.register(t, fleet, "host-1")
	f.register(t, fleet, "host-2")
	tok1, tok2 := f.token(t, fleet, "host-1"), f.token(t, fleet, "host-2")
	p1 := ProcessRef{FleetID: fleet, ComputeName: "host-1", ProcessID: "p-1"}
	p2 := ProcessRef{FleetID: fleet, ComputeName: "host-2", ProcessID: "p-2"}
	for ref, tok := range map[ProcessRef]string{p1: tok1, p2: tok2} {
		if err := f.svc.AuthenticateProcess(f.ctx, ref, tok); err != nil {
			t.Fatal(err)
		}
	}
	ok(f.h.DeregisterCompute(f.ctx, &api.DeregisterComputeInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")}))(t)
	if got := n.pushes(); len(got) != 1 || got[0].Ref != p1 || !got[0].At.Equal(t0.Add(DefaultTerminationGracePeriod)) {
		t.Errorf("pushes = %+v, want TerminateProcess to p-1 only", got)
	}
	wantCode(t, f.svc.AuthenticateProcess(f.ctx, ProcessRef{FleetID: fleet, ComputeName: "host-1", ProcessID: "p-3"}, tok1),
		api.UnauthorizedException)
	_, err := f.h.DescribeCompute(f.ctx, &api.DescribeComputeInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")})
	wantCode(t, err, api.NotFoundException)
	f.unchanged(t, api.NotFoundException, func() error {
		_, err := f.h.DeregisterCompute(f.ctx, &api.DeregisterComputeInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")})
		return err
	})
}

func TestGetComputeAccessIsNotForAnywhere(t *testing.T) {
	f, _ := newHostFixture(t)
	fleet := f.anywhereFleet(t, "a")
	f.register(t, fleet, "host-1")
	_, err := f.h.GetComputeAccess(f.ctx, &api.GetComputeAccessInput{FleetId: api.String(fleet), ComputeName: api.String("host-1")})
	if msg := wantCode(t, err, api.InvalidRequestException); !strings.Contains(msg, "ANYWHERE") {
		t.Errorf("message %q", msg)
	}
	_, err = f.h.GetComputeAccess(f.ctx, &api.GetComputeAccessInput{FleetId: api.String(fleet), ComputeName: api.String("host-9")})
	wantCode(t, err, api.NotFoundException)
}
