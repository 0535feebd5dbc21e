package sessionquery

import (
	"errors"
	"strconv"
	"strings"
)

// Filter is a compiled FilterExpression. A nil *Filter matches every session. A Filter is
// immutable and safe for concurrent use.
type Filter struct {
	root node
}

// ParseFilter parses and compiles a FilterExpression. A malformed expression gives an *Error.
func ParseFilter(expr string) (*Filter, error) {
	if err := checkLength(FilterField, expr); err != nil {
		return nil, err
	}
	return parseFilter(expr)
}

// parseFilter is ParseFilter without the length limit, which String's output (spaced and
// escaped) may exceed.
func parseFilter(expr string) (*Filter, error) {
	p, err := newParser(FilterField, expr)
	if err != nil {
		return nil, err
	}
	root, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, p.trailing(t)
	}
	return &Filter{root: root}, nil
}

// Match reports whether s satisfies the filter. It does not allocate.
func (f *Filter) Match(s *Session) bool {
	if f == nil {
		return true
	}
	return f.root.match(s)
}

// String returns the filter in canonical form: single-quoted strings, upper-case keywords,
// single spaces, and only the parentheses the tree needs. It parses back to the same filter,
// though it may be longer than the expression it came from.
func (f *Filter) String() string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	f.root.write(&b)
	return b.String()
}

// parser is a recursive-descent parser over the tokens of one expression.
type parser struct {
	field string
	src   string
	toks  []token
	i     int
}

// newParser splits an expression into tokens.
func newParser(field, src string) (*parser, error) {
	toks, err := lex(field, src)
	if err != nil {
		return nil, err
	}
	if toks[0].kind == tokEOF {
		return nil, &Error{Field: field, Msg: "is blank"}
	}
	return &parser{field: field, src: src, toks: toks}, nil
}

// peek returns the current token.
func (p *parser) peek() token { return p.toks[p.i] }

// next consumes and returns the current token.
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tokEOF {
		p.i++
	}
	return t
}

// errAt returns an error located at byte offset off.
func (p *parser) errAt(off int, msg string) *Error {
	return &Error{Field: p.field, Pos: position(p.src, off), Msg: msg}
}

// expected reports that the current token is not what the grammar needs. At the end of the
// expression the position is just after the previous token.
func (p *parser) expected(what string) *Error {
	t := p.peek()
	msg := "expected " + what
	if p.i > 0 {
		msg += " after " + quoteText(p.toks[p.i-1].text)
	}
	if t.kind == tokEOF {
		if p.i == 0 {
			return p.errAt(0, msg)
		}
		return p.errAt(p.toks[p.i-1].end, msg)
	}
	return p.errAt(t.start, msg+" but found "+quoteText(t.text))
}

// trailing reports a token after a complete expression.
func (p *parser) trailing(t token) *Error {
	if t.kind == tokRParen {
		return p.errAt(t.start, "unexpected ')' without a matching '('")
	}
	if prev := p.toks[p.i-1]; t.kind == tokString && prev.kind == tokString && prev.end == t.start {
		return p.errAt(t.start, "a doubled quote does not escape a quote; write \\' or \\\" instead")
	}
	return p.expected("AND, OR or the end of the expression")
}

// isKeyword reports whether t is the keyword kw, in any letter case.
func isKeyword(t token, kw string) bool {
	return t.kind == tokWord && asciiEqualFold(t.text, kw)
}

// asciiEqualFold reports whether a and b are equal ignoring ASCII letter case.
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lower(a[i]) != lower(b[i]) {
			return false
		}
	}
	return true
}

// lower returns c in lower case if it is an ASCII letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// parseOr parses: and { OR and }.
func (p *parser) parseOr() (node, error) {
	x, err := p.parseAnd()
	for err == nil && isKeyword(p.peek(), "OR") {
		p.next()
		var y node
		if y, err = p.parseAnd(); err == nil {
			x = &orNode{l: x, r: y}
		}
	}
	return x, err
}

// parseAnd parses: not { AND not }.
func (p *parser) parseAnd() (node, error) {
	x, err := p.parseNot()
	for err == nil && isKeyword(p.peek(), "AND") {
		p.next()
		var y node
		if y, err = p.parseNot(); err == nil {
			x = &andNode{l: x, r: y}
		}
	}
	return x, err
}

// parseNot parses: NOT not | primary.
func (p *parser) parseNot() (node, error) {
	if !isKeyword(p.peek(), "NOT") {
		return p.parsePrimary()
	}
	p.next()
	x, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	return &notNode{x: x}, nil
}

// parsePrimary parses: "(" or ")" | condition.
func (p *parser) parsePrimary() (node, error) {
	t := p.peek()
	switch {
	case t.kind == tokLParen:
		return p.parseParens()
	case t.kind == tokWord && !isKeyword(t, "AND") && !isKeyword(t, "OR"):
		return p.parseCondition()
	}
	return nil, p.expected("a condition")
}

// parseParens parses a parenthesised expression.
func (p *parser) parseParens() (node, error) {
	open := p.next()
	x, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokRParen {
		e := p.expected("')'")
		e.Msg = "the '(' at position " + strconv.Itoa(position(p.src, open.start)) + " is not closed: " + e.Msg
		return nil, e
	}
	p.next()
	return x, nil
}

// parseCondition parses: operand comparator value.
func (p *parser) parseCondition() (node, error) {
	t := p.next()
	op, key, err := p.resolveOperand(t)
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokComparator {
		return nil, p.expected("a comparator (= <> < > <= >=)")
	}
	ct := p.next()
	cmp := validComparators[ct.text]
	if op.kind() != kindNumber && cmp != cmpEQ && cmp != cmpNE {
		return nil, p.errAt(ct.start, "comparator "+quoteText(ct.text)+" cannot be used with "+
			op.name()+": string and boolean operands allow only = and <>")
	}
	return p.parseValue(op, key, cmp)
}

// parseValue parses the value of a condition on op and builds the condition.
func (p *parser) parseValue(op operand, key string, cmp comparator) (node, error) {
	t := p.peek()
	if t.kind == tokEOF {
		return nil, p.expected("a value")
	}
	switch op.kind() {
	case kindString:
		if t.kind != tokString {
			return nil, p.errAt(t.start, op.name()+" takes a quoted string value, not "+quoteText(t.text))
		}
		p.next()
		return &stringCond{op: op, key: key, ne: cmp == cmpNE, value: t.str}, nil
	case kindBool:
		if !isKeyword(t, "true") && !isKeyword(t, "false") {
			return nil, p.errAt(t.start, op.name()+" takes true or false, not "+quoteText(t.text))
		}
		p.next()
		return &boolCond{ne: cmp == cmpNE, value: isKeyword(t, "true")}, nil
	}
	v, err := p.parseNumber(op, t)
	if err != nil {
		return nil, err
	}
	p.next()
	return &numberCond{op: op, cmp: cmp, value: v}, nil
}

// parseNumber reads the integer value of a condition on the numeric operand op.
func (p *parser) parseNumber(op operand, t token) (int64, error) {
	if t.kind != tokNumber {
		return 0, p.errAt(t.start, op.name()+" takes an integer value, not "+quoteText(t.text))
	}
	v, err := strconv.ParseInt(t.text, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, p.errAt(t.start, "number "+quoteText(t.text)+" does not fit in 64 bits")
	}
	if err != nil {
		return 0, p.errAt(t.start, "invalid integer "+quoteText(t.text))
	}
	return v, nil
}

// resolveOperand maps a word to an operand and, for a game property, its key.
func (p *parser) resolveOperand(t token) (operand, string, error) {
	if strings.HasPrefix(t.text, propertyPrefix) && len(t.text) > len(propertyPrefix) {
		return opProperty, t.text[len(propertyPrefix):], nil
	}
	for op, name := range operandText {
		if name != "" && operand(op) != opProperty && name == t.text {
			return operand(op), "", nil
		}
	}
	return 0, "", p.unknownOperand(t)
}

// unknownOperand explains why t is not an operand.
func (p *parser) unknownOperand(t token) *Error {
	prop := operandText[opProperty]
	if len(t.text) >= len(prop) && asciiEqualFold(t.text[:len(prop)], prop) &&
		(len(t.text) == len(prop) || t.text[len(prop)] == '.') {
		if t.text[:len(prop)] == prop {
			return p.errAt(t.start, quoteText(t.text)+" needs a game property key, as in "+prop+".gameMode")
		}
		return p.errAt(t.start, "unknown operand "+quoteText(t.text)+
			" (operand names are case-sensitive; did you mean "+prop+"?)")
	}
	for _, name := range operandText {
		if name != "" && asciiEqualFold(name, t.text) {
			return p.errAt(t.start, "unknown operand "+quoteText(t.text)+
				" (operand names are case-sensitive; did you mean "+name+"?)")
		}
	}
	return p.errAt(t.start, "unknown operand "+quoteText(t.text)+" (the operands are gameSessionName, "+
		"gameSessionId, gameSessionProperties.<key>, maximumSessions, creationTimeMillis, "+
		"playerSessionCount and hasAvailablePlayerSessions)")
}
