package flexmatch

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// fiveVFive is a 5v5 rule set with skill and latency rules and expansions, the shape of the
// matchsim benchmark.
const fiveVFive = `{
  "name": "five-v-five",
  "ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "skill", "type": "number", "default": 10}],
  "teams": [{"name": "red", "minPlayers": 5, "maxPlayers": 5}, {"name": "blue", "minPlayers": 5, "maxPlayers": 5}],
  "rules": [
    {"name": "FairTeamSkill", "type": "distance", "measurements": ["avg(teams[*].players.attributes[skill])"],
     "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))", "maxDistance": 10},
    {"name": "CloseSkill", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 100},
    {"name": "FastConnection", "type": "latency", "maxLatency": 150}
  ],
  "expansions": [
    {"target": "rules[FastConnection].maxLatency", "steps": [{"waitTimeSeconds": 10, "value": 250}]},
    {"target": "rules[CloseSkill].maxDistance", "steps": [{"waitTimeSeconds": 5, "value": 200}, {"waitTimeSeconds": 15, "value": 400}]}
  ]
}`

func mustParse(t testing.TB, body string) *RuleSet {
	t.Helper()
	rs, err := Parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// player makes a one-player ticket.
func player(id string, skill float64, lat map[string]int, start time.Time) *Ticket {
	return &Ticket{ID: id, Start: start, Players: []Player{{ID: id,
		Attributes: map[string]Value{"skill": {Type: TypeNumber, N: skill}}, Latency: lat}}}
}

func TestMatcherFormsCheckedMatches(t *testing.T) {
	rs := mustParse(t, fiveVFive)
	m := NewMatcher(rs, Options{})
	r := rand.New(rand.NewPCG(1, 2))
	start := time.Unix(1_700_000_000, 0)
	now := start
	matched := 0
	for i := range 1000 {
		lat := map[string]int{"us-east-1": 20 + r.IntN(200), "eu-west-1": 20 + r.IntN(200)}
		if err := m.Add(player(fmt.Sprint("p", i), 1000+r.NormFloat64()*300, lat, now)); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Millisecond)
		for _, mt := range m.Step(now) {
			matched++
			if probs := checkMatch([]byte(fiveVFive), mt); len(probs) > 0 {
				t.Fatalf("match breaks rules: %v", probs)
			}
		}
	}
	if matched < 50 {
		t.Fatalf("only %d matches from 1000 tickets", matched)
	}
	t.Logf("%d matches, %d left", matched, m.Len())
}
