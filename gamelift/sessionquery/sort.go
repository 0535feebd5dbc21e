package sessionquery

import (
	"cmp"
	"strings"
)

// Sort is a compiled SortExpression: one operand and a direction. Sessions whose value for the
// operand is null sort last in both directions. A nil *Sort considers all sessions equal. A
// Sort is immutable and safe for concurrent use.
type Sort struct {
	op   operand
	key  string // game property key, for opProperty
	desc bool
}

// ParseSort parses a SortExpression: "<operand> ASC" or "<operand> DESC". A malformed
// expression gives an *Error.
func ParseSort(expr string) (*Sort, error) {
	if err := checkLength(SortField, expr); err != nil {
		return nil, err
	}
	p, err := newParser(SortField, expr)
	if err != nil {
		return nil, err
	}
	if p.peek().kind != tokWord {
		return nil, p.expected("an operand")
	}
	op, key, err := p.resolveOperand(p.next())
	if err != nil {
		return nil, err
	}
	t := p.peek()
	if !isKeyword(t, "ASC") && !isKeyword(t, "DESC") {
		return nil, p.expected("ASC or DESC")
	}
	p.next()
	if p.peek().kind != tokEOF {
		return nil, p.expected("the end of the expression")
	}
	return &Sort{op: op, key: key, desc: isKeyword(t, "DESC")}, nil
}

// Compare orders a and b: negative when a sorts first, positive when b does, zero when they
// tie. Ties are left to the caller, who may break them (by ID, say) for a stable page order.
// Compare does not allocate.
func (s *Sort) Compare(a, b *Session) int {
	if s == nil {
		return 0
	}
	c, aNull, bNull := s.compareAsc(a, b)
	switch {
	case aNull || bNull:
		return nullsLast(aNull, bNull)
	case s.desc:
		return -c
	}
	return c
}

// Less reports whether a sorts before b.
func (s *Sort) Less(a, b *Session) bool { return s.Compare(a, b) < 0 }

// String returns the sort in canonical form, such as "creationTimeMillis ASC".
func (s *Sort) String() string {
	if s == nil {
		return ""
	}
	var b strings.Builder
	writeOperand(&b, s.op, s.key)
	if s.desc {
		b.WriteString(" DESC")
	} else {
		b.WriteString(" ASC")
	}
	return b.String()
}

// compareAsc compares a and b's values in ascending order and reports which are null.
func (s *Sort) compareAsc(a, b *Session) (c int, aNull, bNull bool) {
	switch s.op.kind() {
	case kindString:
		av, aok := s.op.str(a, s.key)
		bv, bok := s.op.str(b, s.key)
		return strings.Compare(av, bv), !aok, !bok
	case kindBool:
		return compareBool(a.HasAvailablePlayerSessions, b.HasAvailablePlayerSessions), false, false
	}
	return cmp.Compare(s.op.number(a), s.op.number(b)), false, false
}

// nullsLast orders two values of which at least one is null: nulls go last, and two nulls tie.
func nullsLast(aNull, bNull bool) int {
	switch {
	case aNull && bNull:
		return 0
	case aNull:
		return 1
	}
	return -1
}

// compareBool orders false before true.
func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case b:
		return -1
	}
	return 1
}
