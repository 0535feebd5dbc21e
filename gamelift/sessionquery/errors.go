package sessionquery

import (
	"strconv"
	"unicode/utf8"
)

// Field names an Error reports, matching the SearchGameSessions request members.
const (
	// FilterField is the Field of errors from ParseFilter.
	FilterField = "FilterExpression"
	// SortField is the Field of errors from ParseSort.
	SortField = "SortExpression"
)

// MaxExpressionLength is the longest filter or sort expression accepted, in characters.
const MaxExpressionLength = 1024

// Error is a malformed filter or sort expression. Its message says what is wrong and where,
// and is meant to be returned to the client as an InvalidRequestException message.
type Error struct {
	// Field is FilterField or SortField.
	Field string
	// Pos is the 1-based character (not byte) position of the problem, or 0 when the problem
	// concerns the whole expression (its length or encoding).
	Pos int
	// Msg describes the problem, without the field or position.
	Msg string
}

// Error returns "<Field>: <Msg> at position <Pos>", without the position when Pos is 0.
func (e *Error) Error() string {
	if e.Pos == 0 {
		return e.Field + ": " + e.Msg
	}
	return e.Field + ": " + e.Msg + " at position " + strconv.Itoa(e.Pos)
}

// checkLength reports an expression that is empty, too long or not UTF-8.
func checkLength(field, src string) *Error {
	if !utf8.ValidString(src) {
		return &Error{Field: field, Msg: "is not valid UTF-8"}
	}
	n := utf8.RuneCountInString(src)
	if n == 0 {
		return &Error{Field: field, Msg: "is empty"}
	}
	if n > MaxExpressionLength {
		return &Error{Field: field, Msg: "is " + strconv.Itoa(n) + " characters long; the maximum is " +
			strconv.Itoa(MaxExpressionLength)}
	}
	return nil
}

// position converts a byte offset in src into a 1-based character position.
func position(src string, off int) int {
	return utf8.RuneCountInString(src[:off]) + 1
}

// quoteText renders source text for an error message, shortened if long. Text that is already
// a quoted string is shown as written.
func quoteText(s string) string {
	const max = 32
	open, end := "'", "'"
	if s != "" && (s[0] == '\'' || s[0] == '"') {
		open, end = "", s[:1]
		s = s[:len(s)-1]
	}
	if utf8.RuneCountInString(s) > max {
		s = string([]rune(s)[:max]) + "..."
	}
	return open + s + end
}
