package flexmatch

import (
	"fmt"
	"slices"
	"strings"
)

// Property expressions and compound statements: their syntax (parseExpr, parseStatement)
// and the checks that tie them to a rule set (exprChecker.check).
//
// Grammar (whitespace is allowed between any two tokens):
//
//	expr     = func "(" expr ")" | selector
//	func     = min | max | avg | median | sum | stddev | count | flatten | set_intersection
//	selector = ("teams" | "team") "[" names "]" "." "players" [ players ]
//	names    = "*" | name { "," name }
//	players  = "." "attributes" "[" name "]" | "[" "playerId" "]"
//
// "team[" is the spelling of some of the guide's tables; "playerid" is the 2022 guide's.

// isExprFunc reports whether name is a property expression function.
func isExprFunc(name string) bool {
	switch name {
	case "min", "max", "avg", "median", "sum", "stddev", "count", "flatten", "set_intersection":
		return true
	}
	return false
}

// isNumericFunc reports whether name is a function from a list of numbers to a number.
func isNumericFunc(name string) bool {
	return isExprFunc(name) && name != "count" && name != "flatten" && name != "set_intersection"
}

// looksLikeExpr reports whether a string is meant as a property expression rather than a
// literal: it starts with a team selector or with a function name and "(". A referenceValue
// such as "medic" is a literal; "teams[red]..." or "avg(...)" is parsed (and must parse).
func looksLikeExpr(s string) bool {
	l := exprLexer{s: s}
	l.space()
	word := l.ident()
	l.space()
	next := l.peek()
	return (next == '[' && (word == "teams" || word == "team")) || (next == '(' && isExprFunc(word))
}

// parseExpr parses a property expression; it checks syntax only (see exprChecker).
func parseExpr(s string) (*Expr, error) {
	l := exprLexer{s: s}
	e, err := l.expr(0)
	if err != nil {
		return nil, err
	}
	if l.space(); !l.done() {
		return nil, l.errorf("unexpected %q after the expression", l.rest())
	}
	return e, nil
}

// maxExprDepth bounds function nesting, so that a hostile body cannot exhaust the stack.
const maxExprDepth = 32

// exprLexer reads an expression or statement left to right.
type exprLexer struct {
	s   string
	pos int
}

// expr reads an expression: a function application or a selector.
func (l *exprLexer) expr(depth int) (*Expr, error) {
	if depth > maxExprDepth {
		return nil, l.errorf("functions are nested more than %d deep", maxExprDepth)
	}
	l.space()
	start := l.pos
	word := l.ident()
	l.space()
	switch {
	case word == "teams" || word == "team":
		return l.selector()
	case word == "":
		return nil, l.errorf("expected a function or teams[...], got %q", l.rest())
	case !isExprFunc(word):
		l.pos = start
		return nil, l.errorf("unknown function %q", word)
	}
	if err := l.expect('('); err != nil {
		return nil, err
	}
	arg, err := l.expr(depth + 1)
	if err != nil {
		return nil, err
	}
	if err := l.expect(')'); err != nil {
		return nil, err
	}
	return &Expr{Func: word, Arg: arg}, nil
}

// selector reads the rest of a selector after "teams".
func (l *exprLexer) selector() (*Expr, error) {
	inner, err := l.bracketed("team names")
	if err != nil {
		return nil, err
	}
	e := &Expr{}
	if e.Teams, err = l.teamNames(inner); err != nil {
		return nil, err
	}
	if err := l.expect('.'); err != nil {
		return nil, err
	}
	if l.space(); l.ident() != "players" {
		return nil, l.errorf("expected players after teams[...].")
	}
	e.Players = true
	return e, l.playerPart(e)
}

// playerPart reads what may follow ".players": ".attributes[name]" or "[playerId]".
func (l *exprLexer) playerPart(e *Expr) error {
	l.space()
	switch l.peek() {
	case '.':
		l.pos++
		if l.space(); l.ident() != "attributes" {
			return l.errorf("expected attributes after players.")
		}
		name, err := l.bracketed("attribute name")
		e.Players, e.Attribute = false, name
		return err
	case '[':
		inner, err := l.bracketed("playerId")
		if err == nil && !strings.EqualFold(inner, "playerId") {
			err = l.errorf("players[...] takes playerId, got %q", inner)
		}
		e.Players, e.PlayerID = false, true
		return err
	}
	return nil
}

// teamNames splits and checks a selector's team names.
func (l *exprLexer) teamNames(inner string) ([]string, error) {
	names := strings.Split(inner, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
		switch {
		case names[i] == "":
			return nil, l.errorf("empty team name in teams[%s]", inner)
		case names[i] == "*" && len(names) > 1:
			return nil, l.errorf("* must be the only name in teams[%s]", inner)
		case slices.Contains(names[:i], names[i]):
			return nil, l.errorf("team %s is named twice in teams[%s]", names[i], inner)
		}
	}
	return names, nil
}

// bracketed reads "[" text "]" and returns the trimmed text, which must not be empty.
func (l *exprLexer) bracketed(what string) (string, error) {
	if err := l.expect('['); err != nil {
		return "", err
	}
	end := strings.IndexAny(l.s[l.pos:], "[]")
	if end < 0 || l.s[l.pos+end] != ']' {
		return "", l.errorf("missing ] after %s", what)
	}
	inner := strings.TrimSpace(l.s[l.pos : l.pos+end])
	l.pos += end + 1
	if inner == "" {
		return "", l.errorf("empty %s in []", what)
	}
	return inner, nil
}

// ident reads a run of letters, digits and underscores (possibly empty).
func (l *exprLexer) ident() string {
	start := l.pos
	for !l.done() {
		c := l.s[l.pos]
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			break
		}
		l.pos++
	}
	return l.s[start:l.pos]
}

// expect skips spaces and reads c.
func (l *exprLexer) expect(c byte) error {
	if l.space(); l.peek() != c {
		if l.done() {
			return l.errorf("expected %q, got the end of the expression", c)
		}
		return l.errorf("expected %q, got %q", c, l.rest())
	}
	l.pos++
	return nil
}

// space skips whitespace.
func (l *exprLexer) space() {
	for !l.done() && strings.IndexByte(" \t\r\n", l.s[l.pos]) >= 0 {
		l.pos++
	}
}

// peek is the next byte, or 0 at the end.
func (l *exprLexer) peek() byte {
	if l.done() {
		return 0
	}
	return l.s[l.pos]
}

// done reports whether all input was read.
func (l *exprLexer) done() bool { return l.pos >= len(l.s) }

// rest is the unread input, shortened for messages.
func (l *exprLexer) rest() string {
	r := l.s[l.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

// errorf is a syntax error at the current position.
func (l *exprLexer) errorf(format string, args ...any) error {
	return fmt.Errorf("at character %d: %s", l.pos+1, fmt.Sprintf(format, args...))
}

// elemKind is the kind of the values an expression yields.
type elemKind int

const (
	elemPlayer     elemKind = iota // players (teams[...].players): only count takes them
	elemNumber                     // numbers
	elemString                     // strings (string attributes, player IDs)
	elemStringList                 // string lists (string_list attributes, set_intersection)
)

// String names the kind for error messages.
func (k elemKind) String() string {
	return [...]string{"players", "numbers", "strings", "string lists"}[k]
}

// exprType is what an expression yields: values of kind elem, in lists nested depth deep
// (depth 0 is a single value, 1 a list, 2 a list of lists such as one list per team).
type exprType struct {
	elem  elemKind
	depth int
}

// strDepth is the nesting of strings, a string list counting as one level (so a list of
// string lists and a list of lists of strings are alike).
func (t exprType) strDepth() int {
	if t.elem == elemStringList {
		return t.depth + 1
	}
	return t.depth
}

// exprChecker checks expressions against the rule set's teams and attributes.
type exprChecker struct {
	teams []Team
	attrs []Attribute
}

// check checks e and returns its type.
func (c exprChecker) check(e *Expr) (exprType, error) {
	if e.Func == "" {
		return c.selectorType(e)
	}
	in, err := c.check(e.Arg)
	if err != nil {
		return in, err
	}
	out, ok := funcType(e.Func, in)
	if !ok {
		return out, fmt.Errorf("%s() can't take %s", e.Func, describeType(in))
	}
	return out, nil
}

// funcType is the result of applying f to a value of type in; ok is false when f does not
// take it. Every function but flatten applies to each sublist of a nested list.
func funcType(f string, in exprType) (out exprType, ok bool) {
	switch {
	case isNumericFunc(f):
		return exprType{elemNumber, in.depth - 1}, in.elem == elemNumber && in.depth >= 1
	case f == "count" && in.depth == 0:
		return exprType{elemNumber, 0}, in.elem == elemStringList
	case f == "count":
		return exprType{elemNumber, in.depth - 1}, true
	case f == "set_intersection":
		return exprType{elemStringList, in.strDepth() - 2}, in.elem >= elemString && in.strDepth() >= 2
	case in.elem == elemStringList: // flatten
		return exprType{elemStringList, in.depth - 1}, in.depth >= 1
	}
	return exprType{in.elem, in.depth - 1}, in.depth >= 2
}

// describeType names a type for error messages.
func describeType(t exprType) string {
	switch t.depth {
	case 0:
		if t.elem == elemStringList {
			return "a string list"
		}
		return "a single value"
	case 1:
		return "a list of " + t.elem.String()
	}
	return "nested lists of " + t.elem.String()
}

// selectorType checks a selector's teams and attribute and returns its type.
func (c exprChecker) selectorType(e *Expr) (exprType, error) {
	depth := 1
	if len(e.Teams) > 1 || e.Teams[0] == "*" {
		depth = 2
	}
	for _, n := range e.Teams {
		q, ok := c.teamQuantity(n)
		if !ok {
			return exprType{}, fmt.Errorf("no team named %s", n)
		}
		if q > 1 {
			depth = 2
		}
	}
	switch {
	case e.PlayerID:
		return exprType{elemString, depth}, nil
	case e.Attribute == "":
		return exprType{elemPlayer, depth}, nil
	}
	a := findAttr(c.attrs, e.Attribute)
	if a == nil {
		return exprType{}, fmt.Errorf("no player attribute named %s", e.Attribute)
	}
	elem, ok := attrElem(a.Type)
	if !ok {
		return exprType{}, fmt.Errorf("attribute %s is a %s, which property expressions can't use", a.Name, a.Type)
	}
	return exprType{elem, depth}, nil
}

// teamQuantity finds a team by a selector's name: "*", a definition's name (all of its
// teams), or the name of one team of a definition with a quantity (red_2).
//
// Hoist: the guide's expressions only use definition names; Hoist also takes the red_2
// names a match gives such teams (and the evaluator selects them), but not in expansion
// targets, which name definitions.
func (c exprChecker) teamQuantity(name string) (int, bool) {
	if name == "*" {
		return 2, true
	}
	for _, t := range c.teams {
		if t.Name == name {
			return t.Quantity, true
		}
		if t.Quantity > 1 && slices.Contains(instanceNames(t), name) {
			return 1, true
		}
	}
	return 0, false
}

// attrElem is the kind of an attribute's values; a string_number_map has none.
func attrElem(t AttrType) (elemKind, bool) {
	switch t {
	case TypeNumber:
		return elemNumber, true
	case TypeString:
		return elemString, true
	case TypeStringList:
		return elemStringList, true
	}
	return 0, false
}

// findAttr finds a declared attribute by name; nil if there is none.
func findAttr(attrs []Attribute, name string) *Attribute {
	for i := range attrs {
		if attrs[i].Name == name {
			return &attrs[i]
		}
	}
	return nil
}

// parseStatement parses a compound rule's statement: and(...), or(...), xor(...) (two or
// more arguments), not(...) (exactly one), or a rule name.
func parseStatement(s string) (*Statement, error) {
	l := exprLexer{s: s}
	st, err := l.statement(0)
	if err != nil {
		return nil, err
	}
	if l.space(); !l.done() {
		return nil, l.errorf("unexpected %q after the statement", l.rest())
	}
	return st, nil
}

// statement reads one statement.
func (l *exprLexer) statement(depth int) (*Statement, error) {
	if depth > maxExprDepth {
		return nil, l.errorf("operators are nested more than %d deep", maxExprDepth)
	}
	l.space()
	start := l.pos
	word := l.ident()
	if l.space(); l.peek() == '(' {
		return l.operator(word, start, depth)
	}
	l.pos = start
	name := l.ruleName()
	if name == "" {
		return nil, l.errorf("expected a rule name or and/or/not/xor, got %q", l.rest())
	}
	return &Statement{Rule: name}, nil
}

// operator reads the arguments of operator op, whose "(" is next.
func (l *exprLexer) operator(op string, start, depth int) (*Statement, error) {
	if op != "and" && op != "or" && op != "not" && op != "xor" {
		l.pos = start
		return nil, l.errorf("unknown operator %q (use and, or, not, xor)", op)
	}
	l.pos++
	st := &Statement{Op: op}
	for {
		arg, err := l.statement(depth + 1)
		if err != nil {
			return nil, err
		}
		st.Args = append(st.Args, arg)
		if l.space(); l.peek() != ',' {
			break
		}
		l.pos++
	}
	if err := l.expect(')'); err != nil {
		return nil, err
	}
	switch {
	case op == "not" && len(st.Args) != 1:
		return nil, l.errorf("not takes one argument, got %d", len(st.Args))
	case op != "not" && len(st.Args) < 2:
		return nil, l.errorf("%s takes two or more arguments, got %d", op, len(st.Args))
	}
	return st, nil
}

// ruleName reads a rule name: everything up to a parenthesis or comma, trimmed.
func (l *exprLexer) ruleName() string {
	end := strings.IndexAny(l.s[l.pos:], "(),")
	if end < 0 {
		end = len(l.s) - l.pos
	}
	name := strings.TrimSpace(l.s[l.pos : l.pos+end])
	l.pos += end
	return name
}
