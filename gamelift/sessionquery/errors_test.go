package sessionquery

import (
	"errors"
	"strings"
	"testing"
)

func TestFilterErrors(t *testing.T) {
	tests := []struct {
		expr string
		pos  int    // 1-based character position; 0 for the whole expression
		want string // a phrase the message must contain
	}{
		// Length and encoding.
		{"", 0, "is empty"},
		{" \t\n", 0, "is blank"},
		{"gameSessionName = '\xff'", 0, "not valid UTF-8"},
		// Operands.
		{"foo = 1", 1, "unknown operand 'foo' (the operands are gameSessionName, gameSessionId"},
		{"gamesessionname = 'x'", 1, "operand names are case-sensitive; did you mean gameSessionName?"},
		{"MaximumSessions = 1", 1, "did you mean maximumSessions?"},
		{"GameSessionProperties.x = 'x'", 1, "did you mean gameSessionProperties?"},
		{"gameSessionProperties = 'x'", 1, "'gameSessionProperties' needs a game property key"},
		{"gameSessionProperties. = 'x'", 1, "'gameSessionProperties.' needs a game property key"},
		{"5 = maximumSessions", 1, "expected a condition but found '5'"},
		{"'x' = gameSessionName", 1, "expected a condition but found 'x'"},
		{"= 1", 1, "expected a condition but found '='"},
		// Comparators.
		{"playerSessionCount", 19, "expected a comparator (= <> < > <= >=) after 'playerSessionCount'"},
		{"playerSessionCount 5", 20, "expected a comparator (= <> < > <= >=) after 'playerSessionCount' but found '5'"},
		{"maximumSessions != 1", 17, "unknown comparator '!='"},
		{"maximumSessions == 1", 17, "unknown comparator '=='"},
		{"maximumSessions => 1", 17, "unknown comparator '=>'"},
		{"maximumSessions >< 1", 17, "unknown comparator '><'"},
		{"gameSessionName < 'a'", 17, "comparator '<' cannot be used with gameSessionName"},
		{"gameSessionId >= 'a'", 15, "comparator '>=' cannot be used with gameSessionId"},
		{"gameSessionProperties.k <= 'a'", 25, "comparator '<=' cannot be used with gameSessionProperties"},
		{"hasAvailablePlayerSessions > false", 28, "string and boolean operands allow only = and <>"},
		// Values.
		{"playerSessionCount =", 21, "expected a value after '='"},
		{"playerSessionCount = 'x'", 22, "playerSessionCount takes an integer value, not 'x'"},
		{"maximumSessions = true", 19, "maximumSessions takes an integer value, not 'true'"},
		{"maximumSessions = +5", 19, "maximumSessions takes an integer value, not '+5'"},
		{"maximumSessions = = 1", 19, "maximumSessions takes an integer value, not '='"},
		{"creationTimeMillis = 1.5", 22, "invalid integer '1.5'"},
		{"creationTimeMillis = 10AND", 22, "invalid integer '10AND'"},
		{"creationTimeMillis = -", 22, "invalid integer '-'"},
		{"creationTimeMillis = 9223372036854775808", 22, "does not fit in 64 bits"},
		{"gameSessionName = 5", 19, "gameSessionName takes a quoted string value, not '5'"},
		{"gameSessionName = abc", 19, "gameSessionName takes a quoted string value, not 'abc'"},
		{"gameSessionProperties.mode = brawl", 30, "gameSessionProperties takes a quoted string value"},
		{"hasAvailablePlayerSessions = yes", 30, "hasAvailablePlayerSessions takes true or false, not 'yes'"},
		{"hasAvailablePlayerSessions = 'true'", 30, "takes true or false, not 'true'"},
		{"hasAvailablePlayerSessions = 1", 30, "takes true or false, not '1'"},
		// Strings.
		{"gameSessionName = 'abc", 19, "string is not closed: no ' closes the quote"},
		{`gameSessionName = "abc'`, 19, `string is not closed: no " closes the quote`},
		{`gameSessionName = 'abc\'`, 19, "a backslash escapes the character after it"},
		{`gameSessionName = 'abc\`, 19, "string is not closed"},
		{"gameSessionName = 'O''Brien'", 22, "a doubled quote does not escape a quote"},
		{"é = 'x' OR gameSessionName = 'ü", 30, "string is not closed"}, // positions count characters
		// Logic and parentheses.
		{"(maximumSessions = 1", 21, "the '(' at position 1 is not closed: expected ')' after '1'"},
		{"((maximumSessions = 1)", 23, "the '(' at position 1 is not closed"},
		{"maximumSessions = 1)", 20, "unexpected ')' without a matching '('"},
		{"(maximumSessions = 1))", 22, "unexpected ')' without a matching '('"},
		{"()", 2, "expected a condition after '(' but found ')'"},
		{"maximumSessions = 1 AND ()", 26, "expected a condition after '(' but found ')'"},
		{"maximumSessions = 1 AND", 24, "expected a condition after 'AND'"},
		{"maximumSessions = 1 or", 23, "expected a condition after 'or'"},
		{"AND maximumSessions = 1", 1, "expected a condition but found 'AND'"},
		{"OR maximumSessions = 1", 1, "expected a condition but found 'OR'"},
		{"NOT", 4, "expected a condition after 'NOT'"},
		{"NOT NOT", 8, "expected a condition after 'NOT'"},
		{"maximumSessions = 1 AND OR maximumSessions = 2", 25, "expected a condition after 'AND' but found 'OR'"},
		{"maximumSessions = 1 NOT maximumSessions = 2", 21, "expected AND, OR or the end of the expression after '1' but found 'NOT'"},
		{"maximumSessions = 1 maximumSessions = 2", 21, "but found 'maximumSessions'"},
		{"maximumSessions = 1 XOR maximumSessions = 2", 21, "but found 'XOR'"},
		{"maximumSessions = 1 && maximumSessions = 2", 21, "but found '&&'"},
		{"gameSessionName = '" + strings.Repeat("x", 40) + "' x", 62, "after '" + strings.Repeat("x", 31) + "...'"},
	}
	for _, tt := range tests {
		f, err := ParseFilter(tt.expr)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("ParseFilter(%q) = %v, %v; want an *Error", tt.expr, f, err)
			continue
		}
		if e.Field != FilterField || e.Pos != tt.pos || !strings.Contains(e.Msg, tt.want) {
			t.Errorf("ParseFilter(%q):\n got %s (pos %d)\nwant %q at position %d", tt.expr, e, e.Pos, tt.want, tt.pos)
		}
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{parseErr(ParseFilter("playerSessionCount")),
			"FilterExpression: expected a comparator (= <> < > <= >=) after 'playerSessionCount' at position 19"},
		{parseErr(ParseFilter("")), "FilterExpression: is empty"},
		{parseErr(ParseSort("creationTimeMillis UP")),
			"SortExpression: expected ASC or DESC after 'creationTimeMillis' but found 'UP' at position 20"},
	}
	for _, tt := range tests {
		if tt.err == nil || tt.err.Error() != tt.want {
			t.Errorf("got %v\nwant %s", tt.err, tt.want)
		}
	}
}

// parseErr drops a parse result, keeping its error.
func parseErr[T any](_ T, err error) error { return err }

func TestSortErrors(t *testing.T) {
	tests := []struct {
		expr string
		pos  int
		want string
	}{
		{"", 0, "is empty"},
		{"  ", 0, "is blank"},
		{strings.Repeat(" ", 1025), 0, "1025 characters"},
		{"creationTimeMillis", 19, "expected ASC or DESC after 'creationTimeMillis'"},
		{"creationTimeMillis UP", 20, "expected ASC or DESC after 'creationTimeMillis' but found 'UP'"},
		{"creationTimeMillis = 1", 20, "expected ASC or DESC after 'creationTimeMillis' but found '='"},
		{"creationTimeMillis ASC DESC", 24, "expected the end of the expression after 'ASC' but found 'DESC'"},
		{"creationTimeMillis ASC, gameSessionName DESC", 20, "but found 'ASC,'"},
		{"ASC", 1, "unknown operand 'ASC'"},
		{"creationtimemillis ASC", 1, "did you mean creationTimeMillis?"},
		{"gameSessionProperties DESC", 1, "needs a game property key"},
		{"(creationTimeMillis ASC)", 1, "expected an operand but found '('"},
		{"'x' ASC", 1, "expected an operand but found 'x'"},
	}
	for _, tt := range tests {
		s, err := ParseSort(tt.expr)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("ParseSort(%q) = %v, %v; want an *Error", tt.expr, s, err)
			continue
		}
		if e.Field != SortField || e.Pos != tt.pos || !strings.Contains(e.Msg, tt.want) {
			t.Errorf("ParseSort(%q):\n got %s (pos %d)\nwant %q at position %d", tt.expr, e, e.Pos, tt.want, tt.pos)
		}
	}
}
