package sessionquery

import "testing"

// sample is the session most matching tests run against.
var sample = &Session{
	Name:                       "Matt's Awesome Game 1",
	ID:                         "arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1",
	Properties:                 map[string]string{"gameMode": "brawl", "map-name": "dust", "empty": "", "level": "10"},
	MaximumSessions:            10,
	PlayerSessionCount:         4,
	CreationTimeMillis:         1700000000000,
	HasAvailablePlayerSessions: true,
}

func TestMatchOperands(t *testing.T) {
	tests := []struct {
		expr string
		want bool
	}{
		// Numbers: each comparator below, at and above the session's value.
		{"maximumSessions = 10", true}, {"maximumSessions = 11", false},
		{"maximumSessions <> 10", false}, {"maximumSessions <> 9", true},
		{"maximumSessions < 10", false}, {"maximumSessions < 11", true},
		{"maximumSessions > 10", false}, {"maximumSessions > 9", true},
		{"maximumSessions <= 10", true}, {"maximumSessions <= 9", false},
		{"maximumSessions >= 10", true}, {"maximumSessions >= 11", false},
		{"playerSessionCount = 4", true}, {"playerSessionCount < 4", false}, {"playerSessionCount > -4", true},
		{"creationTimeMillis = 1700000000000", true}, {"creationTimeMillis > 1699999999999", true},
		{"creationTimeMillis >= 1700000000001", false},
		// Strings: exact, case-sensitive.
		{`gameSessionName = 'Matt\'s Awesome Game 1'`, true},
		{`gameSessionName = "Matt's Awesome Game 1"`, true},
		{`gameSessionName = 'matt\'s awesome game 1'`, false},
		{`gameSessionName = 'Matt\'s Awesome Game'`, false},
		{`gameSessionName <> 'x'`, true},
		{"gameSessionId = 'arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-1'", true},
		{"gameSessionId = 'gsess-1'", false},
		{"gameSessionId <> 'gsess-1'", true},
		// Game properties: compared as strings.
		{"gameSessionProperties.gameMode = 'brawl'", true},
		{`gameSessionProperties.gameMode = "brawl"`, true},
		{"gameSessionProperties.gameMode = 'Brawl'", false},
		{"gameSessionProperties.gameMode <> 'brawl'", false},
		{"gameSessionProperties.map-name = 'dust'", true},
		{"gameSessionProperties.level = '10'", true},
		{"gameSessionProperties.level = '010'", false},
		{"gameSessionProperties.empty = ''", true},
		{"gameSessionProperties.GameMode = 'brawl'", false}, // keys are case-sensitive
		// Booleans.
		{"hasAvailablePlayerSessions = true", true}, {"hasAvailablePlayerSessions = false", false},
		{"hasAvailablePlayerSessions <> true", false}, {"hasAvailablePlayerSessions <> FALSE", true},
		// The reference's example.
		{"maximumSessions>=10 AND hasAvailablePlayerSessions=true", true},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.expr).Match(sample); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestMatchLogic(t *testing.T) {
	const (
		yes = "maximumSessions = 10"
		no  = "maximumSessions = 0"
	)
	tests := []struct {
		expr string
		want bool
	}{
		{yes + " AND " + yes, true}, {yes + " AND " + no, false}, {no + " AND " + yes, false},
		{yes + " OR " + no, true}, {no + " OR " + yes, true}, {no + " OR " + no, false},
		{"NOT " + yes, false}, {"NOT " + no, true}, {"NOT NOT " + yes, true},
		// AND binds tighter than OR: (no AND no) OR yes.
		{no + " AND " + no + " OR " + yes, true},
		{"(" + no + " AND " + no + ") OR " + yes, true},
		{no + " AND (" + no + " OR " + yes + ")", false},
		// NOT binds tighter than AND: (NOT no) AND yes, not NOT (no AND yes).
		{"NOT " + no + " AND " + no, false},
		{"NOT (" + no + " AND " + no + ")", true},
		// NOT binds tighter than OR: (NOT yes) OR yes.
		{"NOT " + yes + " OR " + yes, true},
		{"NOT (" + yes + " OR " + yes + ")", false},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.expr).Match(sample); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestMatchNulls(t *testing.T) {
	bare := &Session{ID: "gsess-2"} // no name, no properties
	tests := []struct {
		expr string
		want bool
	}{
		{"gameSessionProperties.gameMode = 'brawl'", false},
		{"gameSessionProperties.gameMode = ''", false},
		{"gameSessionProperties.gameMode <> 'brawl'", true},
		{"NOT gameSessionProperties.gameMode = 'brawl'", true},
		{"gameSessionName = ''", false},
		{"gameSessionName <> 'x'", true},
		{"gameSessionName <> ''", true},
		{"maximumSessions = 0 AND playerSessionCount = 0 AND hasAvailablePlayerSessions = false", true},
	}
	for _, tt := range tests {
		if got := mustParse(t, tt.expr).Match(bare); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.expr, got, tt.want)
		}
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	f := mustParse(t, "(gameSessionProperties.gameMode = 'brawl' OR gameSessionName <> 'x') AND "+
		"NOT playerSessionCount >= 10 AND hasAvailablePlayerSessions = true AND creationTimeMillis > 0")
	if n := testing.AllocsPerRun(100, func() { f.Match(sample) }); n != 0 {
		t.Errorf("Match allocates %v times per call", n)
	}
}
