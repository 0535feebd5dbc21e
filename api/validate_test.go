package api

import (
	"reflect"
	"strings"
	"testing"
)

// validationErrors runs Validate and returns the individual violations.
func validationErrors(t *testing.T, in any) []string {
	t.Helper()
	err := Validate(in)
	if err == nil {
		return nil
	}
	if err.Code != InvalidRequestException {
		t.Fatalf("Validate returned %s", err.Code)
	}
	_, list, ok := strings.Cut(err.Message, "detected: ")
	if !ok {
		t.Fatalf("unexpected message %q", err.Message)
	}
	return strings.Split(list, "; ")
}

// expectErrors checks that in fails with one violation per want, each containing its string.
func expectErrors(t *testing.T, in any, want ...string) {
	t.Helper()
	got := validationErrors(t, in)
	if len(got) != len(want) {
		t.Fatalf("got %d violations %q, want %d naming %q", len(got), got, len(want), want)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("violation %d = %q, want it to contain %q", i, got[i], want[i])
		}
	}
}

func validAlias() *CreateAliasInput {
	return &CreateAliasInput{
		Name:            String("my alias"),
		RoutingStrategy: &RoutingStrategy{Type: new(RoutingStrategyTypeSimple), FleetId: String("fleet-1234")},
		Tags:            []Tag{{Key: String("k"), Value: String("v")}},
	}
}

func TestValidateCreateAlias(t *testing.T) {
	if err := Validate(validAlias()); err != nil {
		t.Fatalf("valid input rejected: %v", err)
	}
	expectErrors(t, &CreateAliasInput{}, "at 'name' failed to satisfy constraint: Member must not be null",
		"at 'routingStrategy' failed to satisfy constraint: Member must not be null")
	if err := Validate(&CreateAliasInput{}); !strings.HasPrefix(err.Message, "2 validation errors detected") {
		t.Errorf("message %q", err.Message)
	}

	long := validAlias()
	long.Name = String(strings.Repeat("x", 1025))
	expectErrors(t, long, "at 'name' failed to satisfy constraint: Member must have length less than or equal to 1024")
	long.Name = String(strings.Repeat("x", 1024))
	expectErrors(t, long)

	blank := validAlias()
	blank.Name = String("   ")
	expectErrors(t, blank, "at 'name' failed to satisfy constraint: Member must satisfy regular expression pattern: .*\\S.*")

	badEnum := validAlias()
	badEnum.RoutingStrategy.Type = new(RoutingStrategyType("BOGUS"))
	expectErrors(t, badEnum, "Value 'BOGUS' at 'routingStrategy.type' failed to satisfy constraint: Member must satisfy enum value set: [SIMPLE, TERMINAL]")

	badFleet := validAlias()
	badFleet.RoutingStrategy.FleetId = String("fleet-1/2") // '/' is outside the model pattern
	expectErrors(t, badFleet, "at 'routingStrategy.fleetId' failed to satisfy constraint: Member must satisfy regular expression pattern")
}

func TestValidateNestedInList(t *testing.T) {
	in := validAlias()
	in.Tags = append(in.Tags, Tag{Key: String("k2")}, Tag{Value: String("v3"), Key: String("")})
	expectErrors(t, in,
		"at 'tags.2.member.value' failed to satisfy constraint: Member must not be null",
		"Value '' at 'tags.3.member.key' failed to satisfy constraint: Member must have length greater than or equal to 1")
	in.Tags = make([]Tag, 201)
	got := validationErrors(t, in)
	if len(got) != 1+201*2 || !strings.Contains(got[0], "Value '201 items' at 'tags'") {
		t.Errorf("got %d violations, first %q", len(got), got[0])
	}
}

func TestValidateMapKeysAndValues(t *testing.T) {
	in := &StartMatchmakingInput{
		ConfigurationName: String("config"),
		Players: []Player{{
			PlayerId:         String("p1"),
			PlayerAttributes: map[string]AttributeValue{"": {N: Float64(1)}, "ok": {S: String("")}},
			LatencyInMs:      map[string]int32{"us-east-1": 0},
		}},
	}
	expectErrors(t, in,
		"at 'players.1.member.latencyInMs.us-east-1' failed to satisfy constraint: Member must have value greater than or equal to 1",
		"Value '' at 'players.1.member.playerAttributes.' failed to satisfy constraint: Member must have length greater than or equal to 1",
		"Value '' at 'players.1.member.playerAttributes.ok.s' failed to satisfy constraint: Member must have length greater than or equal to 1")
}

func TestValidateRanges(t *testing.T) {
	expectErrors(t, &ListAliasesInput{Limit: Int32(0)}, "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1")
	expectErrors(t, &ListAliasesInput{Limit: Int32(1)})
	expectErrors(t, &ListAliasesInput{Name: String("")}, "at 'name' failed to satisfy constraint: Member must have length greater than or equal to 1")
	cpu := &ContainerGroupDefinition{TotalVcpuLimit: Float64(0.1)}
	v := &validator{}
	cpu.validate(v, "")
	if len(v.errs) != 2 || !strings.Contains(v.errs[1], "'totalVcpuLimit' failed to satisfy constraint: Member must have value greater than or equal to 0.125") {
		t.Errorf("got %q", v.errs)
	}
}

func TestValidateCreateLocation(t *testing.T) {
	expectErrors(t, &CreateLocationInput{LocationName: String("custom-ok1")})
	expectErrors(t, &CreateLocationInput{LocationName: String("bad")},
		"Value 'bad' at 'locationName' failed to satisfy constraint: Member must have length greater than or equal to 8",
		"Value 'bad' at 'locationName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^custom-[A-Za-z0-9\\-]+")
	expectErrors(t, &CreateLocationInput{LocationName: String("custom-bad!")}, "must satisfy regular expression pattern")
}

// TestValidateEmptyInputs validates the zero input of every operation: it must name exactly
// the input's required members, at top level, since required members of absent nested
// structures are not checked.
func TestValidateEmptyInputs(t *testing.T) {
	m := loadModel(t)
	for _, op := range Operations {
		in := op.NewInput()
		got := validationErrors(t, in)
		req := m.Shapes[reflect.TypeOf(in).Elem().Name()].Required
		if len(got) != len(req) {
			t.Errorf("%s: %d violations %q, want %d", op.Name, len(got), got, len(req))
			continue
		}
		for i, r := range req {
			want := "at '" + strings.ToLower(r[:1]) + r[1:] + "' failed to satisfy constraint: Member must not be null"
			if !strings.Contains(strings.Join(got, ";"), want) {
				t.Errorf("%s: violations %q miss %q (%d)", op.Name, got, want, i)
			}
		}
	}
	var nilInput *CreateAliasInput
	if err := Validate(nilInput); err != nil {
		t.Errorf("nil input: %v", err)
	}
}

// TestModelPatternsCompile checks every model pattern compiles with fullMatch. The few that use
// ECMA \u escapes are translated by the generator (api/gen tests that translation); the
// compiled package-level patterns prove it worked, since a failure panics at init.
func TestModelPatternsCompile(t *testing.T) {
	m := loadModel(t)
	n := 0
	for name, s := range m.Shapes {
		if s.Pattern == "" || strings.Contains(s.Pattern, `\u`) {
			continue
		}
		n++
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: pattern %q: %v", name, s.Pattern, r)
				}
			}()
			fullMatch(s.Pattern)
		}()
	}
	if n < 60 {
		t.Errorf("only %d patterns checked", n)
	}
	if !rxLaunchTemplateId.MatchString("lt-😀\tx") || rxLaunchTemplateId.MatchString("a\x00") {
		t.Error("translated XML-character pattern does not behave")
	}
}
