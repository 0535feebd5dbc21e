package sessionquery

import (
	"errors"
	"strings"
	"testing"
)

// atoms stands in for conditions in grammar tests, so that tables stay readable.
var atoms = strings.NewReplacer(
	"$a", "maximumSessions = 1",
	"$b", "maximumSessions = 2",
	"$c", "maximumSessions = 3",
	"$d", "maximumSessions = 4",
)

// dump renders a tree fully parenthesised, prefix style: (OR (AND x y) z).
func dump(n node) string {
	var b strings.Builder
	switch n := n.(type) {
	case *orNode:
		return "(OR " + dump(n.l) + " " + dump(n.r) + ")"
	case *andNode:
		return "(AND " + dump(n.l) + " " + dump(n.r) + ")"
	case *notNode:
		return "(NOT " + dump(n.x) + ")"
	default:
		n.write(&b)
	}
	return b.String()
}

// mustParse parses expr or fails the test.
func mustParse(t *testing.T, expr string) *Filter {
	t.Helper()
	f, err := ParseFilter(expr)
	if err != nil {
		t.Fatalf("ParseFilter(%q): %v", expr, err)
	}
	return f
}

func TestPrecedence(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"$a AND $b OR $c", "(OR (AND $a $b) $c)"},
		{"$a OR $b AND $c", "(OR $a (AND $b $c))"},
		{"$a OR $b AND $c OR $d", "(OR (OR $a (AND $b $c)) $d)"},
		{"$a AND $b AND $c", "(AND (AND $a $b) $c)"},
		{"$a OR $b OR $c", "(OR (OR $a $b) $c)"},
		{"NOT $a AND $b", "(AND (NOT $a) $b)"},
		{"NOT $a OR $b", "(OR (NOT $a) $b)"},
		{"$a AND NOT $b", "(AND $a (NOT $b))"},
		{"NOT NOT $a", "(NOT (NOT $a))"},
		{"NOT ($a OR $b)", "(NOT (OR $a $b))"},
		{"NOT ($a AND $b) OR $c", "(OR (NOT (AND $a $b)) $c)"},
		{"$a AND ($b OR $c)", "(AND $a (OR $b $c))"},
		{"($a OR $b) AND $c", "(AND (OR $a $b) $c)"},
		{"$a AND ($b AND $c)", "(AND $a (AND $b $c))"},
		{"((($a)))", "$a"},
		{"$a AND $b AND NOT $c", "(AND (AND $a $b) (NOT $c))"}, // the reference's "x AND y AND NOT z"
		{"NOT ($a OR $b)", "(NOT (OR $a $b))"},                 // the reference's "NOT (x OR y)"
	}
	for _, tt := range tests {
		expr := atoms.Replace(tt.expr)
		if got, want := dump(mustParse(t, expr).root), atoms.Replace(tt.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.expr, got, want)
		}
	}
}

func TestCanonicalString(t *testing.T) {
	tests := []struct{ expr, want string }{
		{"maximumSessions>=10 AND hasAvailablePlayerSessions=true",
			"maximumSessions >= 10 AND hasAvailablePlayerSessions = true"},
		{"$a and ($b or $c)", "$a AND ($b OR $c)"},
		{"$a AND ($b AND $c)", "$a AND ($b AND $c)"},
		{"($a AND $b) AND $c", "$a AND $b AND $c"},
		{"($a OR $b) OR ($c OR $d)", "$a OR $b OR ($c OR $d)"},
		{"not($a)", "NOT $a"},
		{"NOT ($a AND $b)", "NOT ($a AND $b)"},
		{`gameSessionProperties.gameMode = "brawl"`, "gameSessionProperties.gameMode = 'brawl'"},
		{`gameSessionName <> "Matt's \\ game"`, `gameSessionName <> 'Matt\'s \\ game'`},
		{"hasAvailablePlayerSessions <> FALSE", "hasAvailablePlayerSessions <> false"},
		{"creationTimeMillis < -0042", "creationTimeMillis < -42"},
	}
	for _, tt := range tests {
		f := mustParse(t, atoms.Replace(tt.expr))
		if got, want := f.String(), atoms.Replace(tt.want); got != want {
			t.Errorf("%s:\n got %s\nwant %s", tt.expr, got, want)
		}
		if again := mustParse(t, f.String()).String(); again != f.String() {
			t.Errorf("%s: String does not parse back to itself: %s", tt.expr, again)
		}
	}
}

func TestLexicalForms(t *testing.T) {
	tests := []struct{ expr, want string }{
		// Whitespace: optional around comparators and parentheses, any Unicode space between words.
		{"maximumSessions=1", "maximumSessions = 1"},
		{"  maximumSessions \t=\n1  ", "maximumSessions = 1"},
		{"(maximumSessions=1)AND(maximumSessions=2)", "$a AND $b"},
		{"NOT(maximumSessions=1)", "NOT $a"},
		{"maximumSessions=1\u00a0AND\u3000maximumSessions=2", "$a AND $b"},
		// Keywords in any case; operand names as documented.
		{"$a and $b Or NoT $c", "$a AND $b OR NOT $c"},
		{"hasAvailablePlayerSessions=True", "hasAvailablePlayerSessions = true"},
		// Quotes: single or double, backslash escapes the next character.
		{`gameSessionName = 'Matt\'s Awesome Game 1'`, `gameSessionName = 'Matt\'s Awesome Game 1'`},
		{`gameSessionName = "say \"hi\""`, `gameSessionName = 'say "hi"'`},
		{`gameSessionName = "it's"`, `gameSessionName = 'it\'s'`},
		{`gameSessionName = 'a\\b'`, `gameSessionName = 'a\\b'`},
		{`gameSessionName = 'a\nb'`, `gameSessionName = 'anb'`},
		{`gameSessionName = ''`, `gameSessionName = ''`},
		{`gameSessionName='AND (x) OR <> ='`, `gameSessionName = 'AND (x) OR <> ='`},
		{`gameSessionName = 'ünïcødé 🎮'`, `gameSessionName = 'ünïcødé 🎮'`},
		// Property keys with odd characters.
		{"gameSessionProperties.map-name = 'x'", "gameSessionProperties.map-name = 'x'"},
		{"gameSessionProperties.a:b/c_d@e = 'x'", "gameSessionProperties.a:b/c_d@e = 'x'"},
		{"gameSessionProperties.ключ='x'", "gameSessionProperties.ключ = 'x'"},
		{`gameSessionProperties.a\b = 'x'`, `gameSessionProperties.a\b = 'x'`},
		{"gameSessionProperties.a.b = 'x'", "gameSessionProperties.a.b = 'x'"},
		{"gameSessionProperties.AND = 'x'", "gameSessionProperties.AND = 'x'"},
		{"gameSessionProperties.7 = 'x'", "gameSessionProperties.7 = 'x'"},
		// Integers.
		{"creationTimeMillis >= 1700000000000", "creationTimeMillis >= 1700000000000"},
		{"maximumSessions > -1", "maximumSessions > -1"},
		{"creationTimeMillis < 9223372036854775807", "creationTimeMillis < 9223372036854775807"},
		{"creationTimeMillis > -9223372036854775808", "creationTimeMillis > -9223372036854775808"},
	}
	for _, tt := range tests {
		f := mustParse(t, atoms.Replace(tt.expr))
		if got, want := f.String(), atoms.Replace(tt.want); got != want {
			t.Errorf("%q:\n got %s\nwant %s", tt.expr, got, want)
		}
	}
}

func TestEveryOperandAndComparator(t *testing.T) {
	numeric := []string{"maximumSessions", "creationTimeMillis", "playerSessionCount"}
	for _, op := range numeric {
		for _, c := range []string{"=", "<>", "<", ">", "<=", ">="} {
			mustParse(t, op+" "+c+" 5")
		}
	}
	for _, op := range []string{"gameSessionName", "gameSessionId", "gameSessionProperties.k"} {
		for _, c := range []string{"=", "<>"} {
			mustParse(t, op+" "+c+" 'v'")
		}
		for _, c := range []string{"<", ">", "<=", ">="} {
			if _, err := ParseFilter(op + " " + c + " 'v'"); err == nil {
				t.Errorf("%s %s accepted; string operands allow only = and <>", op, c)
			}
		}
	}
	for _, c := range []string{"<", ">", "<=", ">="} {
		if _, err := ParseFilter("hasAvailablePlayerSessions " + c + " true"); err == nil {
			t.Errorf("hasAvailablePlayerSessions %s accepted; booleans allow only = and <>", c)
		}
	}
}

func TestLengthLimit(t *testing.T) {
	pad := func(n int, fill string) string {
		base := "gameSessionName = '"
		return base + strings.Repeat(fill, n-len(base)-1) + "'"
	}
	mustParse(t, pad(MaxExpressionLength, "x"))
	// 1024 characters, more bytes: the limit counts characters.
	multi := "gameSessionName = '" + strings.Repeat("é", MaxExpressionLength-20) + "'"
	mustParse(t, multi)
	_, err := ParseFilter(pad(MaxExpressionLength+1, "x"))
	var e *Error
	if !errors.As(err, &e) || e.Pos != 0 || !strings.Contains(e.Msg, "1025 characters") {
		t.Errorf("1025 characters: got %v", err)
	}
}

func TestNilFilterAndSort(t *testing.T) {
	var f *Filter
	var s *Sort
	a, b := &Session{ID: "a"}, &Session{ID: "b"}
	if !f.Match(a) || f.String() != "" {
		t.Errorf("nil Filter: Match %v, String %q; want true, empty", f.Match(a), f.String())
	}
	if s.Compare(a, b) != 0 || s.Less(a, b) || s.String() != "" {
		t.Errorf("nil Sort: Compare %d; want 0", s.Compare(a, b))
	}
}
