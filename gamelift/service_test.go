package gamelift

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/api"
	"github.com/hoist-gg/hoist/internal/clock"
	"github.com/hoist-gg/hoist/store"
	"github.com/hoist-gg/hoist/store/sqlite"
)

const (
	testRegion  = "us-west-2"
	testAccount = "123456789012"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// fixture is a Service on a real SQLite store in a temporary directory, with a fake clock
// and predictable IDs.
type fixture struct {
	svc   *Service
	h     *api.Handlers
	store store.Store
	clock *clock.Fake
	ctx   context.Context
}

// tempStore opens an embedded store in a temporary directory, closed when the test ends.
func tempStore(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newFixture(t testing.TB, account string) *fixture {
	t.Helper()
	st := tempStore(t)
	clk := clock.NewFake(t0)
	n := 0
	svc := New(Config{Store: st, Clock: clk, Region: testRegion, AccountID: account, NewID: func() string {
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	}})
	// fleet1, the fleet the alias and tag tests route to, exists: aliases need existing fleets.
	err := st.Update(context.Background(), func(tx store.Tx) error {
		return insertDoc(tx, kindFleet, fleet1, &fleetDoc{ID: fleet1, Name: "fixture", Status: fleetActive,
			ComputeType: string(api.ComputeTypeAnywhere), Locations: []string{}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, h: svc.Handlers(), store: st, clock: clk, ctx: context.Background()}
}

// wantCode fails unless err is an *api.Error with code; it returns the message.
func wantCode(t *testing.T, err error, code api.ErrorCode) string {
	t.Helper()
	var e *api.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v, want %s", err, code)
	}
	if e.Code != code {
		t.Fatalf("error = %s: %s, want %s", e.Code, e.Message, code)
	}
	return e.Message
}

// ok wraps a handler's results: ok(h.X(ctx, in))(t) fails the test on an error and returns
// the output.
func ok[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// snapshot returns every stored record of the kinds this package owns, to show that a failed
// operation changed nothing.
func (f *fixture) snapshot(t *testing.T) string {
	t.Helper()
	return f.snapshotOf(t, kindAlias, kindBuild, kindLocation, kindFleet, kindCompute,
		kindComputeToken, kindProcess, kindFleetEvent, kindQueue, kindPlacement, kindOutbox)
}

// snapshotOf renders every record of the given kinds.
func (f *fixture) snapshotOf(t *testing.T, kinds ...string) string {
	t.Helper()
	var b bytes.Buffer
	err := f.store.View(f.ctx, func(tx store.Tx) error {
		for _, kind := range kinds {
			recs, err := tx.List(kind, store.ListOptions{})
			if err != nil {
				return err
			}
			for _, r := range recs {
				fmt.Fprintf(&b, "%s/%s v%d %s\n", r.Kind, r.ID, r.Version, r.Data)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// unchanged runs op, which must fail with code, and checks the store did not change.
func (f *fixture) unchanged(t *testing.T, code api.ErrorCode, op func() error) string {
	t.Helper()
	before := f.snapshot(t)
	msg := wantCode(t, op(), code)
	if after := f.snapshot(t); after != before {
		t.Fatalf("store changed by a failed operation:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	return msg
}

func TestNewDefaults(t *testing.T) {
	svc := New(Config{})
	if svc.region != DefaultRegion || svc.clock == nil || svc.newID == nil {
		t.Fatalf("defaults not filled: %+v", svc)
	}
	if a, b := svc.newID(), svc.newID(); a == b || len(a) != 36 {
		t.Fatalf("default IDs %q, %q are not distinct UUIDs", a, b)
	}
}

func TestHandlersSetsEveryImplementedOperation(t *testing.T) {
	h := newFixture(t, "").h
	want := []string{"CreateLocation", "ListLocations", "DeleteLocation", "CreateBuild", "DescribeBuild",
		"ListBuilds", "UpdateBuild", "DeleteBuild", "CreateAlias", "DescribeAlias", "ListAliases",
		"UpdateAlias", "DeleteAlias", "ResolveAlias", "TagResource", "UntagResource", "ListTagsForResource",
		"CreateFleet", "DescribeFleetAttributes", "ListFleets", "UpdateFleetAttributes", "DeleteFleet",
		"DescribeRuntimeConfiguration", "UpdateRuntimeConfiguration", "DescribeFleetUtilization",
		"DescribeFleetLocationAttributes", "DescribeFleetEvents", "RegisterCompute", "DeregisterCompute",
		"DescribeCompute", "ListCompute", "GetComputeAuthToken", "GetComputeAccess",
		"CreateGameServerGroup", "DescribeGameServerGroup", "ListGameServerGroups", "UpdateGameServerGroup",
		"DeleteGameServerGroup", "SuspendGameServerGroup", "ResumeGameServerGroup", "DescribeGameServerInstances",
		"RegisterGameServer", "DescribeGameServer", "ListGameServers", "UpdateGameServer", "DeregisterGameServer",
		"ClaimGameServer",
		"CreateGameSession", "DescribeGameSessions", "DescribeGameSessionDetails", "SearchGameSessions",
		"UpdateGameSession", "TerminateGameSession", "GetGameSessionLogUrl", "CreatePlayerSession",
		"CreatePlayerSessions", "DescribePlayerSessions", "RequestUploadCredentials",
		"UpdateFleetCapacity", "DescribeFleetCapacity", "DescribeFleetPortSettings", "UpdateFleetPortSettings",
		"StartFleetActions", "StopFleetActions", "DescribeEC2InstanceLimits", "DescribeInstances", "GetInstanceAccess",
		"CreateFleetLocations", "DeleteFleetLocations", "DescribeFleetLocationCapacity", "DescribeFleetLocationUtilization",
		"CreateGameSessionQueue", "DescribeGameSessionQueues", "UpdateGameSessionQueue", "DeleteGameSessionQueue",
		"StartGameSessionPlacement", "DescribeGameSessionPlacement", "StopGameSessionPlacement",
		"CreateMatchmakingRuleSet", "DescribeMatchmakingRuleSets", "DeleteMatchmakingRuleSet", "ValidateMatchmakingRuleSet",
		"CreateMatchmakingConfiguration", "DescribeMatchmakingConfigurations", "UpdateMatchmakingConfiguration",
		"DeleteMatchmakingConfiguration", "StartMatchmaking", "DescribeMatchmaking", "StopMatchmaking", "AcceptMatch",
		"StartMatchBackfill", "PutScalingPolicy", "DescribeScalingPolicies", "DeleteScalingPolicy"}
	v := reflect.ValueOf(h).Elem()
	set := 0
	for i := 0; i < v.NumField(); i++ {
		if !v.Field(i).IsNil() {
			set++
		}
	}
	for _, name := range want {
		if v.FieldByName(name).IsNil() {
			t.Errorf("Handlers.%s is not set", name)
		}
	}
	if set != len(want) {
		t.Errorf("%d handlers set, want %d", set, len(want))
	}
}

// TestDomainImports enforces the layering rule: the domain imports no transport, no SQL and no
// codec beyond what the api package itself needs.
func TestDomainImports(t *testing.T) {
	deps := goListDeps(t, ".")
	allowed := map[string]bool{
		"github.com/hoist-gg/hoist/gamelift":              true,
		"github.com/hoist-gg/hoist/gamelift/sessionquery": true,
		"github.com/hoist-gg/hoist/gamelift/flexmatch":    true,
		"github.com/google/btree":                         true,
		"github.com/hoist-gg/hoist/store":                 true,
		"github.com/hoist-gg/hoist/internal/clock":        true,
		"github.com/google/uuid":                          true,
		"golang.org/x/sync/singleflight":                  true,
	}
	for p, std := range goListDeps(t, "../api") {
		if !std {
			allowed[p] = true
		}
	}
	// database/sql/driver (interfaces only) stays allowed: github.com/google/uuid imports it.
	banned := func(p string) bool {
		return p == "net/http" || strings.HasPrefix(p, "net/http/") || p == "database/sql" || p == "encoding/xml"
	}
	for p, std := range deps {
		if banned(p) {
			t.Errorf("gamelift depends on %s", p)
		}
		if !std && !allowed[p] {
			t.Errorf("gamelift depends on non-standard package %s", p)
		}
	}
}

// goListDeps returns the packages dir depends on (itself included), each with whether it is
// in the standard library.
func goListDeps(t *testing.T, dir string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", dir).Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, std, _ := strings.Cut(line, " ")
		deps[p] = std == "true"
	}
	if len(deps) < 2 {
		t.Fatalf("go list found too few packages: %q", out)
	}
	return deps
}
