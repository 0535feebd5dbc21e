package flexmatch

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// testAttrs are the player attributes of most test rule sets: one or two of every type.
const testAttrs = `[
	{"name": "skill", "type": "number", "default": 10},
	{"name": "level", "type": "number"},
	{"name": "mode", "type": "string", "default": "casual"},
	{"name": "maps", "type": "string_list", "default": ["dust"]},
	{"name": "blocked", "type": "string_list", "default": []},
	{"name": "prefs", "type": "string_number_map", "default": {"dust": 1}}
]`

// testTeams are the teams of most test rule sets: two teams of 2 to 4.
const testTeams = `[{"name": "red", "maxPlayers": 4, "minPlayers": 2}, {"name": "blue", "maxPlayers": 4, "minPlayers": 2}]`

// body is a test rule set body; empty attrs and teams take testAttrs and testTeams, and
// rules and exps are the contents of their arrays.
type body struct{ attrs, algo, teams, rules, exps string }

// json writes the body.
func (b body) json() string {
	if b.attrs == "" {
		b.attrs = testAttrs
	}
	if b.teams == "" {
		b.teams = testTeams
	}
	s := `{"name": "test", "ruleLanguageVersion": "1.0", "playerAttributes": ` + b.attrs + `, "teams": ` + b.teams
	if b.algo != "" {
		s += `, "algorithm": ` + b.algo
	}
	if b.rules != "" {
		s += `, "rules": [` + b.rules + `]`
	}
	if b.exps != "" {
		s += `, "expansions": [` + b.exps + `]`
	}
	return s + "}"
}

// withRules is a body with the test attributes and teams and the given rules.
func withRules(rules ...string) string { return body{rules: strings.Join(rules, ", ")}.json() }

// f64 returns a pointer to n.
func f64(n float64) *float64 { return &n }

// str returns a pointer to s.
func str(s string) *string { return &s }

// parseOK parses a body that must be valid.
func parseOK(t *testing.T, b string) *RuleSet {
	t.Helper()
	rs, err := Parse([]byte(b))
	if err != nil {
		t.Fatalf("Parse: %v\nbody: %s", err, b)
	}
	return rs
}

// wantError checks that Parse rejects b with an error containing want.
func wantError(t *testing.T, b, want string) {
	t.Helper()
	_, err := Parse([]byte(b))
	if err == nil || !strings.Contains(err.Error(), want) {
		if len(b) > 2000 {
			b = b[:2000] + "..."
		}
		t.Errorf("Parse error = %v\nwant it to contain %q\nbody: %s", err, want, b)
	}
}

// validRuleTests are valid rules of every type with what Parse makes of them.
var validRuleTests = []struct {
	name, rule string
	want       Rule
}{
	{"comparison with a number", `{"name": "R", "type": "comparison", "measurements": ["teams[red].players.attributes[skill]"],
		"referenceValue": 5, "operation": ">="}`,
		Rule{Name: "R", Type: RuleComparison, Measurements: []*Expr{attrSel("skill", "red")},
			ReferenceValue: &Operand{Num: f64(5)}, Operation: ">=", PartyAggregation: "avg"}},
	{"comparison with a numeric string", `{"name": "R", "type": "comparison", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": "5.5", "operation": "<", "partyAggregation": "max"}`,
		Rule{Name: "R", Type: RuleComparison, Measurements: []*Expr{attrSel("skill", "red")},
			ReferenceValue: &Operand{Num: f64(5.5)}, Operation: "<", PartyAggregation: "max"}},
	{"comparison with a literal string", `{"name": "R", "description": "same mode", "type": "comparison",
		"measurements": ["flatten(teams[*].players.attributes[mode])"], "referenceValue": "ranked", "operation": "="}`,
		Rule{Name: "R", Description: "same mode", Type: RuleComparison,
			Measurements:   []*Expr{fn("flatten", attrSel("mode", "*"))},
			ReferenceValue: &Operand{Str: str("ranked")}, Operation: "=", PartyAggregation: "avg"}},
	{"comparison with an expression", `{"name": "R", "type": "comparison", "measurements": ["count(teams[red].players)"],
		"referenceValue": "count(teams[blue].players)", "operation": "="}`,
		Rule{Name: "R", Type: RuleComparison, Measurements: []*Expr{fn("count", sel("red"))},
			ReferenceValue: &Operand{Expr: fn("count", sel("blue"))}, Operation: "=", PartyAggregation: "avg"}},
	{"comparison across players", `{"name": "R", "type": "comparison", "operation": "!=",
		"measurements": ["flatten(teams[*].players.attributes[level])"]}`,
		Rule{Name: "R", Type: RuleComparison, Measurements: []*Expr{fn("flatten", attrSel("level", "*"))},
			Operation: "!=", PartyAggregation: "avg"}},
	{"distance", `{"name": "R", "type": "distance", "measurements": ["avg(teams[*].players.attributes[skill])"],
		"referenceValue": "avg(flatten(teams[*].players.attributes[skill]))", "maxDistance": 10, "partyAggregation": "min"}`,
		Rule{Name: "R", Type: RuleDistance, Measurements: []*Expr{fn("avg", attrSel("skill", "*"))},
			ReferenceValue: &Operand{Expr: fn("avg", fn("flatten", attrSel("skill", "*")))},
			MaxDistance:    f64(10), PartyAggregation: "min"}},
	{"distance with both bounds and a literal", `{"name": "R", "type": "distance",
		"measurements": "teams[red].players.attributes[level]", "referenceValue": 30, "minDistance": "1", "maxDistance": 5}`,
		Rule{Name: "R", Type: RuleDistance, Measurements: []*Expr{attrSel("level", "red")},
			ReferenceValue: &Operand{Num: f64(30)}, MinDistance: f64(1), MaxDistance: f64(5), PartyAggregation: "avg"}},
	{"collection intersection", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": ["flatten(teams[*].players.attributes[maps])"], "minCount": 1}`,
		Rule{Name: "R", Type: RuleCollection, Measurements: []*Expr{fn("flatten", attrSel("maps", "*"))},
			Operation: "intersection", MinCount: f64(1), PartyAggregation: "union"}},
	{"collection contains", `{"name": "R", "type": "collection", "operation": "contains", "partyAggregation": "intersection",
		"measurements": ["flatten(teams[*].players.attributes[maps])"], "referenceValue": "dust", "maxCount": 2}`,
		Rule{Name: "R", Type: RuleCollection, Measurements: []*Expr{fn("flatten", attrSel("maps", "*"))},
			Operation: "contains", ReferenceValue: &Operand{Str: str("dust")}, MaxCount: f64(2), PartyAggregation: "intersection"}},
	{"collection reference_intersection_count with a list", `{"name": "R", "type": "collection",
		"operation": "reference_intersection_count", "measurements": ["teams[red].players.attributes[maps]"],
		"referenceValue": ["dust", "mirage"], "minCount": 1, "maxCount": 2}`,
		Rule{Name: "R", Type: RuleCollection, Measurements: []*Expr{attrSel("maps", "red")},
			Operation: "reference_intersection_count", ReferenceValue: &Operand{List: []string{"dust", "mirage"}},
			MinCount: f64(1), MaxCount: f64(2), PartyAggregation: "union"}},
	{"collection block list", `{"name": "R", "type": "collection", "operation": "reference_intersection_count",
		"measurements": "flatten(teams[*].players.attributes[blocked])", "referenceValue": "flatten(teams[*].players[playerId])",
		"maxCount": 0}`,
		Rule{Name: "R", Type: RuleCollection, Measurements: []*Expr{fn("flatten", attrSel("blocked", "*"))},
			Operation:      "reference_intersection_count",
			ReferenceValue: &Operand{Expr: fn("flatten", &Expr{Teams: []string{"*"}, PlayerID: true})},
			MaxCount:       f64(0), PartyAggregation: "union"}},
	{"latency maxLatency", `{"name": "R", "type": "latency", "maxLatency": 150}`,
		Rule{Name: "R", Type: RuleLatency, MaxLatency: f64(150), PartyAggregation: "avg"}},
	{"latency maxDistance defaults to min", `{"name": "R", "type": "latency", "maxDistance": 40}`,
		Rule{Name: "R", Type: RuleLatency, MaxDistance: f64(40), DistanceReference: "min", PartyAggregation: "avg"}},
	{"latency with avg reference", `{"name": "R", "type": "latency", "maxLatency": 100, "maxDistance": 40,
		"distanceReference": "avg", "partyAggregation": "max"}`,
		Rule{Name: "R", Type: RuleLatency, MaxLatency: f64(100), MaxDistance: f64(40), DistanceReference: "avg",
			PartyAggregation: "max"}},
	{"batchDistance on a number", `{"name": "R", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": "500"}`,
		Rule{Name: "R", Type: RuleBatchDistance, BatchAttribute: "skill", MaxDistance: f64(500), PartyAggregation: "avg"}},
	{"batchDistance on a string", `{"name": "R", "type": "batchDistance", "batchAttribute": "mode"}`,
		Rule{Name: "R", Type: RuleBatchDistance, BatchAttribute: "mode", PartyAggregation: "avg"}},
	{"absoluteSort on a number", `{"name": "R", "type": "absoluteSort", "sortAttribute": "skill"}`,
		Rule{Name: "R", Type: RuleAbsoluteSort, SortAttribute: "skill", SortDirection: "ascending", PartyAggregation: "avg"}},
	{"absoluteSort on a map", `{"name": "R", "type": "absoluteSort", "sortAttribute": "prefs", "mapKey": "maxValue",
		"sortDirection": "descending"}`,
		Rule{Name: "R", Type: RuleAbsoluteSort, SortAttribute: "prefs", MapKey: "maxValue", SortDirection: "descending",
			PartyAggregation: "avg"}},
	{"distanceSort", `{"name": "R", "type": "distanceSort", "sortAttribute": "level", "partyAggregation": "min"}`,
		Rule{Name: "R", Type: RuleDistanceSort, SortAttribute: "level", SortDirection: "ascending", PartyAggregation: "min"}},
}

func TestParseRulesValid(t *testing.T) {
	for _, tt := range validRuleTests {
		t.Run(tt.name, func(t *testing.T) {
			rs := parseOK(t, withRules(tt.rule))
			if got := rs.Rules[0]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rule = %+v\nwant   %+v", got, tt.want)
			}
		})
	}
}

func TestParseCompound(t *testing.T) {
	rs := parseOK(t, withRules(
		`{"name": "Ranked", "type": "comparison", "measurements": "flatten(teams[*].players.attributes[mode])",
			"referenceValue": "ranked", "operation": "="}`,
		`{"name": "Close", "type": "distance", "measurements": "teams[*].players.attributes[skill]",
			"referenceValue": "avg(flatten(teams[*].players.attributes[skill]))", "maxDistance": 5}`,
		`{"name": "Fast", "type": "latency", "maxLatency": 50}`,
		`{"name": "Either", "type": "compound", "statement": "or(and(Ranked, Close), not(Ranked))"}`,
		`{"name": "Outer", "type": "compound", "statement": "xor(Either, Fast)"}`))
	want := &Statement{Op: "or", Args: []*Statement{
		{Op: "and", Args: []*Statement{{Rule: "Ranked"}, {Rule: "Close"}}},
		{Op: "not", Args: []*Statement{{Rule: "Ranked"}}},
	}}
	if got := rs.Rules[3]; !reflect.DeepEqual(got.Statement, want) || got.PartyAggregation != "" {
		t.Errorf("compound = %+v", got)
	}
	if got := rs.Rules[4].Statement; got.Op != "xor" || got.Args[0].Rule != "Either" {
		t.Errorf("compound over a compound = %+v", got)
	}
}

// ruleErrorTests are invalid rules and what Parse says of them.
var ruleErrorTests = []struct{ name, rule, want string }{
	// every rule
	{"no name", `{"type": "latency", "maxLatency": 5}`, "rules[0]: name is required"},
	{"empty name", `{"name": "", "type": "latency", "maxLatency": 5}`, "rules[0]: name must not be empty"},
	{"no type", `{"name": "R"}`, `rules[0] "R": type is required`},
	{"unknown type", `{"name": "R", "type": "distanse"}`, `rules[0] "R": unknown type "distanse"`},
	{"unknown key", `{"name": "R", "type": "latency", "maxLatency": 5, "maxLatancy": 6}`,
		`rules[0] "R": unknown key "maxLatancy"`},
	{"key of another type", `{"name": "R", "type": "latency", "maxLatency": 5, "sortAttribute": "skill"}`,
		`unknown key "sortAttribute"`},
	{"description not a string", `{"name": "R", "description": 5, "type": "latency", "maxLatency": 5}`,
		"description must be a string, got 5"},
	{"not an object", `"R"`, `rules[0] must be an object, got a string`},
	// comparison
	{"comparison without measurements", `{"name": "R", "type": "comparison", "operation": "="}`,
		`rules[0] "R": measurements is required`},
	{"comparison without operation", `{"name": "R", "type": "comparison", "measurements": "teams[red].players.attributes[skill]"}`,
		"operation is required (one of <, <=, =, !=, >, >=)"},
	{"comparison bad operation", `{"name": "R", "type": "comparison", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 1, "operation": "=="}`, `operation must be one of <, <=, =, !=, >, >=, got "=="`},
	{"comparison across players with <", `{"name": "R", "type": "comparison", "operation": "<",
		"measurements": "teams[red].players.attributes[skill]"}`, "without a referenceValue the operation must be = or !="},
	{"comparison of strings with <", `{"name": "R", "type": "comparison", "operation": "<", "referenceValue": "a",
		"measurements": "teams[red].players.attributes[mode]"}`, "strings compare only with = or !="},
	{"comparison number with string", `{"name": "R", "type": "comparison", "operation": "=", "referenceValue": "abc",
		"measurements": "teams[red].players.attributes[skill]"}`,
		`referenceValue must be a number or an expression giving one number, got "abc"`},
	{"comparison string with number", `{"name": "R", "type": "comparison", "operation": "=", "referenceValue": 3,
		"measurements": "teams[red].players.attributes[mode]"}`, "referenceValue must be a string or an expression giving one string, got 3"},
	{"comparison of lists", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": "teams[red].players.attributes[maps]"}`, "a comparison rule measures numbers or strings"},
	{"comparison of players", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": "teams[red].players"}`, "this gives a list of players"},
	{"comparison mixed measurements", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": ["teams[red].players.attributes[skill]", "teams[red].players.attributes[mode]"]}`,
		`measurements[1] "teams[red].players.attributes[mode]" gives strings, but the measurements before it give numbers`},
	{"comparison reference gives a list", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": "teams[red].players.attributes[skill]", "referenceValue": "teams[blue].players.attributes[skill]"}`,
		"; \"teams[blue].players.attributes[skill]\" gives a list of numbers"},
	{"comparison bad party aggregation", `{"name": "R", "type": "comparison", "operation": "=", "partyAggregation": "union",
		"measurements": "teams[red].players.attributes[skill]"}`, `partyAggregation must be one of min, max, avg, got "union"`},
	{"measurements empty", `{"name": "R", "type": "comparison", "operation": "=", "measurements": []}`,
		"measurements must not be empty"},
	{"measurements not strings", `{"name": "R", "type": "comparison", "operation": "=", "measurements": [1]}`,
		"measurements must be a string or a list of strings, got [1]"},
	{"measurement not an expression", `{"name": "R", "type": "comparison", "operation": "=", "measurements": ["skill"]}`,
		`measurements[0] "skill": at character 1: unknown function "skill"`},
	{"measurement names an unknown team", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": "avg(teams[reed].players.attributes[skill])"}`,
		`rules[0] "R": measurements "avg(teams[reed].players.attributes[skill])": no team named reed`},
	{"measurement names an unknown attribute", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": ["teams[red].players.attributes[skil]"]}`, "no player attribute named skil"},
	{"reference names an unknown team", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": ["teams[red].players.attributes[skill]"], "referenceValue": "avg(teams[green].players.attributes[skill])"}`,
		`referenceValue "avg(teams[green].players.attributes[skill])": no team named green`},
	{"reference of a bad kind", `{"name": "R", "type": "comparison", "operation": "=",
		"measurements": ["teams[red].players.attributes[skill]"], "referenceValue": true}`,
		"referenceValue must be a number, a string or a list of strings, got true"},
	// distance
	{"distance without reference", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"maxDistance": 3}`, "referenceValue is required"},
	{"distance without bounds", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 3}`, "minDistance or maxDistance is required"},
	{"distance bounds reversed", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 3, "minDistance": 5, "maxDistance": 4}`, "minDistance 5 is more than maxDistance 4"},
	{"distance not a number", `{"name": "FairSkill", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 3, "maxDistance": "abc"}`, `rules[0] "FairSkill": maxDistance must be a number, got "abc"`},
	{"distance negative", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 3, "maxDistance": -1}`, "maxDistance must be at least 0, got -1"},
	{"distance NaN string", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 3, "maxDistance": "NaN"}`, `maxDistance must be a number, got "NaN"`},
	{"distance of strings", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[mode]",
		"referenceValue": 3, "maxDistance": 1}`, "a distance rule measures numbers, and this gives a list of strings"},
	{"distance string reference", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": "high", "maxDistance": 1}`, "referenceValue must be a number"},
	{"distance out of range", `{"name": "R", "type": "distance", "measurements": "teams[red].players.attributes[skill]",
		"referenceValue": 1e999, "maxDistance": 1}`, "referenceValue is out of range"},
	// collection
	{"collection without operation", `{"name": "R", "type": "collection", "measurements": "teams[red].players.attributes[maps]",
		"minCount": 1}`, "operation is required (one of intersection, contains, reference_intersection_count)"},
	{"collection bad operation", `{"name": "R", "type": "collection", "operation": "union",
		"measurements": "teams[red].players.attributes[maps]", "minCount": 1}`, `operation must be one of intersection`},
	{"collection without counts", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[maps]"}`, "minCount or maxCount is required"},
	{"collection fractional count", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[maps]", "minCount": 1.5}`, "minCount must be a whole number, got 1.5"},
	{"collection counts reversed", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[maps]", "minCount": 3, "maxCount": 2}`, "minCount 3 is more than maxCount 2"},
	{"collection intersection with reference", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[maps]", "referenceValue": "x", "minCount": 1}`,
		"the intersection operation takes no referenceValue"},
	{"collection contains without reference", `{"name": "R", "type": "collection", "operation": "contains",
		"measurements": "teams[red].players.attributes[maps]", "minCount": 1}`, "the contains operation needs a referenceValue"},
	{"collection contains a list", `{"name": "R", "type": "collection", "operation": "contains",
		"measurements": "teams[red].players.attributes[maps]", "referenceValue": ["a"], "minCount": 1}`,
		"referenceValue must be a string or an expression giving one string"},
	{"collection reference count with a number", `{"name": "R", "type": "collection", "operation": "reference_intersection_count",
		"measurements": "teams[red].players.attributes[maps]", "referenceValue": 3, "minCount": 1}`,
		"referenceValue must be a list of strings or an expression giving one, got 3"},
	{"collection reference count with nested lists", `{"name": "R", "type": "collection",
		"operation": "reference_intersection_count", "measurements": "teams[red].players.attributes[maps]",
		"referenceValue": "teams[*].players.attributes[maps]", "minCount": 1}`, "gives nested lists of string lists"},
	{"collection of numbers", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[skill]", "minCount": 1}`, "a collection rule measures strings or string lists"},
	{"collection bad party aggregation", `{"name": "R", "type": "collection", "operation": "intersection",
		"measurements": "teams[red].players.attributes[maps]", "minCount": 1, "partyAggregation": "avg"}`,
		`partyAggregation must be one of union, intersection, got "avg"`},
	// latency
	{"latency without limits", `{"name": "R", "type": "latency"}`, "a latency rule needs maxLatency or maxDistance"},
	{"latency reference without distance", `{"name": "R", "type": "latency", "maxLatency": 50, "distanceReference": "avg"}`,
		"distanceReference is used only with maxDistance"},
	{"latency bad reference", `{"name": "R", "type": "latency", "maxDistance": 50, "distanceReference": "max"}`,
		`distanceReference must be one of min, avg, got "max"`},
	{"latency negative", `{"name": "R", "type": "latency", "maxLatency": -5}`, "maxLatency must be at least 0"},
	// batchDistance
	{"batchDistance without attribute", `{"name": "R", "type": "batchDistance", "maxDistance": 5}`, "batchAttribute is required"},
	{"batchDistance unknown attribute", `{"name": "R", "type": "batchDistance", "batchAttribute": "elo", "maxDistance": 5}`,
		"batchAttribute: no player attribute named elo"},
	{"batchDistance number without distance", `{"name": "R", "type": "batchDistance", "batchAttribute": "skill"}`,
		"maxDistance is required with the number attribute skill"},
	{"batchDistance string with distance", `{"name": "R", "type": "batchDistance", "batchAttribute": "mode", "maxDistance": 2}`,
		"maxDistance can't be used with the string attribute mode"},
	{"batchDistance on a list", `{"name": "R", "type": "batchDistance", "batchAttribute": "maps"}`,
		"batchAttribute maps is a string_list; it must be a number or a string attribute"},
	// sorts
	{"sort without attribute", `{"name": "R", "type": "absoluteSort"}`, "sortAttribute is required"},
	{"sort unknown attribute", `{"name": "R", "type": "distanceSort", "sortAttribute": "elo"}`, "no player attribute named elo"},
	{"distanceSort on a map", `{"name": "R", "type": "distanceSort", "sortAttribute": "prefs", "mapKey": "minValue"}`,
		"sortAttribute prefs is a string_number_map; distanceSort sorts number attributes"},
	{"absoluteSort on a string", `{"name": "R", "type": "absoluteSort", "sortAttribute": "mode"}`,
		"absoluteSort sorts number or string_number_map attributes"},
	{"absoluteSort map without key", `{"name": "R", "type": "absoluteSort", "sortAttribute": "prefs"}`, "mapKey (minValue or maxValue) is required"},
	{"sort key without map", `{"name": "R", "type": "absoluteSort", "sortAttribute": "skill", "mapKey": "maxValue"}`,
		"mapKey is used only with a string_number_map attribute"},
	{"sort bad key", `{"name": "R", "type": "absoluteSort", "sortAttribute": "prefs", "mapKey": "max"}`,
		`mapKey must be one of minValue, maxValue, got "max"`},
	{"sort bad direction", `{"name": "R", "type": "distanceSort", "sortAttribute": "skill", "sortDirection": "up"}`,
		`sortDirection must be one of ascending, descending, got "up"`},
	// compound
	{"compound without statement", `{"name": "R", "type": "compound"}`, "statement is required"},
	{"compound bad syntax", `{"name": "R", "type": "compound", "statement": "and(A"}`, `statement "and(A": at character`},
	{"compound unknown rule", `{"name": "R", "type": "compound", "statement": "and(A, B)"}`,
		`statement "and(A, B)": no rule named A is declared before this one`},
	{"compound takes no partyAggregation", `{"name": "R", "type": "compound", "statement": "A", "partyAggregation": "avg"}`,
		`unknown key "partyAggregation"`},
}

func TestParseRuleErrors(t *testing.T) {
	for _, tt := range ruleErrorTests {
		t.Run(tt.name, func(t *testing.T) { wantError(t, withRules(tt.rule), tt.want) })
	}
}

func TestParseRuleSetErrors(t *testing.T) {
	lat := `{"name": "Fast", "type": "latency", "maxLatency": 50}`
	tests := []struct{ name, body, want string }{
		{"duplicate rule name", withRules(lat, lat), `rules[1] "Fast": another rule is already named Fast`},
		{"compound over a later rule", withRules(`{"name": "C", "type": "compound", "statement": "not(Fast)"}`, lat),
			"no rule named Fast is declared before this one"},
		{"compound over batchDistance", withRules(`{"name": "B", "type": "batchDistance", "batchAttribute": "mode"}`, lat,
			`{"name": "C", "type": "compound", "statement": "or(B, Fast)"}`), "rule B is a batchDistance rule"},
		{"compound over a sort", withRules(`{"name": "S", "type": "distanceSort", "sortAttribute": "skill"}`, lat,
			`{"name": "C", "type": "compound", "statement": "and(S, Fast)"}`), "rule S is a distanceSort rule"},
		{"rules not an array", `{"ruleLanguageVersion": "1.0", "teams": ` + testTeams + `, "rules": {}}`,
			"rules must be an array, got {}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantError(t, tt.body, tt.want) })
	}
}

func TestParseTopLevel(t *testing.T) {
	teams := `"teams": [{"name": "solo", "maxPlayers": 1, "minPlayers": 1}]`
	tests := []struct{ name, body, want string }{
		{"empty", ``, "the rule set body is empty"},
		{"too long", `{"ruleLanguageVersion": "1.0", "name": "` + strings.Repeat("é", MaxBodyLength) + `"}`,
			"the rule set body is 65577 characters long; the limit is 65535"},
		{"not an object", `[1]`, "the rule set body must be a JSON object"},
		{"no version", `{` + teams + `}`, `ruleLanguageVersion is required (it must be "1.0")`},
		{"wrong version", `{"ruleLanguageVersion": "2.0", ` + teams + `}`, `ruleLanguageVersion must be "1.0", got "2.0"`},
		{"numeric version", `{"ruleLanguageVersion": 1.0, ` + teams + `}`, `ruleLanguageVersion must be the string "1.0"`},
		{"name not a string", `{"name": 3, "ruleLanguageVersion": "1.0", ` + teams + `}`, "name must be a string, got 3"},
		{"no teams", `{"ruleLanguageVersion": "1.0"}`, "teams: at least one team is required"},
		{"empty teams", `{"ruleLanguageVersion": "1.0", "teams": []}`, "teams: at least one team is required"},
		{"unknown key", `{"ruleLanguageVersion": "1.0", ` + teams + `, "expansion": []}`,
			`the rule set: unknown key "expansion" (allowed: name, ruleLanguageVersion, playerAttributes, algorithm, teams, rules, expansions)`},
		{"attributes not an array", `{"ruleLanguageVersion": "1.0", "playerAttributes": {}, ` + teams + `}`,
			"playerAttributes must be an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantError(t, tt.body, tt.want) })
	}
	rs := parseOK(t, `{"ruleLanguageVersion": "1.0", `+teams+`}`)
	if rs.Name != "" || len(rs.Attributes)+len(rs.Rules)+len(rs.Expansions) != 0 || len(rs.Teams) != 1 {
		t.Errorf("minimal rule set = %+v", rs)
	}
}

func TestParseStrictJSON(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"line comment", "{\n  \"ruleLanguageVersion\": \"1.0\", // the version\n  \"teams\": []\n}",
			"line 2: comments are not allowed in a rule set body"},
		{"block comment", "{\n\n  /* teams */ \"ruleLanguageVersion\": \"1.0\"}", "line 3: comments are not allowed"},
		{"trailing comma in object", "{\"ruleLanguageVersion\": \"1.0\",\n\"teams\": [],\n}", "line 2: trailing comma before '}'"},
		{"trailing comma in array", "{\"teams\": [\n{\"name\": \"a\"},\n]}", "line 2: trailing comma before ']'"},
		{"duplicate key", "{\"ruleLanguageVersion\": \"1.0\",\n\"teams\": [],\n\"teams\": []}", `line 3: duplicate key "teams"`},
		{"duplicate nested key", "{\"expansions\": [{\"target\": \"a\", \"steps\": [],\n \"target\": \"b\"}]}",
			`line 2: duplicate key "target"`},
		{"syntax error", "{\n\"ruleLanguageVersion\" \"1.0\"}", "line 2: invalid JSON"},
		{"truncated", `{"ruleLanguageVersion": "1.0"`, "invalid JSON"},
		{"trailing data", `{"ruleLanguageVersion": "1.0"} {}`, "line 1: unexpected text after the rule set's closing brace"},
		{"null", `null`, "the rule set body must be a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantError(t, tt.body, tt.want) })
	}
	// Comment markers and commas inside strings are not syntax.
	parseOK(t, `{"name": "a // b, }", "ruleLanguageVersion": "1.0", "playerAttributes": [{"name": "x\\\"/*,]", "type": "number"}],
		"teams": [{"name": "t", "maxPlayers": 1, "minPlayers": 1}]}`)
}

func TestParseAttributes(t *testing.T) {
	rs := parseOK(t, body{}.json())
	want := []Attribute{
		{Name: "skill", Type: TypeNumber, Default: &Value{Type: TypeNumber, N: 10}},
		{Name: "level", Type: TypeNumber},
		{Name: "mode", Type: TypeString, Default: &Value{Type: TypeString, S: "casual"}},
		{Name: "maps", Type: TypeStringList, Default: &Value{Type: TypeStringList, SL: []string{"dust"}}},
		{Name: "blocked", Type: TypeStringList, Default: &Value{Type: TypeStringList, SL: []string{}}},
		{Name: "prefs", Type: TypeStringNumberMap, Default: &Value{Type: TypeStringNumberMap, SDM: map[string]float64{"dust": 1}}},
	}
	if !reflect.DeepEqual(rs.Attributes, want) {
		t.Errorf("attributes = %+v", rs.Attributes)
	}
	rs = parseOK(t, body{attrs: `[{"name": "n", "type": "number", "default": "2.5"},
		{"name": "m", "type": "string_number_map", "default": {"a": "1", "b": -2}}]`}.json())
	if rs.Attributes[0].Default.N != 2.5 || rs.Attributes[1].Default.SDM["a"] != 1 || rs.Attributes[1].Default.SDM["b"] != -2 {
		t.Errorf("numeric string defaults = %+v", rs.Attributes)
	}
	tests := []struct{ attrs, want string }{
		{`[{"type": "number"}]`, "playerAttributes[0]: name is required"},
		{`[{"name": "a"}]`, `playerAttributes[0] "a": type is required (one of string, number, string_list, string_number_map)`},
		{`[{"name": "a", "type": "int"}]`, `playerAttributes[0] "a": type must be one of string, number, string_list, string_number_map, got "int"`},
		{`[{"name": "a", "type": "number"}, {"name": "a", "type": "string"}]`, `playerAttributes[1] "a": another attribute is already named a`},
		{`[{"name": "a", "type": "number", "default": "x"}]`, `playerAttributes[0] "a": default must be a number, got "x"`},
		{`[{"name": "a", "type": "string", "default": 1}]`, "default must be a string, got 1"},
		{`[{"name": "a", "type": "string_list", "default": "x"}]`, `default must be a list of strings, got "x"`},
		{`[{"name": "a", "type": "string_list", "default": [1]}]`, "default must be a list of strings, got [1]"},
		{`[{"name": "a", "type": "string_number_map", "default": {"k": "v"}}]`, `default key "k" must be a number, got "v"`},
		{`[{"name": "a", "type": "string_number_map", "default": [1]}]`, "default must be an object of numbers"},
		{`[{"name": "a", "type": "number", "defaults": 1}]`, `playerAttributes[0]: unknown key "defaults"`},
	}
	for _, tt := range tests {
		wantError(t, body{attrs: tt.attrs}.json(), tt.want)
	}
}

func TestParseAlgorithm(t *testing.T) {
	valid := []struct {
		algo string
		want Algorithm
	}{
		{``, Algorithm{Strategy: "exhaustiveSearch", BatchingPreference: "random", BackfillPriority: "normal",
			ExpansionAgeSelection: "newest"}},
		{`{}`, Algorithm{Strategy: "exhaustiveSearch", BatchingPreference: "random", BackfillPriority: "normal",
			ExpansionAgeSelection: "newest"}},
		{`{"batchingPreference": "sorted", "sortByAttributes": ["mode", "skill"], "backfillPriority": "high",
			"expansionAgeSelection": "oldest"}`, Algorithm{Strategy: "exhaustiveSearch", BatchingPreference: "sorted",
			SortByAttributes: []string{"mode", "skill"}, BackfillPriority: "high", ExpansionAgeSelection: "oldest"}},
		{`{"strategy": "balanced", "balancedAttribute": "skill"}`, Algorithm{Strategy: "balanced",
			BatchingPreference: "largestPopulation", BalancedAttribute: "skill", BackfillPriority: "normal",
			ExpansionAgeSelection: "newest"}},
		{`{"strategy": "balanced", "balancedAttribute": "level", "batchingPreference": "fastestRegion", "backfillPriority": "low"}`,
			Algorithm{Strategy: "balanced", BatchingPreference: "fastestRegion", BalancedAttribute: "level",
				BackfillPriority: "low", ExpansionAgeSelection: "newest"}},
		{`{"strategy": "balanced", "balancedAttribute": "skill", "batchingPreference": "random"}`, Algorithm{Strategy: "balanced",
			BatchingPreference: "random", BalancedAttribute: "skill", BackfillPriority: "normal", ExpansionAgeSelection: "newest"}},
	}
	for _, tt := range valid {
		rs := parseOK(t, body{algo: tt.algo}.json())
		if !reflect.DeepEqual(rs.Algorithm, tt.want) {
			t.Errorf("algorithm %s = %+v, want %+v", tt.algo, rs.Algorithm, tt.want)
		}
	}
	errs := []struct{ algo, want string }{
		{`[]`, "algorithm must be an object, got an array"},
		{`{"strategy": "greedy"}`, `algorithm: strategy must be one of exhaustiveSearch, balanced, got "greedy"`},
		{`{"stratgy": "balanced"}`, `algorithm: unknown key "stratgy"`},
		{`{"batchingPreference": "fastest"}`, `batchingPreference must be one of random, sorted, largestPopulation, fastestRegion`},
		{`{"batchingPreference": "sorted"}`, "algorithm: batchingPreference sorted needs sortByAttributes"},
		{`{"batchingPreference": "sorted", "sortByAttributes": []}`, "sortByAttributes must name at least one attribute"},
		{`{"batchingPreference": "sorted", "sortByAttributes": ["elo"]}`, "sortByAttributes[0]: no player attribute named elo"},
		{`{"batchingPreference": "sorted", "sortByAttributes": ["skill", "skill"]}`, "sortByAttributes[1]: skill is listed twice"},
		{`{"batchingPreference": "sorted", "sortByAttributes": ["maps"]}`, "maps is a string_list; only string and number attributes sort"},
		{`{"batchingPreference": "sorted", "sortByAttributes": "skill"}`, `sortByAttributes must be a list of strings, got "skill"`},
		{`{"sortByAttributes": ["skill"]}`, "sortByAttributes is used only with batchingPreference sorted"},
		{`{"strategy": "balanced", "balancedAttribute": "skill", "batchingPreference": "sorted", "sortByAttributes": ["skill"]}`,
			"batchingPreference sorted works only with strategy exhaustiveSearch"},
		{`{"batchingPreference": "largestPopulation"}`, "batchingPreference largestPopulation works only with strategy balanced"},
		{`{"batchingPreference": "fastestRegion"}`, "batchingPreference fastestRegion works only with strategy balanced"},
		{`{"strategy": "balanced"}`, "algorithm: strategy balanced needs balancedAttribute"},
		{`{"strategy": "balanced", "balancedAttribute": "elo"}`, "balancedAttribute: no player attribute named elo"},
		{`{"strategy": "balanced", "balancedAttribute": "mode"}`, "balancedAttribute mode is a string; it must be a number attribute"},
		{`{"balancedAttribute": "skill"}`, "balancedAttribute is used only with strategy balanced"},
		{`{"backfillPriority": "urgent"}`, `backfillPriority must be one of normal, high, low, got "urgent"`},
		{`{"expansionAgeSelection": "middle"}`, `expansionAgeSelection must be one of newest, oldest, got "middle"`},
	}
	for _, tt := range errs {
		wantError(t, body{algo: tt.algo}.json(), tt.want)
	}
}

func TestParseTeams(t *testing.T) {
	rs := parseOK(t, body{teams: `[{"name": "red", "maxPlayers": 5, "minPlayers": 0, "quantity": 3},
		{"name": "solo", "maxPlayers": "1", "minPlayers": 1}]`}.json())
	want := []Team{{Name: "red", MinPlayers: 0, MaxPlayers: 5, Quantity: 3}, {Name: "solo", MinPlayers: 1, MaxPlayers: 1, Quantity: 1}}
	if !reflect.DeepEqual(rs.Teams, want) {
		t.Errorf("teams = %+v", rs.Teams)
	}
	tests := []struct{ teams, want string }{
		{`[{"maxPlayers": 1, "minPlayers": 1}]`, "teams[0]: name is required"},
		{`[{"name": "a", "minPlayers": 1}]`, `teams[0] "a": maxPlayers is required`},
		{`[{"name": "a", "maxPlayers": 1}]`, `teams[0] "a": minPlayers is required`},
		{`[{"name": "a", "maxPlayers": 0, "minPlayers": 0}]`, "maxPlayers must be at least 1, got 0"},
		{`[{"name": "a", "maxPlayers": 2.5, "minPlayers": 0}]`, "maxPlayers must be a whole number, got 2.5"},
		{`[{"name": "a", "maxPlayers": 4, "minPlayers": 5}]`, `teams[0] "a": minPlayers 5 is more than maxPlayers 4`},
		{`[{"name": "a", "maxPlayers": 4, "minPlayers": -1}]`, "minPlayers must be at least 0, got -1"},
		{`[{"name": "a", "maxPlayers": 4, "minPlayers": 1, "quantity": 0}]`, "quantity must be at least 1, got 0"},
		{`[{"name": "a", "maxPlayers": 201, "minPlayers": 1}]`, "maxPlayers 201 is more than 200"},
		{`[{"name": "a", "maxPlayers": 1, "minPlayers": 1, "quantity": 1e12}]`, "quantity is too large"},
		{`[{"name": "a", "maxPlayers": 4, "minPlayers": 1, "size": 3}]`, `teams[0]: unknown key "size"`},
		{`[{"name": "a", "maxPlayers": 1, "minPlayers": 1}, {"name": "a", "maxPlayers": 1, "minPlayers": 1}]`,
			`teams[1] "a": another team is already named a`},
		{`[{"name": "red", "maxPlayers": 1, "minPlayers": 1, "quantity": 2}, {"name": "red_2", "maxPlayers": 1, "minPlayers": 1}]`,
			`teams[1] "red_2": its team name red_2 is already used by team "red"`},
		{`[{"name": "red_1", "maxPlayers": 1, "minPlayers": 1}, {"name": "red", "maxPlayers": 1, "minPlayers": 1, "quantity": 2}]`,
			`teams[1] "red": its team name red_1 is already used by team "red_1"`},
		{`[{"name": "*", "maxPlayers": 1, "minPlayers": 1}]`, `team name "*" can't be used in teams[...]`},
		{`[{"name": "a,b", "maxPlayers": 1, "minPlayers": 1}]`, `team name "a,b" can't be used`},
		{`[{"name": " a", "maxPlayers": 1, "minPlayers": 1}]`, "must not start or end with a space"},
		{`[{"name": "a", "maxPlayers": 100, "minPlayers": 1, "quantity": 2}, {"name": "b", "maxPlayers": 1, "minPlayers": 1}]`,
			"teams: the teams add up to 201 players (maxPlayers × quantity); a match holds at most 200"},
	}
	for _, tt := range tests {
		wantError(t, body{teams: tt.teams}.json(), tt.want)
	}
}

func TestParseLargeMatch(t *testing.T) {
	large := `[{"name": "red", "maxPlayers": 50, "minPlayers": 40}, {"name": "blue", "maxPlayers": 50, "minPlayers": 40}]`
	rs := parseOK(t, body{teams: large, algo: `{"strategy": "balanced", "balancedAttribute": "skill"}`,
		rules: `{"name": "Fast", "type": "latency", "maxLatency": 150},
			{"name": "Similar", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 100},
			{"name": "SameMode", "type": "batchDistance", "batchAttribute": "mode"}`,
		exps: `{"target": "rules[Fast].maxLatency", "steps": [{"waitTimeSeconds": 10, "value": 200}]},
			{"target": "teams[red, blue].minPlayers", "steps": [{"waitTimeSeconds": 20, "value": 30}]}`}.json())
	if len(rs.Rules) != 3 || len(rs.Expansions) != 2 {
		t.Errorf("large rule set = %+v", rs)
	}
	// 40 players is still a standard match: every rule type, and compound, are allowed.
	parseOK(t, body{teams: `[{"name": "red", "maxPlayers": 20, "minPlayers": 20, "quantity": 2}]`,
		algo: `{"strategy": "balanced", "balancedAttribute": "skill"}`,
		rules: `{"name": "A", "type": "comparison", "measurements": "teams[*].players.attributes[skill]", "referenceValue": 1, "operation": ">"},
			{"name": "B", "type": "latency", "maxLatency": 50}, {"name": "C", "type": "compound", "statement": "or(A, B)"}`}.json())
	tests := []struct{ rule, want string }{
		{`{"name": "FairSkill", "type": "distance", "measurements": "teams[red].players.attributes[skill]", "referenceValue": 1,
			"maxDistance": 1}`, `rules[0] "FairSkill": type "distance" is not available in large matches (the teams add up ` +
			`to 100 players; only batchDistance and latency rules are)`},
		{`{"name": "R", "type": "comparison", "measurements": "teams[red].players.attributes[skill]", "operation": "="}`,
			`type "comparison" is not available in large matches`},
		{`{"name": "R", "type": "collection", "measurements": "teams[red].players.attributes[maps]", "operation": "intersection", "minCount": 1}`,
			`type "collection" is not available in large matches`},
		{`{"name": "R", "type": "absoluteSort", "sortAttribute": "skill"}`, `type "absoluteSort" is not available in large matches`},
		{`{"name": "R", "type": "distanceSort", "sortAttribute": "skill"}`, `type "distanceSort" is not available in large matches`},
		{`{"name": "R", "type": "compound", "statement": "A"}`, `type "compound" is not available in large matches`},
		{`{"name": "R", "type": "latency", "maxDistance": 20}`, "in large matches a latency rule takes maxLatency only"},
		{`{"name": "R", "type": "latency", "maxLatency": 100, "maxDistance": 20}`, "in large matches a latency rule takes maxLatency only"},
	}
	for _, tt := range tests {
		wantError(t, body{teams: large, rules: tt.rule}.json(), tt.want)
	}
	// The quantity counts: 3 × 15 = 45 players is a large match.
	wantError(t, body{teams: `[{"name": "red", "maxPlayers": 15, "minPlayers": 1, "quantity": 3}]`,
		rules: `{"name": "R", "type": "distanceSort", "sortAttribute": "skill"}`}.json(), "the teams add up to 45 players")
}

// expansionRules are rules of every relaxable kind, for expansion tests.
const expansionRules = `
	{"name": "Cmp", "type": "comparison", "measurements": "teams[red].players.attributes[skill]", "referenceValue": 10, "operation": ">="},
	{"name": "ModeCmp", "type": "comparison", "measurements": "teams[red].players.attributes[mode]", "referenceValue": "ranked", "operation": "="},
	{"name": "Across", "type": "comparison", "measurements": "teams[red].players.attributes[skill]", "operation": "="},
	{"name": "Dist", "type": "distance", "measurements": "teams[red].players.attributes[skill]", "referenceValue": 10, "maxDistance": 5},
	{"name": "Coll", "type": "collection", "measurements": "teams[red].players.attributes[maps]", "operation": "reference_intersection_count",
		"referenceValue": ["a"], "minCount": 1},
	{"name": "Lat", "type": "latency", "maxLatency": 50},
	{"name": "Batch", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 10},
	{"name": "Sort", "type": "absoluteSort", "sortAttribute": "skill"},
	{"name": "Comp", "type": "compound", "statement": "or(Cmp, Lat)"}`

func TestParseExpansions(t *testing.T) {
	exp := func(target, steps string) string {
		return body{rules: expansionRules, exps: `{"target": "` + target + `", "steps": ` + steps + `}`}.json()
	}
	valid := []struct {
		target, steps string
		want          Expansion
	}{
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 5, "value": 50}, {"waitTimeSeconds": 15, "value": "100"}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Dist"}, Property: "maxDistance"},
				Steps: []Step{{Wait: 5 * time.Second, Value: Operand{Num: f64(50)}}, {Wait: 15 * time.Second, Value: Operand{Num: f64(100)}}}}},
		{" rules[ Cmp ] . referenceValue ", `[{"waitTimeSeconds": 10, "value": "avg(teams[blue].players.attributes[skill])"}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Cmp"}, Property: "referenceValue"},
				Steps: []Step{{Wait: 10 * time.Second, Value: Operand{Expr: fn("avg", attrSel("skill", "blue"))}}}}},
		{"rules[ModeCmp].referenceValue", `[{"waitTimeSeconds": 10, "value": "casual"}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"ModeCmp"}, Property: "referenceValue"},
				Steps: []Step{{Wait: 10 * time.Second, Value: Operand{Str: str("casual")}}}}},
		{"rules[Coll].referenceValue", `[{"waitTimeSeconds": 10, "value": ["a", "b"]}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Coll"}, Property: "referenceValue"},
				Steps: []Step{{Wait: 10 * time.Second, Value: Operand{List: []string{"a", "b"}}}}}},
		{"rules[Coll].minCount", `[{"waitTimeSeconds": 15, "value": 0}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Coll"}, Property: "minCount"},
				Steps: []Step{{Wait: 15 * time.Second, Value: Operand{Num: f64(0)}}}}},
		{"rules[Lat].maxLatency", `[{"waitTimeSeconds": 1, "value": 100}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Lat"}, Property: "maxLatency"},
				Steps: []Step{{Wait: time.Second, Value: Operand{Num: f64(100)}}}}},
		{"rules[Batch].maxDistance", `[{"waitTimeSeconds": 43200, "value": 20}]`,
			Expansion{Target: Target{Component: "rules", Names: []string{"Batch"}, Property: "maxDistance"},
				Steps: []Step{{Wait: 43200 * time.Second, Value: Operand{Num: f64(20)}}}}},
		{"teams[red, blue].minPlayers", `[{"waitTimeSeconds": 30, "value": 1}]`,
			Expansion{Target: Target{Component: "teams", Names: []string{"red", "blue"}, Property: "minPlayers"},
				Steps: []Step{{Wait: 30 * time.Second, Value: Operand{Num: f64(1)}}}}},
		{"teams[*].maxPlayers", `[{"waitTimeSeconds": 30, "value": 3}]`,
			Expansion{Target: Target{Component: "teams", Names: []string{"*"}, Property: "maxPlayers"},
				Steps: []Step{{Wait: 30 * time.Second, Value: Operand{Num: f64(3)}}}}},
	}
	for _, tt := range valid {
		rs := parseOK(t, exp(tt.target, tt.steps))
		if got := rs.Expansions[0]; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("expansion %s = %+v\nwant %+v", tt.target, got, tt.want)
		}
	}
	one := `[{"waitTimeSeconds": 5, "value": 1}]`
	errs := []struct{ target, steps, want string }{
		{"rules[Foo].maxDistance", one, `expansions[0].target "rules[Foo].maxDistance": no rule named Foo`},
		{"rules[Dist].maxDistanse", one, `a distance rule can relax referenceValue, minDistance, maxDistance, not maxDistanse`},
		{"rules[Dist].minDistance", one, "rule Dist does not set minDistance, so there is nothing to relax"},
		{"rules[Across].referenceValue", one, "rule Across does not set referenceValue"},
		{"rules[Comp].statement", one, "a compound rule can't be expanded"},
		{"rules[Sort].sortDirection", one, "a absoluteSort rule has no property an expansion can relax"},
		{"rules[Lat].distanceReference", one, "a latency rule can relax maxLatency, maxDistance, not distanceReference"},
		{"players[red].minPlayers", one, `unknown component "players"`},
		{"rules.maxDistance", one, "a target is rules[<name>].<property> or teams[<name>,...].<property>"},
		{"rules[Dist]", one, "a target is rules[<name>]"},
		{"rules[Dist].", one, "the property after rules[...]. is missing"},
		{"teams[red,,blue].minPlayers", one, "empty name in teams[red,,blue]"},
		{"teams[red, red].minPlayers", one, "red is named twice"},
		{"teams[green].minPlayers", one, "no team named green (an expansion names team definitions: red, blue)"},
		{"teams[*, red].minPlayers", one, "* must be the only name"},
		{"teams[red].quantity", one, "teams can relax minPlayers and maxPlayers, not quantity"},
		{"rules[Dist].maxDistance", `[]`, "expansions[0]: steps must list at least one step"},
		{"rules[Dist].maxDistance", `{}`, "expansions[0]: steps must be an array"},
		{"rules[Dist].maxDistance", `[{"value": 1}]`, "expansions[0].steps[0]: waitTimeSeconds is required"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 5}]`, "expansions[0].steps[0]: value is required"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 0, "value": 1}]`, "waitTimeSeconds must be at least 1, got 0"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 2.5, "value": 1}]`, "waitTimeSeconds must be a whole number, got 2.5"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 43201, "value": 1}]`, "waitTimeSeconds 43201 is more than 43200"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 10, "value": 1}, {"waitTimeSeconds": 10, "value": 2}]`,
			"expansions[0].steps[1]: waitTimeSeconds 10 must be more than the step before's 10"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 10, "value": 1}, {"waitTimeSeconds": 5, "value": 2}]`,
			"waitTimeSeconds 5 must be more than the step before's 10"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 5, "value": "far"}]`, `expansions[0].steps[0]: value must be a number, got "far"`},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 5, "value": -3}]`, "value must be at least 0, got -3"},
		{"rules[Coll].minCount", `[{"waitTimeSeconds": 5, "value": 0.5}]`, "value must be a whole number, got 0.5"},
		{"rules[Cmp].referenceValue", `[{"waitTimeSeconds": 5, "value": "abc"}]`, "value must be a number or an expression giving one number"},
		{"rules[ModeCmp].referenceValue", `[{"waitTimeSeconds": 5, "value": 3}]`, "value must be a string"},
		{"rules[Coll].referenceValue", `[{"waitTimeSeconds": 5, "value": 3}]`, "value must be a list of strings"},
		{"teams[red].minPlayers", `[{"waitTimeSeconds": 5, "value": -1}]`, "value must be at least 0, got -1"},
		{"teams[red].maxPlayers", `[{"waitTimeSeconds": 5, "value": 0}]`, "value must be at least 1, got 0"},
		{"teams[red].minPlayers", `[{"waitTimeSeconds": 5, "value": 5}]`,
			"expansions: from 5 seconds on, team red would need at least 5 players but hold at most 4"},
		{"teams[red].maxPlayers", `[{"waitTimeSeconds": 5, "value": 1}]`, "team red would need at least 2 players but hold at most 1"},
		{"teams[red].maxPlayers", `[{"waitTimeSeconds": 5, "value": 37}]`,
			"from 5 seconds on, the teams would add up to 41 players; the standard match this rule set describes holds at most 40"},
		{"rules[Dist].maxDistance", `[{"waitTimeSeconds": 5, "value": 1, "val": 2}]`, `expansions[0].steps[0]: unknown key "val"`},
	}
	for _, tt := range errs {
		wantError(t, exp(tt.target, tt.steps), tt.want)
	}
	wantError(t, body{rules: expansionRules, exps: `{"target": "rules[Dist].maxDistance", "step": []}`}.json(),
		`expansions[0]: unknown key "step"`)
	wantError(t, body{rules: expansionRules, exps: `{"steps": []}`}.json(), "expansions[0]: target is required")
}

func TestParseExpansionCombinations(t *testing.T) {
	step := func(w, v int) string { return fmt.Sprintf(`[{"waitTimeSeconds": %d, "value": %d}]`, w, v) }
	e := func(target, steps string) string { return `{"target": "` + target + `", "steps": ` + steps + `}` }
	// Raising maxPlayers first lets minPlayers rise later; both are checked at every wait.
	parseOK(t, body{exps: e("teams[red].maxPlayers", step(5, 8)) + ", " + e("teams[red].minPlayers", step(10, 6))}.json())
	wantError(t, body{exps: e("teams[red].minPlayers", step(5, 6)) + ", " + e("teams[red].maxPlayers", step(10, 8))}.json(),
		"from 5 seconds on, team red would need at least 6 players but hold at most 4")
	wantError(t, body{rules: expansionRules, exps: e("rules[Dist].maxDistance", step(5, 8)) + ", " + e("rules[Dist].maxDistance", step(9, 9))}.json(),
		"expansions[1]: rules[Dist].maxDistance is already expanded by expansions[0]")
	wantError(t, body{exps: e("teams[red, blue].minPlayers", step(5, 1)) + ", " + e("teams[blue].minPlayers", step(9, 0))}.json(),
		"expansions[1]: teams[blue].minPlayers is already expanded by expansions[0]")
	wantError(t, body{exps: e("teams[*].minPlayers", step(5, 1)) + ", " + e("teams[blue].minPlayers", step(9, 0))}.json(),
		"is already expanded by expansions[0]")
	// A team definition with a quantity is expanded as a whole; its red_2 name is not a target.
	q := `[{"name": "red", "maxPlayers": 4, "minPlayers": 4, "quantity": 3}]`
	parseOK(t, body{teams: q, exps: e("teams[red].minPlayers", step(5, 2))}.json())
	wantError(t, body{teams: q, exps: e("teams[red_2].minPlayers", step(5, 2))}.json(), "no team named red_2")
	// A large match may grow to 200 players, no further.
	large := `[{"name": "red", "maxPlayers": 100, "minPlayers": 50}]`
	parseOK(t, body{teams: large, exps: e("teams[red].maxPlayers", step(5, 200))}.json())
	wantError(t, body{teams: large, exps: e("teams[red].maxPlayers", step(5, 201))}.json(), "the teams would add up to 201 players; the large match")
}

// TestParseExamples parses the realistic rule sets of testdata/rulesets, modelled on the
// FlexMatch guide's examples.
func TestParseExamples(t *testing.T) {
	checks := map[string]func(t *testing.T, rs *RuleSet){
		"skill_balanced_squads.json": func(t *testing.T, rs *RuleSet) {
			if len(rs.Teams) != 2 || rs.Rules[0].MaxDistance == nil || *rs.Rules[0].MaxDistance != 25 || len(rs.Expansions[0].Steps) != 2 {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"boss_raid.json": func(t *testing.T, rs *RuleSet) {
			if rs.Expansions[0].Target.Component != "teams" || rs.Rules[2].ReferenceValue.Expr == nil {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"trios_with_roles.json": func(t *testing.T, rs *RuleSet) {
			if rs.Teams[0].Quantity != 4 || rs.Rules[3].Type != RuleLatency || rs.Rules[2].ReferenceValue.Str == nil {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"map_affinity_sorted.json": func(t *testing.T, rs *RuleSet) {
			if rs.Rules[0].MapKey != "maxValue" || rs.Algorithm.BatchingPreference != BatchingSorted {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"frontline_large.json": func(t *testing.T, rs *RuleSet) {
			if rs.Algorithm.BatchingPreference != BatchingFastestRegion || len(rs.Rules) != 2 {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"ranked_or_casual.json": func(t *testing.T, rs *RuleSet) {
			if rs.Rules[4].Statement == nil || rs.Rules[4].Statement.Op != "or" {
				t.Errorf("rule set = %+v", rs)
			}
		},
		"duel_blocklist.json": func(t *testing.T, rs *RuleSet) {
			if rs.Rules[1].ReferenceValue.Expr == nil || !rs.Rules[1].ReferenceValue.Expr.Arg.PlayerID {
				t.Errorf("rule set = %+v", rs)
			}
		},
	}
	for name, check := range checks {
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "rulesets", name))
			if err != nil {
				t.Fatal(err)
			}
			check(t, parseOK(t, string(b)))
		})
	}
}

// FuzzParse checks that Parse never panics, and that what it accepts is consistent.
func FuzzParse(f *testing.F) {
	for _, tt := range validRuleTests {
		f.Add([]byte(withRules(tt.rule)))
	}
	for _, tt := range ruleErrorTests {
		f.Add([]byte(withRules(tt.rule)))
	}
	f.Add([]byte(body{rules: expansionRules, exps: `{"target": "teams[red].minPlayers", "steps": [{"waitTimeSeconds": 5, "value": 1}]}`}.json()))
	files, _ := filepath.Glob(filepath.Join("testdata", "rulesets", "*.json"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rs, err := Parse(b)
		if err != nil {
			return
		}
		if len(rs.Teams) == 0 || rs.Algorithm.Strategy == "" || rs.Algorithm.BatchingPreference == "" {
			t.Errorf("accepted rule set without teams or defaults: %+v", rs)
		}
		for _, r := range rs.Rules {
			if r.Type != RuleCompound && r.PartyAggregation == "" {
				t.Errorf("rule %s has no partyAggregation", r.Name)
			}
		}
	})
}
