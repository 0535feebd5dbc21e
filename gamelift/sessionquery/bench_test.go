package sessionquery

import (
	"slices"
	"strconv"
	"testing"
)

// benchSessions builds n varied sessions deterministically.
func benchSessions(n int) []*Session {
	modes := []string{"brawl", "ctf", "deathmatch", "race"}
	out := make([]*Session, n)
	for i := range out {
		maxPlayers := 2 + i%31
		players := (i * 7) % (maxPlayers + 1)
		props := map[string]string{"gameMode": modes[i%len(modes)], "map": "map-" + strconv.Itoa(i%13)}
		if i%5 == 0 {
			props["difficulty"] = "novice"
		}
		out[i] = &Session{
			Name:                       "game-" + strconv.Itoa(i),
			ID:                         "arn:aws:gamelift:us-west-2::gamesession/fleet-1/gsess-" + strconv.Itoa(i),
			Properties:                 props,
			MaximumSessions:            maxPlayers,
			PlayerSessionCount:         players,
			CreationTimeMillis:         1700000000000 + int64(i*997%10000)*1000,
			HasAvailablePlayerSessions: players < maxPlayers,
		}
	}
	return out
}

// benchFilters are typical and heavy filter expressions.
var benchFilters = map[string]string{
	"simple": "hasAvailablePlayerSessions = true",
	"typical": "gameSessionProperties.gameMode = 'brawl' AND maximumSessions >= 10 AND " +
		"hasAvailablePlayerSessions = true",
	"heavy": "(gameSessionProperties.gameMode = 'brawl' OR gameSessionProperties.gameMode = 'ctf') AND " +
		"NOT gameSessionProperties.difficulty = 'novice' AND playerSessionCount < 20 AND " +
		"creationTimeMillis > 1700000500000 AND gameSessionName <> 'game-7' AND hasAvailablePlayerSessions = true",
}

// BenchmarkMatch10000 measures one scan of 10,000 sessions, the SearchGameSessions worst case.
func BenchmarkMatch10000(b *testing.B) {
	sessions := benchSessions(10000)
	for _, name := range []string{"simple", "typical", "heavy"} {
		f, err := ParseFilter(benchFilters[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				n := 0
				for _, s := range sessions {
					if f.Match(s) {
						n++
					}
				}
				if n == 0 || n == len(sessions) {
					b.Fatalf("filter matched %d of %d sessions; the benchmark should be selective", n, len(sessions))
				}
			}
		})
	}
}

// BenchmarkSort10000 measures sorting 10,000 sessions by a game property, with nulls.
func BenchmarkSort10000(b *testing.B) {
	sessions := benchSessions(10000)
	s, err := ParseSort("gameSessionProperties.difficulty DESC")
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]*Session, len(sessions))
	b.ReportAllocs()
	for b.Loop() {
		copy(buf, sessions)
		slices.SortStableFunc(buf, s.Compare)
	}
}

// BenchmarkParseFilter measures compiling the heavy filter, done once per request.
func BenchmarkParseFilter(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseFilter(benchFilters["heavy"]); err != nil {
			b.Fatal(err)
		}
	}
}
