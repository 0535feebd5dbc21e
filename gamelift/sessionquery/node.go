package sessionquery

import (
	"strconv"
	"strings"
)

// node is a compiled filter expression. Nodes are pointer-free values apart from their
// children, so that match never allocates and reflect.DeepEqual compares two trees.
type node interface {
	// match reports whether s satisfies the expression.
	match(s *Session) bool
	// write appends the expression's canonical text to b.
	write(b *strings.Builder)
}

// Precedence levels used to decide where printing needs parentheses.
const (
	precOr   = 1
	precAnd  = 2
	precAtom = 3 // conditions and NOT
)

// precedence returns the binding strength of n's top operator.
func precedence(n node) int {
	switch n.(type) {
	case *orNode:
		return precOr
	case *andNode:
		return precAnd
	}
	return precAtom
}

// writeChild writes n, in parentheses when its precedence is below min.
func writeChild(b *strings.Builder, n node, min int) {
	if precedence(n) >= min {
		n.write(b)
		return
	}
	b.WriteByte('(')
	n.write(b)
	b.WriteByte(')')
}

// orNode is "l OR r".
type orNode struct{ l, r node }

func (n *orNode) match(s *Session) bool { return n.l.match(s) || n.r.match(s) }

func (n *orNode) write(b *strings.Builder) {
	writeChild(b, n.l, precOr)
	b.WriteString(" OR ")
	writeChild(b, n.r, precOr+1) // a right child of the same operator keeps its parentheses
}

// andNode is "l AND r".
type andNode struct{ l, r node }

func (n *andNode) match(s *Session) bool { return n.l.match(s) && n.r.match(s) }

func (n *andNode) write(b *strings.Builder) {
	writeChild(b, n.l, precAnd)
	b.WriteString(" AND ")
	writeChild(b, n.r, precAnd+1)
}

// notNode is "NOT x".
type notNode struct{ x node }

func (n *notNode) match(s *Session) bool { return !n.x.match(s) }

func (n *notNode) write(b *strings.Builder) {
	b.WriteString("NOT ")
	writeChild(b, n.x, precAtom)
}

// stringCond compares gameSessionName, gameSessionId or a game property with = or <>. A null
// value never equals anything.
type stringCond struct {
	op    operand
	key   string // game property key, for opProperty
	ne    bool   // <> rather than =
	value string
}

func (c *stringCond) match(s *Session) bool {
	v, ok := c.op.str(s, c.key)
	return (ok && v == c.value) != c.ne
}

func (c *stringCond) write(b *strings.Builder) {
	writeOperand(b, c.op, c.key)
	if c.ne {
		b.WriteString(" <> ")
	} else {
		b.WriteString(" = ")
	}
	writeQuoted(b, c.value)
}

// numberCond compares maximumSessions, creationTimeMillis or playerSessionCount.
type numberCond struct {
	op    operand
	cmp   comparator
	value int64
}

func (c *numberCond) match(s *Session) bool {
	v := c.op.number(s)
	switch c.cmp {
	case cmpEQ:
		return v == c.value
	case cmpNE:
		return v != c.value
	case cmpLT:
		return v < c.value
	case cmpGT:
		return v > c.value
	case cmpLE:
		return v <= c.value
	}
	return v >= c.value
}

func (c *numberCond) write(b *strings.Builder) {
	b.WriteString(c.op.name())
	b.WriteString(" " + c.cmp.String() + " ")
	b.WriteString(strconv.FormatInt(c.value, 10))
}

// boolCond compares hasAvailablePlayerSessions with = or <>.
type boolCond struct {
	ne    bool
	value bool
}

func (c *boolCond) match(s *Session) bool { return (s.HasAvailablePlayerSessions == c.value) != c.ne }

func (c *boolCond) write(b *strings.Builder) {
	b.WriteString(opHasAvailable.name())
	if c.ne {
		b.WriteString(" <> ")
	} else {
		b.WriteString(" = ")
	}
	b.WriteString(strconv.FormatBool(c.value))
}

// writeOperand writes an operand name, with its key for a game property.
func writeOperand(b *strings.Builder, op operand, key string) {
	if op == opProperty {
		b.WriteString(propertyPrefix + key)
		return
	}
	b.WriteString(op.name())
}

// writeQuoted writes s as a single-quoted string, escaping quotes and backslashes.
func writeQuoted(b *strings.Builder, s string) {
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	b.WriteByte('\'')
}
