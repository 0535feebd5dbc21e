package sessionquery

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a token.
type tokenKind uint8

const (
	tokEOF        tokenKind = iota // end of the expression
	tokWord                        // operand, keyword, boolean or other bare text
	tokNumber                      // bare text starting with a digit or '-'
	tokString                      // quoted string; token.str holds the decoded value
	tokComparator                  // one of = <> < > <= >=
	tokLParen                      // (
	tokRParen                      // )
)

// token is one lexical element of an expression.
type token struct {
	kind       tokenKind
	text       string // source text
	str        string // decoded value of a tokString
	start, end int    // byte offsets in the source
}

// comparatorChars are the characters a comparator is made of. '!' is among them so that "!="
// is reported as an unknown comparator rather than as part of a word.
const comparatorChars = "=<>!"

// isBare reports whether r can be part of a bare word, number or property key.
func isBare(r rune) bool {
	return !unicode.IsSpace(r) && r != '(' && r != ')' && r != '\'' && r != '"' &&
		!strings.ContainsRune(comparatorChars, r)
}

// lex splits src into tokens ending with a tokEOF.
func lex(field, src string) ([]token, *Error) {
	var toks []token
	for i := 0; ; {
		r, n := utf8.DecodeRuneInString(src[i:])
		switch {
		case i == len(src):
			return append(toks, token{kind: tokEOF, start: i, end: i}), nil
		case unicode.IsSpace(r):
			i += n
			continue
		}
		t, err := lexOne(field, src, i, r)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i = t.end
	}
}

// lexOne reads the token starting with r at byte offset i.
func lexOne(field, src string, i int, r rune) (token, *Error) {
	switch {
	case r == '(':
		return token{kind: tokLParen, text: "(", start: i, end: i + 1}, nil
	case r == ')':
		return token{kind: tokRParen, text: ")", start: i, end: i + 1}, nil
	case r == '\'' || r == '"':
		return lexString(field, src, i)
	case strings.ContainsRune(comparatorChars, r):
		return lexComparator(field, src, i)
	}
	end := i
	for end < len(src) {
		r, n := utf8.DecodeRuneInString(src[end:])
		if !isBare(r) {
			break
		}
		end += n
	}
	kind := tokWord
	if r == '-' || (r >= '0' && r <= '9') {
		kind = tokNumber
	}
	return token{kind: kind, text: src[i:end], start: i, end: end}, nil
}

// lexString reads a quoted string starting at byte offset i. A backslash makes the next
// character literal.
func lexString(field, src string, i int) (token, *Error) {
	quote := src[i]
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch c := src[j]; {
		case c == quote:
			return token{kind: tokString, text: src[i : j+1], str: b.String(), start: i, end: j + 1}, nil
		case c == '\\' && j+1 < len(src):
			j++
			b.WriteByte(src[j])
		case c != '\\':
			b.WriteByte(c)
		}
	}
	msg := "string is not closed: no " + string(quote) + " closes the quote"
	if strings.IndexByte(src[i:], '\\') >= 0 {
		msg = "string is not closed (a backslash escapes the character after it): no " +
			string(quote) + " closes the quote"
	}
	return token{}, &Error{Field: field, Pos: position(src, i), Msg: msg}
}

// validComparators are the documented comparators.
var validComparators = map[string]comparator{
	"=": cmpEQ, "<>": cmpNE, "<": cmpLT, ">": cmpGT, "<=": cmpLE, ">=": cmpGE,
}

// lexComparator reads a run of comparator characters and checks it is a comparator.
func lexComparator(field, src string, i int) (token, *Error) {
	end := i
	for end < len(src) && strings.IndexByte(comparatorChars, src[end]) >= 0 {
		end++
	}
	text := src[i:end]
	if _, ok := validComparators[text]; !ok {
		return token{}, &Error{Field: field, Pos: position(src, i),
			Msg: "unknown comparator " + quoteText(text) + " (the comparators are = <> < > <= >=)"}
	}
	return token{kind: tokComparator, text: text, start: i, end: end}, nil
}
