package flexmatch

import (
	"reflect"
	"strings"
	"testing"
)

// sel is a selector Expr for tests.
func sel(teams ...string) *Expr { return &Expr{Teams: teams, Players: true} }

// attrSel is a teams[...].players.attributes[attr] Expr for tests.
func attrSel(attr string, teams ...string) *Expr { return &Expr{Teams: teams, Attribute: attr} }

// fn is a function Expr for tests.
func fn(name string, arg *Expr) *Expr { return &Expr{Func: name, Arg: arg} }

func TestParseExprForms(t *testing.T) {
	tests := []struct {
		in   string
		want *Expr
	}{
		{"teams[red].players", sel("red")},
		{"team[red].players", sel("red")},
		{"teams[red,blue].players", sel("red", "blue")},
		{"teams[ red , blue ].players", sel("red", "blue")},
		{"teams[*].players", sel("*")},
		{"teams[red].players.attributes[skill]", attrSel("skill", "red")},
		{"teams[*].players.attributes[monster-kills]", attrSel("monster-kills", "*")},
		{"teams[red].players[playerId]", &Expr{Teams: []string{"red"}, PlayerID: true}},
		{"teams[red].players[playerid]", &Expr{Teams: []string{"red"}, PlayerID: true}},
		{"teams[Red Team].players", sel("Red Team")},
		{"avg(teams[red].players.attributes[skill])", fn("avg", attrSel("skill", "red"))},
		{"count (teams[*].players)", fn("count", sel("*"))},
		{" max( avg( teams[*] . players . attributes[ skill ] ) ) ", fn("max", fn("avg", attrSel("skill", "*")))},
		{"avg(flatten(teams[*].players.attributes[skill]))", fn("avg", fn("flatten", attrSel("skill", "*")))},
		{"set_intersection(flatten(teams[*].players.attributes[maps]))",
			fn("set_intersection", fn("flatten", attrSel("maps", "*")))},
		{"flatten(teams[*].players[playerId])", fn("flatten", &Expr{Teams: []string{"*"}, PlayerID: true})},
		{"stddev(teams[a].players.attributes[x])", fn("stddev", attrSel("x", "a"))},
		{"median(teams[a].players.attributes[x])", fn("median", attrSel("x", "a"))},
		{"sum(teams[a].players.attributes[x])", fn("sum", attrSel("x", "a"))},
		{"min(teams[a].players.attributes[x])", fn("min", attrSel("x", "a"))},
	}
	for _, tt := range tests {
		got, err := parseExpr(tt.in)
		if err != nil {
			t.Errorf("parseExpr(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseExpr(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseExprErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "expected a function or teams[...]"},
		{"players", `unknown function "players"`},
		{"average(teams[red].players)", `unknown function "average"`},
		{"avg teams[red].players", `expected '('`},
		{"avg(teams[red].players", `expected ')'`},
		{"avg(teams[red].players))", `unexpected ")"`},
		{"teams[red]", `expected '.'`},
		{"teams[red].", "expected players"},
		{"teams[red].people", "expected players"},
		{"teams[].players", "empty team names"},
		{"teams[red,].players", "empty team name in teams[red,]"},
		{"teams[red,red].players", "team red is named twice"},
		{"teams[*,red].players", "* must be the only name"},
		{"teams[red.players", "missing ] after team names"},
		{"teams[red].players.attributes", `expected '['`},
		{"teams[red].players.attributes[]", "empty attribute name"},
		{"teams[red].players.skill", "expected attributes"},
		{"teams[red].players[name]", `players[...] takes playerId, got "name"`},
		{"teams[red].players extra", `unexpected "extra"`},
		{strings.Repeat("avg(", 40) + "teams[a].players.attributes[x]" + strings.Repeat(")", 40), "nested more than"},
	}
	for _, tt := range tests {
		_, err := parseExpr(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseExpr(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestLooksLikeExpr(t *testing.T) {
	for s, want := range map[string]bool{
		"teams[red].players":       true,
		"team[red].players":        true,
		" teams [red]":             true,
		"avg(x)":                   true,
		"count (teams[*].players)": true,
		"medic":                    false,
		"teams":                    false,
		"average(x)":               false,
		"10":                       false,
		"":                         false,
		"max":                      false,
		"my teams[x]":              false,
	} {
		if got := looksLikeExpr(s); got != want {
			t.Errorf("looksLikeExpr(%q) = %v, want %v", s, got, want)
		}
	}
}

// testChecker is a checker over a few teams and attributes of every type.
func testChecker() exprChecker {
	return exprChecker{
		teams: []Team{{Name: "red", MaxPlayers: 4, Quantity: 1}, {Name: "blue", MaxPlayers: 4, Quantity: 1},
			{Name: "squad", MaxPlayers: 3, Quantity: 3}},
		attrs: []Attribute{{Name: "skill", Type: TypeNumber}, {Name: "mode", Type: TypeString},
			{Name: "maps", Type: TypeStringList}, {Name: "prefs", Type: TypeStringNumberMap}},
	}
}

func TestExprTypes(t *testing.T) {
	tests := []struct {
		in   string
		want exprType
	}{
		{"teams[red].players", exprType{elemPlayer, 1}},
		{"teams[*].players", exprType{elemPlayer, 2}},
		{"teams[red,blue].players", exprType{elemPlayer, 2}},
		{"teams[squad].players", exprType{elemPlayer, 2}},
		{"teams[squad_2].players", exprType{elemPlayer, 1}},
		{"teams[red].players.attributes[skill]", exprType{elemNumber, 1}},
		{"teams[red].players.attributes[mode]", exprType{elemString, 1}},
		{"teams[red].players.attributes[maps]", exprType{elemStringList, 1}},
		{"teams[red].players[playerId]", exprType{elemString, 1}},
		{"avg(teams[red].players.attributes[skill])", exprType{elemNumber, 0}},
		{"avg(teams[*].players.attributes[skill])", exprType{elemNumber, 1}},
		{"max(avg(teams[*].players.attributes[skill]))", exprType{elemNumber, 0}},
		{"avg(flatten(teams[*].players.attributes[skill]))", exprType{elemNumber, 0}},
		{"count(teams[red].players)", exprType{elemNumber, 0}},
		{"max(count(teams[*].players))", exprType{elemNumber, 0}},
		{"flatten(teams[*].players.attributes[maps])", exprType{elemStringList, 1}},
		{"flatten(teams[red].players.attributes[maps])", exprType{elemStringList, 0}},
		{"set_intersection(teams[red].players.attributes[maps])", exprType{elemStringList, 0}},
		{"set_intersection(flatten(teams[*].players.attributes[maps]))", exprType{elemStringList, 0}},
		{"set_intersection(teams[*].players.attributes[maps])", exprType{elemStringList, 1}},
		{"count(set_intersection(teams[red].players.attributes[maps]))", exprType{elemNumber, 0}},
		{"flatten(teams[*].players[playerId])", exprType{elemString, 1}},
	}
	for _, tt := range tests {
		e, err := parseExpr(tt.in)
		if err != nil {
			t.Fatalf("parseExpr(%q): %v", tt.in, err)
		}
		got, err := testChecker().check(e)
		if err != nil || got != tt.want {
			t.Errorf("check(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
		}
	}
}

func TestExprTypeErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"teams[green].players", "no team named green"},
		{"teams[squad_4].players", "no team named squad_4"},
		{"teams[red].players.attributes[level]", "no player attribute named level"},
		{"teams[red].players.attributes[prefs]", "prefs is a string_number_map"},
		{"avg(teams[red].players.attributes[mode])", "avg() can't take a list of strings"},
		{"avg(teams[red].players)", "avg() can't take a list of players"},
		{"avg(avg(teams[red].players.attributes[skill]))", "avg() can't take a single value"},
		{"count(count(teams[red].players))", "count() can't take a single value"},
		{"flatten(teams[red].players.attributes[skill])", "flatten() can't take a list of numbers"},
		{"set_intersection(teams[red].players.attributes[skill])", "set_intersection() can't take"},
		{"set_intersection(teams[red].players.attributes[mode])", "set_intersection() can't take"},
	}
	for _, tt := range tests {
		e, err := parseExpr(tt.in)
		if err != nil {
			t.Fatalf("parseExpr(%q): %v", tt.in, err)
		}
		if _, err := testChecker().check(e); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("check(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestParseStatement(t *testing.T) {
	ref := func(n string) *Statement { return &Statement{Rule: n} }
	op := func(o string, args ...*Statement) *Statement { return &Statement{Op: o, Args: args} }
	tests := []struct {
		in   string
		want *Statement
	}{
		{"A", ref("A")},
		{"and(A, B)", op("and", ref("A"), ref("B"))},
		{"or(and(A, B), not(C))", op("or", op("and", ref("A"), ref("B")), op("not", ref("C")))},
		{" xor( A ,B,C ) ", op("xor", ref("A"), ref("B"), ref("C"))},
		{"or(low-latency, Fair Skill)", op("or", ref("low-latency"), ref("Fair Skill"))},
		{"and(and, or)", op("and", ref("and"), ref("or"))},
	}
	for _, tt := range tests {
		got, err := parseStatement(tt.in)
		if err != nil {
			t.Errorf("parseStatement(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseStatement(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseStatementErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "expected a rule name"},
		{"and(A)", "and takes two or more arguments, got 1"},
		{"or(A)", "or takes two or more arguments"},
		{"xor(A)", "xor takes two or more arguments"},
		{"not(A, B)", "not takes one argument, got 2"},
		{"nand(A, B)", `unknown operator "nand"`},
		{"and(A, B", `expected ')'`},
		{"and(A,, B)", "expected a rule name"},
		{"and(A, B) C", `unexpected "C"`},
		{"A, B", `unexpected ", B"`},
		{strings.Repeat("not(", 40) + "A" + strings.Repeat(")", 40), "nested more than"},
	}
	for _, tt := range tests {
		_, err := parseStatement(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseStatement(%q) error = %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

// FuzzParseExpr checks that the expression, statement and target parsers and the
// expression checker never panic.
func FuzzParseExpr(f *testing.F) {
	for _, s := range []string{
		"max(avg(teams[*].players.attributes[skill]))", "set_intersection(flatten(team[squad].players.attributes[maps]))",
		"count(teams[red, blue].players)", "teams[squad_2].players[playerId]", "or(and(A, B), not(C))",
		"rules[Fast].maxLatency", "teams[red, blue].minPlayers", "avg(", "teams[", "xor(A,", "]].[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if e, err := parseExpr(s); err == nil {
			_, _ = testChecker().check(e)
		}
		_, _ = parseStatement(s)
		_, _ = parseTarget(s)
		_ = looksLikeExpr(s)
	})
}
