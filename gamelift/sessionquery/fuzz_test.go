package sessionquery

import (
	"errors"
	"reflect"
	"testing"
	"unicode/utf8"
)

// fuzzSessions are matched against every expression the fuzzer finds acceptable.
var fuzzSessions = []*Session{
	sample,
	{},
	{Name: "x", ID: "y", Properties: map[string]string{"": "", "a": "b", "k": "v"}, MaximumSessions: -1,
		PlayerSessionCount: 1 << 30, CreationTimeMillis: -1 << 63},
}

// filterSeeds are well-formed and malformed filters to start the fuzzer from.
var filterSeeds = []string{
	"maximumSessions>=10 AND hasAvailablePlayerSessions=true",
	`gameSessionName = 'Matt\'s Awesome Game 1'`,
	`gameSessionProperties.gameMode = "brawl" OR NOT (playerSessionCount < 2 AND creationTimeMillis >= -5)`,
	"NOT NOT (gameSessionId <> 'a' or gameSessionProperties.k-1 = '')",
	"((maximumSessions = 1)", "maximumSessions = 1)", "gameSessionName = 'O''Brien'",
	"playerSessionCount", "hasAvailablePlayerSessions >= yes", "creationTimeMillis = 99999999999999999999",
	`gameSessionName = 'abc\`, "maximumSessions != 1", "",
}

func FuzzParseFilter(f *testing.F) {
	for _, s := range filterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		filter, err := ParseFilter(expr)
		if err != nil {
			checkFuzzError(t, FilterField, expr, err)
			return
		}
		printed := filter.String()
		again, err := parseFilter(printed)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", expr, printed, err)
		}
		if !reflect.DeepEqual(filter.root, again.root) {
			t.Fatalf("%q printed as %q, which parses to another tree: %s", expr, printed, again)
		}
		for _, s := range fuzzSessions {
			if filter.Match(s) != again.Match(s) {
				t.Fatalf("%q and its printed form %q disagree on %+v", expr, printed, s)
			}
		}
	})
}

func FuzzParseSort(f *testing.F) {
	for _, s := range []string{"creationTimeMillis ASC", "gameSessionProperties.k DESC", "x", "", "ASC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		s, err := ParseSort(expr)
		if err != nil {
			checkFuzzError(t, SortField, expr, err)
			return
		}
		again, err := ParseSort(s.String())
		if err != nil || *again != *s {
			t.Fatalf("%q printed as %q, which parses to %v, %v", expr, s.String(), again, err)
		}
		for _, a := range fuzzSessions {
			for _, b := range fuzzSessions {
				if s.Compare(a, b) != -s.Compare(b, a) {
					t.Fatalf("%q: Compare is not antisymmetric", expr)
				}
			}
		}
	})
}

// checkFuzzError checks that a parse error is an *Error for field with a position inside the
// expression (or just past its end) and a message.
func checkFuzzError(t *testing.T, field, expr string, err error) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: error %v is a %T, not an *Error", expr, err, err)
	}
	if e.Field != field || e.Msg == "" || e.Pos < 0 || e.Pos > utf8.RuneCountInString(expr)+1 {
		t.Fatalf("%q: malformed error %+v", expr, e)
	}
}
