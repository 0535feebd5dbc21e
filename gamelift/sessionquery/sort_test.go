package sessionquery

import (
	"slices"
	"strings"
	"testing"
)

// sortIDs sorts sessions stably by expr and returns their IDs in order.
func sortIDs(t *testing.T, expr string, sessions []*Session) string {
	t.Helper()
	s, err := ParseSort(expr)
	if err != nil {
		t.Fatalf("ParseSort(%q): %v", expr, err)
	}
	sorted := slices.Clone(sessions)
	slices.SortStableFunc(sorted, s.Compare)
	ids := make([]string, len(sorted))
	for i, x := range sorted {
		ids[i] = x.ID
	}
	return strings.Join(ids, " ")
}

func TestSortOperands(t *testing.T) {
	sessions := []*Session{
		{ID: "b", Name: "beta", MaximumSessions: 8, PlayerSessionCount: 1, CreationTimeMillis: 300,
			HasAvailablePlayerSessions: true, Properties: map[string]string{"mode": "ctf"}},
		{ID: "a", Name: "alpha", MaximumSessions: 2, PlayerSessionCount: 3, CreationTimeMillis: 100,
			Properties: map[string]string{"mode": "brawl"}},
		{ID: "c", Name: "Gamma", MaximumSessions: 16, PlayerSessionCount: 2, CreationTimeMillis: 200,
			HasAvailablePlayerSessions: true, Properties: map[string]string{"mode": "deathmatch"}},
	}
	tests := []struct{ expr, want string }{
		{"creationTimeMillis ASC", "a c b"},
		{"creationTimeMillis DESC", "b c a"},
		{"maximumSessions ASC", "a b c"},
		{"maximumSessions desc", "c b a"},
		{"playerSessionCount ASC", "b c a"},
		{"playerSessionCount DESC", "a c b"},
		{"gameSessionName ASC", "c a b"}, // bytes: upper case first
		{"gameSessionName DESC", "b a c"},
		{"gameSessionId ASC", "a b c"},
		{"gameSessionId DESC", "c b a"},
		{"gameSessionProperties.mode ASC", "a b c"},
		{"gameSessionProperties.mode DESC", "c b a"},
		{"hasAvailablePlayerSessions ASC", "a b c"}, // false first; b and c tie and keep their order
		{"hasAvailablePlayerSessions DESC", "b c a"},
		{"  creationTimeMillis\tAsc ", "a c b"},
	}
	for _, tt := range tests {
		if got := sortIDs(t, tt.expr, sessions); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.expr, got, tt.want)
		}
	}
}

func TestSortNullsLast(t *testing.T) {
	sessions := []*Session{
		{ID: "none1"},
		{ID: "x", Name: "x", Properties: map[string]string{"mode": "x"}},
		{ID: "none2", Properties: map[string]string{"other": "a"}},
		{ID: "empty", Name: "", Properties: map[string]string{"mode": ""}},
		{ID: "m", Name: "m", Properties: map[string]string{"mode": "m"}},
	}
	tests := []struct{ expr, want string }{
		// An empty property value is a value, not a null; null ties keep their order.
		{"gameSessionProperties.mode ASC", "empty m x none1 none2"},
		{"gameSessionProperties.mode DESC", "x m empty none1 none2"},
		// A session without a name has a null name.
		{"gameSessionName ASC", "m x none1 none2 empty"},
		{"gameSessionName DESC", "x m none1 none2 empty"},
	}
	for _, tt := range tests {
		if got := sortIDs(t, tt.expr, sessions); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.expr, got, tt.want)
		}
	}
}

func TestSortCompareContract(t *testing.T) {
	s, err := ParseSort("gameSessionProperties.mode DESC")
	if err != nil {
		t.Fatal(err)
	}
	a := &Session{Properties: map[string]string{"mode": "a"}}
	b := &Session{Properties: map[string]string{"mode": "b"}}
	null := &Session{}
	tests := []struct {
		x, y *Session
		want int
	}{
		{a, b, 1}, {b, a, -1}, {a, a, 0},
		{a, null, -1}, {null, a, 1}, {null, null, 0},
	}
	for i, tt := range tests {
		if got := s.Compare(tt.x, tt.y); got != tt.want {
			t.Errorf("case %d: Compare = %d, want %d", i, got, tt.want)
		}
		if got := s.Less(tt.x, tt.y); got != (tt.want < 0) {
			t.Errorf("case %d: Less = %v, want %v", i, got, tt.want < 0)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Compare(a, b) }); n != 0 {
		t.Errorf("Compare allocates %v times per call", n)
	}
}

func TestSortString(t *testing.T) {
	for expr, want := range map[string]string{
		"creationTimeMillis asc":         "creationTimeMillis ASC",
		"gameSessionProperties.a-b Desc": "gameSessionProperties.a-b DESC",
	} {
		s, err := ParseSort(expr)
		if err != nil {
			t.Fatal(err)
		}
		if s.String() != want {
			t.Errorf("%q: String = %q, want %q", expr, s.String(), want)
		}
		if again, err := ParseSort(s.String()); err != nil || *again != *s {
			t.Errorf("%q: String does not parse back: %v, %v", expr, again, err)
		}
	}
}
