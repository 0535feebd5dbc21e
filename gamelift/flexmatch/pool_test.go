package flexmatch

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// population makes n one-player tickets (every fifth a party of two when parties is set)
// whose attributes follow the rule set's declarations: numbers around their default, strings
// among a few values, lists and maps drawn from small vocabularies; latency in two Regions.
func population(rs *RuleSet, r *rand.Rand, n int, parties bool, start time.Time, gap time.Duration) []*Ticket {
	out := make([]*Ticket, 0, n)
	for i := range n {
		t := &Ticket{ID: fmt.Sprint("t", i), Start: start.Add(time.Duration(i) * gap)}
		size := 1
		if parties && i%5 == 0 {
			size = 2
		}
		for k := range size {
			p := Player{ID: fmt.Sprintf("p%d-%d", i, k), Attributes: map[string]Value{},
				Latency: map[string]int{"us-east-1": 20 + r.IntN(120), "eu-west-1": 20 + r.IntN(120)}}
			for _, a := range rs.Attributes {
				p.Attributes[a.Name] = randomValue(a, r, n)
			}
			t.Players = append(t.Players, p)
		}
		out = append(out, t)
	}
	return out
}

// randomValue draws a value for a declared attribute.
func randomValue(a Attribute, r *rand.Rand, n int) Value {
	d := a.Default
	switch a.Type {
	case TypeNumber:
		base := 1000.0
		if d != nil {
			base = d.N
		}
		if base == 0 || base == 1 {
			return Value{Type: TypeNumber, N: float64(min(r.IntN(5), 1))}
		}
		return Value{Type: TypeNumber, N: base + r.NormFloat64()*base*0.05}
	case TypeString:
		vocab := []string{"casual", "ranked"}
		if d != nil && d.S != "casual" {
			vocab = []string{d.S, d.S, "other"}
		}
		return Value{Type: TypeString, S: vocab[r.IntN(len(vocab))]}
	case TypeStringList:
		return Value{Type: TypeStringList, SL: randomList(d, r, n)}
	}
	return Value{Type: TypeStringNumberMap, SDM: map[string]float64{"harbor": float64(r.IntN(100)), "canyon": float64(r.IntN(100))}}
}

// randomList draws a string list: a sample of the default's words and a few others, or
// (for an empty default, like a block list) now and then a player ID.
func randomList(d *Value, r *rand.Rand, n int) []string {
	if d == nil || len(d.SL) == 0 {
		if r.IntN(4) == 0 {
			return []string{fmt.Sprintf("p%d-0", r.IntN(n))}
		}
		return []string{}
	}
	var out []string
	for _, w := range append(slices.Clone(d.SL), "medic", "scout", "control") {
		if r.IntN(2) == 0 {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		out = append(out, d.SL[0])
	}
	return out
}

// runPool feeds tickets to a matcher as they arrive, steps it at each arrival and then
// every second for two minutes (so expansions apply), and returns the matches.
func runPool(t *testing.T, m *Matcher, tickets []*Ticket) []*Match {
	t.Helper()
	var out []*Match
	now := tickets[0].Start
	for _, tk := range tickets {
		now = tk.Start
		if err := m.Add(tk); err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Step(now)...)
	}
	for range 120 {
		now = now.Add(time.Second)
		out = append(out, m.Step(now)...)
	}
	return out
}

// TestExampleRuleSetsMatchesPassTheChecker runs a populated pool through the matcher for
// every example rule set and has the independent checker confirm each match.
func TestExampleRuleSetsMatchesPassTheChecker(t *testing.T) {
	files, _ := filepath.Glob("testdata/rulesets/*.json")
	if len(files) == 0 {
		t.Fatal("no example rule sets")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rs := mustParse(t, string(body))
			r := rand.New(rand.NewPCG(7, uint64(len(body))))
			n := 400
			if rs.Large() {
				n = 1500
			}
			tickets := population(rs, r, n, !rs.Large(), time.Unix(1_700_000_000, 0), 5*time.Millisecond)
			matches := runPool(t, NewMatcher(rs, Options{}), tickets)
			if len(matches) == 0 {
				t.Fatalf("no match from %d tickets", n)
			}
			checkAll(t, body, matches)
			t.Logf("%d matches", len(matches))
		})
	}
}

// checkAll has the checker confirm every match, and that no ticket is matched twice.
func checkAll(t *testing.T, body []byte, matches []*Match) {
	t.Helper()
	seen := map[string]bool{}
	for i, mt := range matches {
		for _, tk := range mt.Tickets {
			if seen[tk.ID] {
				t.Fatalf("ticket %s matched twice", tk.ID)
			}
			seen[tk.ID] = true
		}
		if probs := checkMatch(body, mt); len(probs) > 0 {
			t.Fatalf("match %d (age %v) breaks the rule set: %v", i, mt.ExpansionAge, probs)
		}
	}
}

// duelBody is a 1v1 rule set on skill, with an expansion of the skill distance after 10 s
// and the algorithm options given.
func duelBody(algorithm string) string {
	return `{"ruleLanguageVersion": "1.0",` + algorithm + `
	  "playerAttributes": [{"name": "skill", "type": "number"}],
	  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 1}, {"name": "blue", "minPlayers": 1, "maxPlayers": 1}],
	  "rules": [{"name": "Close", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 10}],
	  "expansions": [{"target": "rules[Close].maxDistance", "steps": [{"waitTimeSeconds": 10, "value": 100}]}]}`
}

var t0 = time.Unix(1_700_000_000, 0)

// ids lists a match's ticket IDs.
func ids(mt *Match) []string {
	var out []string
	for _, t := range mt.Tickets {
		out = append(out, t.ID)
	}
	return out
}

func TestLonePairMatchesAtOnce(t *testing.T) {
	m := NewMatcher(mustParse(t, duelBody("")), Options{})
	must(t, m.Add(player("a", 100, nil, t0)))
	if got := m.Step(t0); len(got) != 0 {
		t.Fatalf("one ticket matched: %v", got)
	}
	must(t, m.Add(player("b", 105, nil, t0.Add(time.Millisecond))))
	got := m.Step(t0.Add(time.Millisecond))
	if len(got) != 1 || m.Len() != 0 {
		t.Fatalf("the pair was not matched in the step after it formed: %d matches, %d left", len(got), m.Len())
	}
}

func TestExpansionRelaxesWithAge(t *testing.T) {
	body := duelBody("")
	m := NewMatcher(mustParse(t, body), Options{})
	must(t, m.Add(player("a", 100, nil, t0)))
	must(t, m.Add(player("b", 150, nil, t0)))
	if got := m.Step(t0.Add(9 * time.Second)); len(got) != 0 {
		t.Fatalf("matched before the expansion: %v", ids(got[0]))
	}
	if next, ok := m.NextWake(); !ok || !next.Equal(t0.Add(10*time.Second)) {
		t.Fatalf("NextWake %v %v, want the expansion at 10 s", next, ok)
	}
	got := m.Step(t0.Add(10 * time.Second))
	if len(got) != 1 || got[0].ExpansionAge != 10*time.Second {
		t.Fatalf("after the expansion: %d matches", len(got))
	}
	checkAll(t, []byte(body), got)
}

func TestExpansionAgeSelection(t *testing.T) {
	// An old ticket and a new one: with "newest" the match waits for the new ticket to age;
	// with "oldest" the old ticket's age relaxes the rule at once.
	for _, c := range []struct {
		sel  string
		want int
	}{{`"algorithm": {"expansionAgeSelection": "newest"},`, 0}, {`"algorithm": {"expansionAgeSelection": "oldest"},`, 1}} {
		body := duelBody(c.sel)
		m := NewMatcher(mustParse(t, body), Options{})
		must(t, m.Add(player("old", 100, nil, t0)))
		m.Step(t0.Add(20 * time.Second))
		must(t, m.Add(player("new", 150, nil, t0.Add(20*time.Second))))
		got := m.Step(t0.Add(20 * time.Second))
		if len(got) != c.want {
			t.Errorf("%s: %d matches, want %d", c.sel, len(got), c.want)
		}
		checkAll(t, []byte(body), got)
	}
}

func TestRemovedTicketsAreNotMatched(t *testing.T) {
	m := NewMatcher(mustParse(t, duelBody("")), Options{})
	must(t, m.Add(player("a", 100, nil, t0)))
	if !m.Remove("a") || m.Remove("a") {
		t.Fatal("Remove did not report what was there")
	}
	must(t, m.Add(player("b", 100, nil, t0)))
	if got := m.Step(t0); len(got) != 0 {
		t.Fatalf("a removed ticket was matched")
	}
	if err := m.Add(player("b", 100, nil, t0)); err != ErrDuplicateTicket {
		t.Errorf("adding a ticket twice: %v", err)
	}
}

// squadBody is 2v2, teams of 1–2, one skill rule.
const squadBody = `{"ruleLanguageVersion": "1.0",
  "playerAttributes": [{"name": "skill", "type": "number", "default": 100}],
  "algorithm": {"backfillPriority": "high"},
  "teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 2}, {"name": "blue", "minPlayers": 1, "maxPlayers": 2}],
  "rules": [{"name": "Close", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": 50}]}`

func TestPartiesStayTogether(t *testing.T) {
	m := NewMatcher(mustParse(t, squadBody), Options{})
	party := &Ticket{ID: "party", Start: t0, Players: []Player{{ID: "p1", Attributes: skill(100)}, {ID: "p2", Attributes: skill(110)}}}
	must(t, m.Add(party))
	must(t, m.Add(player("s1", 100, nil, t0)))
	must(t, m.Add(player("s2", 100, nil, t0)))
	got := m.Step(t0)
	if len(got) != 1 || len(got[0].Tickets) != 3 {
		t.Fatalf("matches %d", len(got))
	}
	checkAll(t, []byte(squadBody), got)
	// A party bigger than every team can never match.
	big := &Ticket{ID: "big", Start: t0, Players: []Player{{ID: "x1", Attributes: skill(1)}, {ID: "x2", Attributes: skill(1)}, {ID: "x3", Attributes: skill(1)}}}
	must(t, m.Add(big))
	must(t, m.Add(player("s3", 1, nil, t0)))
	must(t, m.Add(player("s4", 1, nil, t0)))
	if got := m.Step(t0); len(got) != 1 || slices.Contains(ids(got[0]), "big") {
		t.Fatalf("a party of three in teams of two: %v", got)
	}
}

func skill(n float64) map[string]Value { return map[string]Value{"skill": {Type: TypeNumber, N: n}} }

func TestBackfill(t *testing.T) {
	m := NewMatcher(mustParse(t, squadBody), Options{})
	bf := &Ticket{ID: "bf", Start: t0, Backfill: true, Players: []Player{{ID: "in1", Team: "red", Attributes: skill(100)}, {ID: "in2", Team: "blue", Attributes: skill(100)}}}
	must(t, m.Add(bf))
	if got := m.Step(t0); len(got) != 0 {
		t.Fatal("a backfill ticket matched alone")
	}
	must(t, m.Add(player("n1", 100, nil, t0.Add(time.Second))))
	must(t, m.Add(player("n2", 100, nil, t0.Add(time.Second))))
	got := m.Step(t0.Add(time.Second))
	if len(got) != 1 || got[0].Tickets[0].ID != "bf" || len(got[0].Tickets) != 3 {
		t.Fatalf("backfill match: %v", got)
	}
	checkAll(t, []byte(squadBody), got)
	for _, team := range got[0].Teams {
		if len(team.Players) != 2 {
			t.Errorf("team %s has %d players, want the session's one plus one", team.Name, len(team.Players))
		}
	}
}

func TestAdditionalPlayersLeaveSlotsOpen(t *testing.T) {
	m := NewMatcher(mustParse(t, squadBody), Options{AdditionalPlayers: 2})
	for i := range 4 {
		must(t, m.Add(player(fmt.Sprint("p", i), 100, nil, t0)))
	}
	got := m.Step(t0)
	if len(got) != 2 || len(got[0].Tickets) != 2 {
		t.Fatalf("%d matches of %d tickets, want 2 matches of 2 (4 slots, 2 held open)", len(got), len(got[0].Tickets))
	}
	checkAll(t, []byte(squadBody), got)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestBackfillPriority(t *testing.T) {
	for _, c := range []struct{ priority, want string }{{"high", "bf"}, {"low", "n1"}} {
		body := strings.Replace(squadBody, `"backfillPriority": "high"`, `"backfillPriority": "`+c.priority+`"`, 1)
		m := NewMatcher(mustParse(t, body), Options{})
		// The backfill ticket is the newest: only a high priority puts it first.
		must(t, m.Add(player("n1", 100, nil, t0)))
		must(t, m.Add(player("n2", 100, nil, t0)))
		must(t, m.Add(&Ticket{ID: "bf", Start: t0.Add(time.Second), Backfill: true,
			Players: []Player{{ID: "in1", Team: "red", Attributes: skill(100)}, {ID: "in2", Team: "blue", Attributes: skill(100)}}}))
		got := m.Step(t0.Add(time.Second))
		if len(got) != 1 || got[0].Tickets[0].ID != c.want {
			t.Errorf("backfillPriority %s: %d matches, first anchored on %v", c.priority, len(got), ids(got[0]))
		}
		checkAll(t, []byte(body), got)
	}
}
