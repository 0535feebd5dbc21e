package matchsim

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// ruleSet parses a rule set from testdata.
func ruleSet(t testing.TB, name string) *flexmatch.RuleSet {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	rs, err := flexmatch.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// named parses name=distribution flags.
func named(t testing.TB, specs ...string) []Named {
	t.Helper()
	var f namedFlag
	for _, s := range specs {
		if err := f.Set(s); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// fiveVFiveSpec is the benchmark population: skill normal around 1500, two Regions.
func fiveVFiveSpec(t testing.TB, players int, rate float64) GenSpec {
	return GenSpec{Players: players, Rate: rate, Seed: 7,
		Attrs:   named(t, "skill=normal:1500:300"),
		Latency: named(t, "us-east-1=uniform:20:200", "eu-west-1=uniform:20:200"),
		Party:   PartyDist{Sizes: []int{1}, Weights: []float64{1}}}
}

func TestGenerateIsDeterministic(t *testing.T) {
	rs := ruleSet(t, "5v5-skill-latency.json")
	spec := fiveVFiveSpec(t, 500, 100)
	spec.Attrs = append(spec.Attrs, named(t, "mode=choice:ctf,dm,koth", "maps=subset:a,b,c")...)
	spec.Party, _ = ParsePartyDist("1:0.6,2:0.3,3:0.1")
	a, err := Generate(rs, spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(rs, spec)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same spec and seed gave different populations")
	}
	spec.Seed++
	if c, _ := Generate(rs, spec); reflect.DeepEqual(a, c) {
		t.Fatal("a different seed gave the same population")
	}
	if a.Players() != 500 {
		t.Fatalf("%d players, want 500", a.Players())
	}
	checkGenerated(t, a)
}

// checkGenerated checks a generated population's shape: parties of 1-3, arrivals 10 ms
// apart, typed attributes, whole-millisecond latencies.
func checkGenerated(t *testing.T, pop *Population) {
	t.Helper()
	sizes := map[int]int{}
	for k, tk := range pop.Tickets {
		sizes[len(tk.Players)]++
		if want := time.Duration(k) * 10 * time.Millisecond; tk.Arrival != want {
			t.Fatalf("ticket %d arrives at %v, want %v", k, tk.Arrival, want)
		}
		p := tk.Players[0]
		if p.Attributes["skill"].Type != flexmatch.TypeNumber || p.Attributes["mode"].Type != flexmatch.TypeString ||
			p.Attributes["maps"].Type != flexmatch.TypeStringList || len(p.Attributes["maps"].SL) == 0 {
			t.Fatalf("ticket %s: attributes %+v", tk.ID, p.Attributes)
		}
		if l := p.Latency["us-east-1"]; l < 20 || l > 200 {
			t.Fatalf("ticket %s: latency %d outside uniform:20:200", tk.ID, l)
		}
	}
	if len(sizes) != 3 || sizes[1] < sizes[2] || sizes[2] < sizes[3] {
		t.Fatalf("party sizes %v, want mostly 1s, then 2s, then 3s", sizes)
	}
}

func TestGenerateRejectsMismatchedDistributions(t *testing.T) {
	rs := ruleSet(t, "5v5-skill-latency.json")
	spec := fiveVFiveSpec(t, 10, 1)
	spec.Attrs = named(t, "skill=choice:a,b")
	if _, err := Generate(rs, spec); err == nil || !strings.Contains(err.Error(), "skill") {
		t.Fatalf("a choice distribution for a number attribute: err = %v", err)
	}
	spec = fiveVFiveSpec(t, 10, 1)
	spec.Latency = nil
	if _, err := Generate(rs, spec); err == nil || !strings.Contains(err.Error(), "LatencyInMs") {
		t.Fatalf("no latencies for a latency rule: err = %v", err)
	}
	for _, bad := range []string{"normal:1", "gauss:1:2", "choice:", "uniform:a:b"} {
		if _, err := ParseDist(bad); err == nil {
			t.Errorf("ParseDist(%q) accepted", bad)
		}
	}
}

// modesRuleSet declares one attribute of each type, for the loaders.
const modesRuleSet = `{
  "name": "modes", "ruleLanguageVersion": "1.0",
  "playerAttributes": [
    {"name": "skill", "type": "number", "default": 10},
    {"name": "mode", "type": "string"},
    {"name": "modes", "type": "string_list", "default": ["x"]},
    {"name": "ping", "type": "string_number_map", "default": {"a": 1}}
  ],
  "teams": [{"name": "a", "minPlayers": 1, "maxPlayers": 1}, {"name": "b", "minPlayers": 1, "maxPlayers": 1}],
  "rules": [{"name": "SameMode", "type": "batchDistance", "batchAttribute": "mode"}]
}`

// writeTemp writes a file in a test's temporary directory.
func writeTemp(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantPopulation is what both loader tests' files hold.
func checkLoaded(t *testing.T, pop *Population) {
	t.Helper()
	if len(pop.Tickets) != 3 || pop.Players() != 4 {
		t.Fatalf("%d tickets, %d players; want 3 tickets (one a party of 2), 4 players", len(pop.Tickets), pop.Players())
	}
	// Ordered by arrival: u3 (0.25 s), the party (ticket 1 at 0.5 s/ticket), u1 (2 s).
	ids := []string{pop.Tickets[0].ID, pop.Tickets[1].ID, pop.Tickets[2].ID}
	if want := []string{"u3", "duo", "u1"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("tickets %v, want %v", ids, want)
	}
	if a := pop.Tickets[1].Arrival; a != 500*time.Millisecond {
		t.Fatalf("the party arrives at %v, want 500ms (ticket 1 at 2 tickets/s)", a)
	}
	u1 := pop.Tickets[2].Players[0]
	want := map[string]flexmatch.Value{
		"skill": {Type: flexmatch.TypeNumber, N: 1200},
		"mode":  {Type: flexmatch.TypeString, S: "ctf"},
		"modes": {Type: flexmatch.TypeStringList, SL: []string{"a", "b"}},
		"ping":  {Type: flexmatch.TypeStringNumberMap, SDM: map[string]float64{"k": 2}},
	}
	for name, v := range want {
		if got := u1.Attributes[name]; got.Type != v.Type || got.N != v.N || got.S != v.S && v.Type == flexmatch.TypeString ||
			!reflect.DeepEqual(got.SL, v.SL) && v.Type == flexmatch.TypeStringList || !reflect.DeepEqual(got.SDM, v.SDM) {
			t.Errorf("u1 attribute %s = %+v, want %+v", name, got, v)
		}
	}
	if u1.Latency["us-east-1"] != 40 {
		t.Errorf("u1 latency %v", u1.Latency)
	}
	if d := pop.Tickets[0].Players[0].Attributes["skill"]; d.N != 10 {
		t.Errorf("u3 skill %+v, want the default 10", d)
	}
}

func TestLoadJSON(t *testing.T) {
	rs, err := flexmatch.Parse([]byte(modesRuleSet))
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "pop.json", `[
	  {"id": "u1", "arrival": 2, "attributes": {"skill": 1200, "mode": "ctf", "modes": ["a", "b"], "ping": {"k": 2}}, "latency": {"us-east-1": 40}},
	  {"id": "u2", "party": "duo", "attributes": {"mode": "dm"}},
	  {"id": "u4", "party": "duo", "attributes": {"mode": "dm"}},
	  {"id": "u3", "arrival": 0.25, "attributes": {"mode": "ctf"}}
	]`)
	pop, err := LoadFile(path, rs, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, pop)
	bad := writeTemp(t, "bad.json", `[{"id": "u1", "attributes": {"mode": 7}}]`)
	if _, err := LoadFile(bad, rs, 2); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Fatalf("a number for a string attribute: err = %v", err)
	}
}

func TestLoadCSV(t *testing.T) {
	rs, err := flexmatch.Parse([]byte(modesRuleSet))
	if err != nil {
		t.Fatal(err)
	}
	path := writeTemp(t, "pop.csv", `id,arrival,party,attr:skill,attr:mode,attr:modes,attr:ping,latency:us-east-1
u1,2,,1200,ctf,a|b,k=2,40
u2,,duo,,dm,,,
u4,,duo,,dm,,,
u3,0.25,,,ctf,,,
`)
	pop, err := LoadFile(path, rs, 2)
	if err != nil {
		t.Fatal(err)
	}
	checkLoaded(t, pop)
	bad := writeTemp(t, "bad.csv", "id,attr:skill,attr:mode\nu1,high,ctf\n")
	if _, err := LoadFile(bad, rs, 2); err == nil || !strings.Contains(err.Error(), "skill") {
		t.Fatalf("a word for a number attribute: err = %v", err)
	}
	if _, err := LoadFile(writeTemp(t, "bad2.csv", "id,color\nu1,red\n"), rs, 2); err == nil {
		t.Fatal("an unknown column was accepted")
	}
}

// checker checks every match of a 5v5-skill-latency run on its own: team sizes, parties on
// one team, each ticket at most once, and the rules as the expansions relax them.
type checker struct {
	t    *testing.T
	rs   *flexmatch.RuleSet
	seen map[string]bool
}

// check checks one match.
func (c *checker) check(_ time.Duration, mt *flexmatch.Match) {
	c.t.Helper()
	for _, tk := range mt.Tickets {
		if c.seen[tk.ID] {
			c.t.Fatalf("ticket %s matched twice", tk.ID)
		}
		c.seen[tk.ID] = true
	}
	teams, rules := c.rs.At(mt.ExpansionAge)
	c.checkTeams(mt, teams)
	for _, r := range rules {
		if v, limit := c.ruleValue(mt, r); v > limit {
			c.t.Fatalf("rule %s: %v > %v at expansion age %v", r.Name, v, limit, mt.ExpansionAge)
		}
	}
}

// checkTeams checks team sizes and that a ticket's players share a team.
func (c *checker) checkTeams(mt *flexmatch.Match, teams []flexmatch.Team) {
	c.t.Helper()
	teamOf := map[*flexmatch.Ticket]string{}
	for _, mtm := range mt.Teams {
		def := teams[mtm.Definition]
		if n := len(mtm.Players); n < def.MinPlayers || n > def.MaxPlayers {
			c.t.Fatalf("team %s has %d players, want %d-%d", mtm.Name, n, def.MinPlayers, def.MaxPlayers)
		}
		for _, p := range mtm.Players {
			if name, ok := teamOf[p.Ticket]; ok && name != mtm.Name {
				c.t.Fatalf("ticket %s split over teams %s and %s", p.Ticket.ID, name, mtm.Name)
			}
			teamOf[p.Ticket] = mtm.Name
		}
	}
	if len(teamOf) != len(mt.Tickets) {
		c.t.Fatalf("%d tickets on teams, %d in the match", len(teamOf), len(mt.Tickets))
	}
}

// ruleValue measures a rule of the 5v5 rule set and returns its limit.
func (c *checker) ruleValue(mt *flexmatch.Match, r flexmatch.Rule) (float64, float64) {
	switch r.Type {
	case flexmatch.RuleDistance: // |team avg - match avg| for two equal teams is half the difference
		d, _ := teamAvgDiff(mt, "skill", r.PartyAggregation)
		return d / 2, *r.MaxDistance + 1e-9
	case flexmatch.RuleBatchDistance:
		d, _ := spread(mt, "skill", r.PartyAggregation)
		return d, *r.MaxDistance
	case flexmatch.RuleLatency:
		w, ok := worstLatency(mt)
		if !ok {
			c.t.Fatal("a match without a Region")
		}
		return w, *r.MaxLatency
	}
	c.t.Fatalf("unexpected rule type %s", r.Type)
	return 0, 0
}

// runChecked runs a population with every match checked, and checks the accounting.
func runChecked(t *testing.T, rs *flexmatch.RuleSet, pop *Population, cfg Config) *Result {
	t.Helper()
	c := &checker{t: t, rs: rs, seen: map[string]bool{}}
	cfg.OnMatch = c.check
	res, err := Run(context.Background(), rs, pop, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrived != res.Matched+res.TimedOut+res.Left || res.Unexpected != 0 || len(c.seen) != res.Matched {
		t.Fatalf("arrived %d, matched %d (%d seen), timed out %d, left %d, unexpected %d",
			res.Arrived, res.Matched, len(c.seen), res.TimedOut, res.Left, res.Unexpected)
	}
	if res.Arrived != len(pop.Tickets) && cfg.MaxTime == 0 {
		t.Fatalf("%d of %d tickets arrived", res.Arrived, len(pop.Tickets))
	}
	return res
}

func TestRunMatchesAreValid(t *testing.T) {
	rs := ruleSet(t, "5v5-skill-latency.json")
	pop, err := Generate(rs, fiveVFiveSpec(t, 3000, 1000))
	if err != nil {
		t.Fatal(err)
	}
	res := runChecked(t, rs, pop, Config{})
	if res.Matched < 2500 || res.Left != 0 {
		t.Fatalf("matched %d of 3000 tickets, %d left", res.Matched, res.Left)
	}
	rep := NewReport(res)
	if rep.TimeToMatchMS.N != res.Matched || rep.PlayersPerMatch.Min != 10 || len(rep.Quality) != 4 || rep.ArrivalRate < 999 || rep.ArrivalRate > 1001 {
		t.Fatalf("report %+v", rep)
	}
}

func TestRunWithPartiesAndTimeouts(t *testing.T) {
	rs := ruleSet(t, "5v5-skill-latency.json")
	spec := fiveVFiveSpec(t, 2000, 200)
	spec.Party, _ = ParsePartyDist("1:0.6,2:0.25,3:0.15")
	pop, err := Generate(rs, spec)
	if err != nil {
		t.Fatal(err)
	}
	res := runChecked(t, rs, pop, Config{Timeout: 3 * time.Second, MaxTime: 8 * time.Second})
	if res.TimedOut == 0 || res.Left == 0 || res.Matched == 0 {
		t.Fatalf("matched %d, timed out %d, left %d: want some of each (3 s timeout, stopped at 8 s)",
			res.Matched, res.TimedOut, res.Left)
	}
}

func TestLonePair(t *testing.T) {
	rs := ruleSet(t, "1v1.json")
	pop, err := Generate(rs, GenSpec{Players: 2, Rate: 2, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	res := runChecked1v1(t, rs, pop)
	waits := []time.Duration{res.Waits[0].Wait, res.Waits[1].Wait}
	slices.Sort(waits)
	if len(res.Matches) != 1 || res.Matches[0].At != 500*time.Millisecond || !reflect.DeepEqual(waits, []time.Duration{0, 500 * time.Millisecond}) {
		t.Fatalf("matches %+v, waits %v: want one match at 500ms, waits 500ms and 0", res.Matches, waits)
	}
	// The real time from Add of the second ticket to the Step returning the match (the
	// target is under 100 ms; BenchmarkLonePair measures it).
	took := addToMatch(t, rs)
	t.Logf("lone pair: Add of the second ticket to the match: %v", took)
}

// runChecked1v1 runs a 1v1 population and checks its accounting.
func runChecked1v1(t *testing.T, rs *flexmatch.RuleSet, pop *Population) *Result {
	t.Helper()
	res, err := Run(context.Background(), rs, pop, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Arrived != 2 || res.Matched != 2 || res.Unexpected != 0 {
		t.Fatalf("arrived %d, matched %d, unexpected %d", res.Arrived, res.Matched, res.Unexpected)
	}
	return res
}

// addToMatch puts one ticket in a fresh 1v1 matcher, steps, then times Add of a second
// ticket and the Step that returns their match.
func addToMatch(t testing.TB, rs *flexmatch.RuleSet) time.Duration {
	m := flexmatch.NewMatcher(rs, flexmatch.Options{})
	ticket := func(id string, at time.Time) *flexmatch.Ticket {
		p := flexmatch.Player{ID: id}
		if err := rs.Prepare(&p); err != nil {
			t.Fatal(err)
		}
		return &flexmatch.Ticket{ID: id, Start: at, Players: []flexmatch.Player{p}}
	}
	first, second := ticket("a", epoch), ticket("b", epoch.Add(500*time.Millisecond))
	if err := m.Add(first); err != nil || len(m.Step(first.Start)) != 0 {
		t.Fatalf("a lone ticket: err %v, or it matched", err)
	}
	start := time.Now()
	if err := m.Add(second); err != nil {
		t.Fatal(err)
	}
	matches := m.Step(second.Start)
	took := time.Since(start)
	if len(matches) != 1 || m.Len() != 0 {
		t.Fatalf("%d matches, %d left in the pool; want the pair matched", len(matches), m.Len())
	}
	return took
}

func TestMainWritesReports(t *testing.T) {
	dir := t.TempDir()
	svg := filepath.Join(dir, "out.svg")
	var out bytes.Buffer
	args := []string{"--rule-set", "testdata/1v1.json", "--players", "40", "--rate", "20", "--attr", "skill=normal:1000:100", "--json", "--svg", svg}
	if err := Main(context.Background(), args, &out); err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if rep.Arrived != 40 || rep.Matched+rep.TimedOut != 40 || rep.Matches == 0 {
		t.Fatalf("report %+v", rep)
	}
	body, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(body, []byte("<svg")) || !bytes.Contains(body, []byte("<path")) {
		t.Fatalf("svg: err %v, body %.200s", err, body)
	}
	out.Reset()
	if err := Main(context.Background(), args[:8], &out); err != nil || !strings.Contains(out.String(), "time to match") {
		t.Fatalf("text report: err %v\n%s", err, out.String())
	}
	if err := Main(context.Background(), []string{"--players", "2"}, &out); err == nil {
		t.Fatal("no --rule-set was accepted")
	}
}
