package flexmatch

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// referenceValue: a literal number, string or list of strings, or a property expression.
// A string is an expression when it looks like one (see looksLikeExpr) and a literal
// otherwise; what a rule accepts depends on its type and on what its measurements give.

// refForm is the kind of referenceValue a rule takes.
type refForm int

const (
	refNumber refForm = iota // a number, or an expression giving one number
	refString                // a string, or an expression giving one string
	refList                  // a list of strings (a single string counts as a list of one)
)

// String describes the form for error messages.
func (f refForm) String() string {
	return [...]string{
		"a number or an expression giving one number",
		"a string or an expression giving one string",
		"a list of strings or an expression giving one",
	}[f]
}

// reference reads a referenceValue for rule r, whose type, operation and measurements are
// already read. Expansion steps of referenceValue use it too. The error reads after
// "referenceValue".
func (p *parser) reference(r *Rule, raw json.RawMessage) (*Operand, error) {
	op, t, err := p.operand(raw)
	if err != nil {
		return nil, err
	}
	form := p.referenceForm(r)
	if form == refNumber && op.Str != nil && isJSONNumber(*op.Str) {
		n, err := strconv.ParseFloat(*op.Str, 64)
		if err != nil {
			return nil, fmt.Errorf("is out of range: %s", *op.Str)
		}
		op = &Operand{Num: &n}
	}
	var ok bool
	switch form {
	case refNumber:
		ok = op.Num != nil || (op.Expr != nil && t == exprType{elemNumber, 0})
	case refString:
		ok = op.Str != nil || (op.Expr != nil && t == exprType{elemString, 0})
	case refList:
		ok = op.List != nil || op.Str != nil || (op.Expr != nil && t.elem >= elemString && t.strDepth() == 1)
	}
	switch {
	case !ok && op.Expr != nil:
		return nil, fmt.Errorf("must be %s; %s gives %s", form, shortJSON(raw), describeType(t))
	case !ok:
		return nil, fmt.Errorf("must be %s, got %s", form, shortJSON(raw))
	}
	return op, nil
}

// referenceForm is what rule r's referenceValue must be.
func (p *parser) referenceForm(r *Rule) refForm {
	switch {
	case r.Type == RuleCollection && r.Operation == "contains":
		return refString
	case r.Type == RuleCollection:
		return refList
	case r.Type == RuleComparison && len(r.Measurements) > 0:
		if t, err := p.checker().check(r.Measurements[0]); err == nil && t.elem == elemString {
			return refString
		}
	}
	return refNumber
}

// operand reads a literal or a property expression, with the expression's type.
func (p *parser) operand(raw json.RawMessage) (*Operand, exprType, error) {
	switch jsonKind(raw) {
	case "a number":
		n, err := jsonNumber(raw)
		return &Operand{Num: &n}, exprType{}, err
	case "an array":
		l, err := stringList("list", raw)
		return &Operand{List: l}, exprType{}, err
	case "a string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, exprType{}, err
		}
		if !looksLikeExpr(s) {
			return &Operand{Str: &s}, exprType{}, nil
		}
		e, err := parseExpr(s)
		var t exprType
		if err == nil {
			t, err = p.checker().check(e)
		}
		if err != nil {
			return nil, t, fmt.Errorf("%q: %w", s, err)
		}
		return &Operand{Expr: e}, t, nil
	}
	return nil, exprType{}, fmt.Errorf("must be a number, a string or a list of strings, got %s", shortJSON(raw))
}
