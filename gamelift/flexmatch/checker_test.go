package flexmatch

// This file is an independent checker of FlexMatch matches, for tests. It is written from
// the FlexMatch Developer Guide alone and shares no code with the package's parser, stages or
// matcher: it decodes the rule set body itself into generic JSON values, applies expansions
// itself and evaluates property expressions with its own small evaluator. Matcher tests call
// checkMatch on every match the matcher proposes. Every identifier here starts with chk (or
// is checkMatch) so that it cannot collide with the package's own.
//
// Where the documentation leaves room, the checker reads it as follows; a disagreement with
// the matcher is a question for docs/flexmatch.md, not something to paper over.
//
//   - Party aggregation. partyAggregation combines the values of one ticket's players into
//     one value before a rule compares anything. It applies to player-level values only:
//     values a selector produced for one player that no function has aggregated yet
//     (teams[red].players.attributes[skill], flatten(teams[*].players.attributes[skill])).
//     Values computed by functions (avg(teams[*]...), count(...)) are team- or match-level
//     and are used as they are. Numbers combine by min, max or avg (default avg); strings
//     cannot be combined and are checked player by player; string lists (collection rules)
//     combine by union or intersection (default union). A group is the players of one ticket
//     on one team, so a backfill ticket, whose players sit on several teams, forms one group
//     per team. This applies to comparison (both forms), distance, collection, batchDistance
//     and the maxDistance part of latency.
//   - comparison with a referenceValue: every measured value against every reference value
//     (a list or an expression may give several). Without one, "=" wants all measured values
//     equal and "!=" all pairwise different.
//   - distance: |measured − reference| within [minDistance, maxDistance] for every measured
//     value against every reference value.
//   - collection: a measurement gives collections: each player-level value (a player's
//     string list, or a player's string as a list of one) is one collection, party-aggregated;
//     a list of strings computed by a function (flatten of one team's lists,
//     set_intersection) is one collection. intersection counts the strings common to all
//     collections; contains counts the collections holding every reference string;
//     reference_intersection_count bounds each collection's overlap with the reference.
//   - latency: a region is usable only if every player of the match reported a latency for
//     it. The rule holds if some usable region has every player's latency ≤ maxLatency (per
//     player, as the guide says "for each player") and, when maxDistance is set, every
//     group's latency there (party-aggregated) within maxDistance of the reference: the min
//     (default) or avg of the group latencies.
//   - compound: xor holds when exactly one argument holds. Rules named by any compound
//     statement are enforced only through it (Hoist's decision).
//   - A function of an empty list (avg of a team with no players) has no value and is left
//     out; a rule with nothing to measure holds. stddev is the population deviation. Numbers
//     compare with a relative tolerance of 1e-9, so sums taken in another order still agree.

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chkMaxPlayers is the most players of any match (FlexMatch Developer Guide).
const chkMaxPlayers = 200

// chkEps is the relative tolerance of number comparisons.
const chkEps = 1e-9

// checkMatch reports every way m breaks the rule set body (raw JSON), evaluated at
// m.ExpansionAge.
func checkMatch(body []byte, m *Match) []string {
	c, err := chkLoad(body, m)
	if err != nil {
		return []string{"rule set: " + err.Error()}
	}
	c.checkTeams()
	c.checkMembers()
	c.checkAttributes()
	c.checkRules()
	c.checkRegions()
	return c.probs
}

// chk is one check of one match: the rule set as the match's age relaxes it, and the
// problems found so far.
type chk struct {
	m     *Match
	attrs []chkAttr
	teams []chkTeam // team instances, in declaration order
	rules []map[string]any
	// byName finds a rule by name; rules are copies, so expansions may write to them.
	byName map[string]map[string]any
	// inStatement holds the rules some compound statement names.
	inStatement map[string]bool
	probs       []string
}

// chkAttr is a declared player attribute.
type chkAttr struct {
	name, typ string
	def       *Value // nil: required
}

// chkTeam is one team instance of the rule set (quantity N gives N instances).
type chkTeam struct {
	name, def string // instance name and definition name
	defIndex  int
	min, max  float64
}

func (c *chk) fail(format string, args ...any) {
	c.probs = append(c.probs, fmt.Sprintf(format, args...))
}

// ---- Loading the rule set ----

// chkLoad decodes body and applies the expansions m's age allows.
func chkLoad(body []byte, m *Match) (*chk, error) {
	var doc map[string]any
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	c := &chk{m: m, byName: map[string]map[string]any{}, inStatement: map[string]bool{}}
	if err := c.loadAttrs(chkObjs(doc["playerAttributes"])); err != nil {
		return nil, err
	}
	if err := c.loadTeams(chkObjs(doc["teams"])); err != nil {
		return nil, err
	}
	c.loadRules(chkObjs(doc["rules"]))
	if err := c.expand(chkObjs(doc["expansions"])); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *chk) loadAttrs(attrs []map[string]any) error {
	for _, a := range attrs {
		at := chkAttr{name: chkStr(a["name"]), typ: chkStr(a["type"])}
		if d, ok := a["default"]; ok && d != nil {
			v, err := chkDefault(at.typ, d)
			if err != nil {
				return fmt.Errorf("attribute %s: %v", at.name, err)
			}
			at.def = &v
		}
		c.attrs = append(c.attrs, at)
	}
	return nil
}

// chkDefault turns a JSON default into a Value of the declared type.
func chkDefault(typ string, d any) (Value, error) {
	bad := fmt.Errorf("default %v is not a %s", d, typ)
	switch typ {
	case "number":
		n, ok := chkNum(d)
		if !ok {
			return Value{}, bad
		}
		return Value{Type: TypeNumber, N: n}, nil
	case "string":
		s, ok := d.(string)
		if !ok {
			return Value{}, bad
		}
		return Value{Type: TypeString, S: s}, nil
	case "string_list":
		return chkDefaultList(d, bad)
	case "string_number_map":
		return chkDefaultMap(d, bad)
	}
	return Value{}, fmt.Errorf("unknown type %q", typ)
}

func chkDefaultList(d any, bad error) (Value, error) {
	items, ok := d.([]any)
	if !ok {
		return Value{}, bad
	}
	v := Value{Type: TypeStringList, SL: []string{}}
	for _, it := range items {
		s, ok := it.(string)
		if !ok {
			return Value{}, bad
		}
		v.SL = append(v.SL, s)
	}
	return v, nil
}

func chkDefaultMap(d any, bad error) (Value, error) {
	obj, ok := d.(map[string]any)
	if !ok {
		return Value{}, bad
	}
	v := Value{Type: TypeStringNumberMap, SDM: map[string]float64{}}
	for k, x := range obj {
		n, ok := chkNum(x)
		if !ok {
			return Value{}, bad
		}
		v.SDM[k] = n
	}
	return v, nil
}

// loadTeams lists the team instances: a definition with quantity N > 1 gives <name>_1 ...
// <name>_N.
func (c *chk) loadTeams(defs []map[string]any) error {
	if len(defs) == 0 {
		return fmt.Errorf("no teams")
	}
	for i, d := range defs {
		name := chkStr(d["name"])
		lo, ok1 := chkNum(d["minPlayers"])
		hi, ok2 := chkNum(d["maxPlayers"])
		if !ok1 || !ok2 {
			return fmt.Errorf("team %q lacks minPlayers or maxPlayers", name)
		}
		q, ok := chkNum(d["quantity"])
		if !ok || q < 1 {
			q = 1
		}
		if q == 1 {
			c.teams = append(c.teams, chkTeam{name, name, i, lo, hi})
			continue
		}
		for k := 1; k <= int(q); k++ {
			c.teams = append(c.teams, chkTeam{fmt.Sprintf("%s_%d", name, k), name, i, lo, hi})
		}
	}
	return nil
}

// loadRules copies the rules and notes the rules compound statements name.
func (c *chk) loadRules(rules []map[string]any) {
	for _, r := range rules {
		cp := map[string]any{}
		for k, v := range r {
			cp[k] = v
		}
		c.rules = append(c.rules, cp)
		c.byName[chkStr(cp["name"])] = cp
		if chkStr(cp["type"]) != "compound" {
			continue
		}
		if st, err := chkParseStmt(chkStr(cp["statement"])); err == nil {
			st.names(c.inStatement)
		}
	}
}

// ---- Expansions ----

// expand applies, for each expansion, the latest step whose waitTimeSeconds is at most the
// match's expansion age.
func (c *chk) expand(exps []map[string]any) error {
	age := c.m.ExpansionAge.Seconds()
	for _, e := range exps {
		value, ok := chkStep(chkObjs(e["steps"]), age)
		if !ok {
			continue
		}
		if err := c.applyTarget(chkStr(e["target"]), value); err != nil {
			return err
		}
	}
	return nil
}

// chkStep returns the value of the step with the largest waitTimeSeconds not above age.
func chkStep(steps []map[string]any, age float64) (any, bool) {
	best, found := math.Inf(-1), false
	var value any
	for _, s := range steps {
		w, ok := chkNum(s["waitTimeSeconds"])
		if ok && w <= age && w >= best {
			best, value, found = w, s["value"], true
		}
	}
	return value, found
}

// applyTarget sets the property a target such as rules[X].maxDistance or
// teams[A, B].minPlayers names.
func (c *chk) applyTarget(target string, value any) error {
	open, end := strings.Index(target, "["), strings.Index(target, "]")
	if open < 0 || end < open || !strings.HasPrefix(target[end+1:], ".") {
		return fmt.Errorf("expansion target %q", target)
	}
	names, prop := chkSplit(target[open+1:end]), target[end+2:]
	switch strings.TrimSpace(target[:open]) {
	case "rules":
		for _, n := range names {
			r := c.byName[n]
			if r == nil {
				return fmt.Errorf("expansion target %q names no rule", target)
			}
			r[prop] = value
		}
		return nil
	case "teams", "team":
		return c.expandTeams(names, prop, value)
	}
	return fmt.Errorf("expansion target %q", target)
}

// expandTeams sets minPlayers or maxPlayers of the named teams; a definition's name names
// all its instances.
func (c *chk) expandTeams(names []string, prop string, value any) error {
	n, ok := chkNum(value)
	if !ok || (prop != "minPlayers" && prop != "maxPlayers") {
		return fmt.Errorf("team expansion of %s to %v", prop, value)
	}
	for i := range c.teams {
		t := &c.teams[i]
		if !chkNamesTeam(names, *t) {
			continue
		}
		if prop == "minPlayers" {
			t.min = n
		} else {
			t.max = n
		}
	}
	return nil
}

func chkNamesTeam(names []string, t chkTeam) bool {
	for _, n := range names {
		if n == "*" || n == t.name || n == t.def {
			return true
		}
	}
	return false
}

// ---- Structure ----

// checkTeams checks that every team instance appears once, in declaration order, with a
// size the (expanded) rule set allows.
func (c *chk) checkTeams() {
	want := map[string]int{}
	for i, t := range c.teams {
		want[t.name] = i
	}
	seen, last, inOrder := map[string]bool{}, -1, true
	for _, mt := range c.m.Teams {
		i, ok := want[mt.Name]
		switch {
		case !ok:
			c.fail("team %q is not a team of the rule set", mt.Name)
		case seen[mt.Name]:
			c.fail("team %q appears twice", mt.Name)
		default:
			seen[mt.Name] = true
			inOrder = inOrder && i > last
			last = i
			c.checkTeamSize(mt, c.teams[i])
		}
	}
	for _, t := range c.teams {
		if !seen[t.name] {
			c.fail("team %q is missing from the match", t.name)
		}
	}
	if !inOrder {
		c.fail("teams are not in declaration order")
	}
}

func (c *chk) checkTeamSize(mt MatchTeam, t chkTeam) {
	if mt.Definition != t.defIndex {
		c.fail("team %q has Definition %d, want %d", mt.Name, mt.Definition, t.defIndex)
	}
	n := float64(len(mt.Players))
	if n < t.min || n > t.max {
		c.fail("team %q has %d players, wants %s to %s", mt.Name, len(mt.Players), chkG(t.min), chkG(t.max))
	}
}

// checkMembers checks that tickets and team players agree: each ticket once, each player on
// exactly one team, parties together, backfill players on their teams, at most 200 players.
func (c *chk) checkMembers() {
	owner := c.checkTickets()
	placed := map[string]string{} // player ID → team
	total := 0
	for _, mt := range c.m.Teams {
		for _, mp := range mt.Players {
			total++
			c.checkPlacement(mp, mt.Name, owner, placed)
		}
	}
	if total > chkMaxPlayers {
		c.fail("the match has %d players, more than %d", total, chkMaxPlayers)
	}
	c.checkTicketsPlaced(placed)
}

// checkTickets checks the ticket list and returns each player's ticket.
func (c *chk) checkTickets() map[string]*Ticket {
	owner, seen, backfills := map[string]*Ticket{}, map[string]bool{}, 0
	for i, t := range c.m.Tickets {
		if t == nil {
			c.fail("ticket %d is nil", i)
			continue
		}
		if seen[t.ID] {
			c.fail("ticket %s appears twice", t.ID)
			continue
		}
		seen[t.ID] = true
		if t.Backfill {
			backfills++
			if i != 0 {
				c.fail("backfill ticket %s is not first", t.ID)
			}
		}
		for _, p := range t.Players {
			if o := owner[p.ID]; o != nil {
				c.fail("player %s is in tickets %s and %s", p.ID, o.ID, t.ID)
				continue
			}
			owner[p.ID] = t
		}
	}
	if backfills > 1 {
		c.fail("%d backfill tickets in one match", backfills)
	}
	return owner
}

// checkPlacement checks one team player and records their team.
func (c *chk) checkPlacement(mp MatchPlayer, team string, owner map[string]*Ticket, placed map[string]string) {
	if mp.Ticket == nil || mp.Player == nil {
		c.fail("team %q holds a player without a ticket or player", team)
		return
	}
	id := mp.Player.ID
	if prev, ok := placed[id]; ok {
		c.fail("player %s is placed twice (teams %s and %s)", id, prev, team)
		return
	}
	placed[id] = team
	t := owner[id]
	if t == nil || t.ID != mp.Ticket.ID {
		c.fail("player %s on team %s is not a player of ticket %s of the match", id, team, mp.Ticket.ID)
		return
	}
	if want := chkFindPlayer(t, id).Team; t.Backfill && want != team {
		c.fail("backfill player %s is on team %s, not its team %s", id, team, want)
	}
}

func chkFindPlayer(t *Ticket, id string) *Player {
	for i := range t.Players {
		if t.Players[i].ID == id {
			return &t.Players[i]
		}
	}
	return &Player{}
}

// checkTicketsPlaced checks that every ticket player is on a team and that a party is on one.
func (c *chk) checkTicketsPlaced(placed map[string]string) {
	for _, t := range c.m.Tickets {
		if t == nil {
			continue
		}
		teams := map[string]bool{}
		for _, p := range t.Players {
			team, ok := placed[p.ID]
			if !ok {
				c.fail("player %s of ticket %s is on no team", p.ID, t.ID)
				continue
			}
			teams[team] = true
		}
		if !t.Backfill && len(teams) > 1 {
			c.fail("ticket %s is split across teams %s", t.ID, strings.Join(chkKeys(teams), ", "))
		}
	}
}

// ---- Attributes ----

// checkAttributes checks that every team player has each declared attribute, or a default
// for it, with the declared type.
func (c *chk) checkAttributes() {
	c.eachPlayer(func(mp *MatchPlayer, _ string) {
		for _, a := range c.attrs {
			v, ok := mp.Player.Attributes[a.name]
			switch {
			case !ok && a.def == nil:
				c.fail("player %s lacks attribute %s, which has no default", mp.Player.ID, a.name)
			case ok && string(v.Type) != a.typ:
				c.fail("player %s attribute %s is a %s, declared %s", mp.Player.ID, a.name, v.Type, a.typ)
			}
		}
	})
}

// attr is a player's attribute, or the declared default when the player has none.
func (c *chk) attr(p *Player, name string) (Value, bool) {
	if v, ok := p.Attributes[name]; ok {
		return v, true
	}
	for _, a := range c.attrs {
		if a.name == name && a.def != nil {
			return *a.def, true
		}
	}
	return Value{}, false
}

// eachPlayer calls f for every team player that has a ticket and a player.
func (c *chk) eachPlayer(f func(mp *MatchPlayer, team string)) {
	for ti := range c.m.Teams {
		mt := &c.m.Teams[ti]
		for i := range mt.Players {
			if mp := &mt.Players[i]; mp.Ticket != nil && mp.Player != nil {
				f(mp, mt.Name)
			}
		}
	}
}

// ---- Values and property expressions ----

// chkVal is the value of a property expression.
type chkVal struct {
	kind  byte // 'n' number, 's' string, 'l' list, 'p' player; 0 for no value
	n     float64
	s     string // the string, or the text a number literal was written as
	items []chkVal
	mp    *MatchPlayer // set on a player-level value: the player it belongs to
	team  string       // the team a player-level or per-team value belongs to
	party int          // how many players a party-aggregated value combines
}

// chkExpr is a parsed property expression: a function of one argument, or a selector.
type chkExpr struct {
	fn    string
	arg   *chkExpr
	teams []string // selected team names
	sel   string   // "players", "playerId" or "attribute"
	attr  string
}

var chkFuncs = map[string]bool{
	"min": true, "max": true, "avg": true, "median": true, "sum": true, "stddev": true,
	"count": true, "flatten": true, "set_intersection": true,
}

// chkParseExpr parses fn(arg) or a selector teams[a,b|*].players[.attributes[x] |
// [playerId]]; team[...] is accepted too, as the guide spells it both ways.
func chkParseExpr(s string) (*chkExpr, error) {
	s = strings.TrimSpace(s)
	i := strings.Index(s, "(")
	if i < 0 {
		return chkParseSelector(s)
	}
	fn := strings.TrimSpace(s[:i])
	if !chkFuncs[fn] {
		return nil, fmt.Errorf("%q: unknown function %q", s, fn)
	}
	if !strings.HasSuffix(s, ")") {
		return nil, fmt.Errorf("%q: missing )", s)
	}
	arg, err := chkParseExpr(s[i+1 : len(s)-1])
	if err != nil {
		return nil, err
	}
	return &chkExpr{fn: fn, arg: arg}, nil
}

func chkParseSelector(s string) (*chkExpr, error) {
	rest, ok := strings.CutPrefix(s, "teams[")
	if !ok {
		rest, ok = strings.CutPrefix(s, "team[")
	}
	end := strings.Index(rest, "]")
	if !ok || end < 0 {
		return nil, fmt.Errorf("%q is not a property expression", s)
	}
	e := &chkExpr{teams: chkSplit(rest[:end])}
	rest = rest[end+1:]
	attr, isAttr := strings.CutPrefix(rest, ".players.attributes[")
	switch {
	case rest == ".players":
		e.sel = "players"
	case strings.EqualFold(rest, ".players[playerId]"):
		e.sel = "playerId"
	case isAttr && strings.HasSuffix(attr, "]"):
		e.sel, e.attr = "attribute", strings.TrimSpace(strings.TrimSuffix(attr, "]"))
	default:
		return nil, fmt.Errorf("%q: unsupported selector", s)
	}
	return e, nil
}

// chkLooksLikeExpr tells an expression string from a literal string.
func chkLooksLikeExpr(s string) bool {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "teams[") || strings.HasPrefix(s, "team[") {
		return true
	}
	i := strings.Index(s, "(")
	return i > 0 && chkFuncs[strings.TrimSpace(s[:i])]
}

func (c *chk) eval(e *chkExpr) (chkVal, error) {
	if e.fn == "" {
		return c.evalSelector(e)
	}
	arg, err := c.eval(e.arg)
	if err != nil {
		return chkVal{}, err
	}
	return chkApply(e.fn, arg)
}

// evalSelector gives one team's list for a selector naming exactly one team, else a list of
// lists, one per team.
func (c *chk) evalSelector(e *chkExpr) (chkVal, error) {
	teams, single, err := c.selectTeams(e.teams)
	if err != nil {
		return chkVal{}, err
	}
	out := chkVal{kind: 'l'}
	for _, mt := range teams {
		l, err := c.teamValues(mt, e)
		if err != nil {
			return chkVal{}, err
		}
		out.items = append(out.items, l)
	}
	if single {
		return out.items[0], nil
	}
	return out, nil
}

// selectTeams resolves selected names to match teams, in declaration order; a definition's
// name selects all its instances. A team missing from the match counts as empty.
func (c *chk) selectTeams(names []string) ([]*MatchTeam, bool, error) {
	var out []*MatchTeam
	for _, t := range c.teams {
		if chkNamesTeam(names, t) {
			out = append(out, c.matchTeam(t.name))
		}
	}
	if len(out) == 0 {
		return nil, false, fmt.Errorf("teams[%s] selects no team", strings.Join(names, ","))
	}
	single := len(names) == 1 && len(out) == 1 && out[0].Name == names[0]
	return out, single, nil
}

func (c *chk) matchTeam(name string) *MatchTeam {
	for i := range c.m.Teams {
		if c.m.Teams[i].Name == name {
			return &c.m.Teams[i]
		}
	}
	return &MatchTeam{Name: name}
}

// teamValues is the list of one team's player-level values.
func (c *chk) teamValues(mt *MatchTeam, e *chkExpr) (chkVal, error) {
	out := chkVal{kind: 'l', team: mt.Name}
	for i := range mt.Players {
		mp := &mt.Players[i]
		if mp.Player == nil || mp.Ticket == nil {
			continue
		}
		v, ok, err := c.playerValue(mp, e)
		if err != nil {
			return chkVal{}, err
		}
		if ok {
			v.mp, v.team = mp, mt.Name
			out.items = append(out.items, v)
		}
	}
	return out, nil
}

func (c *chk) playerValue(mp *MatchPlayer, e *chkExpr) (chkVal, bool, error) {
	switch e.sel {
	case "players":
		return chkVal{kind: 'p'}, true, nil
	case "playerId":
		return chkVal{kind: 's', s: mp.Player.ID}, true, nil
	}
	v, ok := c.attr(mp.Player, e.attr)
	if !ok {
		return chkVal{}, false, nil // checkAttributes reports it
	}
	cv, err := chkFromValue(v, e.attr)
	return cv, err == nil, err
}

// chkFromValue turns an attribute value into an expression value.
func chkFromValue(v Value, name string) (chkVal, error) {
	switch v.Type {
	case TypeNumber:
		return chkVal{kind: 'n', n: v.N}, nil
	case TypeString:
		return chkVal{kind: 's', s: v.S}, nil
	case TypeStringList:
		out := chkVal{kind: 'l'}
		for _, s := range v.SL {
			out.items = append(out.items, chkVal{kind: 's', s: s})
		}
		return out, nil
	}
	return chkVal{}, fmt.Errorf("attribute %s of type %q cannot be used here", name, v.Type)
}

// chkApply applies a function. Every function but flatten applies to each sublist when
// given a list of lists (for set_intersection, whose own input is a list of lists: a list
// of lists of lists).
func chkApply(fn string, arg chkVal) (chkVal, error) {
	switch {
	case arg.kind == 0:
		return arg, nil
	case fn == "flatten":
		return chkFlatten(arg), nil
	case arg.kind != 'l':
		arg = chkVal{kind: 'l', items: []chkVal{arg}}
	}
	if chkNested(fn, arg) {
		return chkMap(fn, arg)
	}
	if fn == "set_intersection" {
		return chkSetIntersection(arg)
	}
	return chkAggregate(fn, arg)
}

func chkNested(fn string, arg chkVal) bool {
	if len(arg.items) == 0 {
		return false
	}
	for _, it := range arg.items {
		if it.kind != 'l' || (fn == "set_intersection" && !chkNested("", it)) {
			return false
		}
	}
	return true
}

// chkMap applies fn to each sublist; sublists without a value are left out.
func chkMap(fn string, arg chkVal) (chkVal, error) {
	out := chkVal{kind: 'l'}
	for _, it := range arg.items {
		r, err := chkApply(fn, it)
		if err != nil {
			return chkVal{}, err
		}
		if r.kind != 0 {
			if r.team == "" {
				r.team = it.team
			}
			out.items = append(out.items, r)
		}
	}
	return out, nil
}

// chkFlatten splices the items of every list item into one list (one level).
func chkFlatten(arg chkVal) chkVal {
	if arg.kind != 'l' {
		return arg
	}
	out := chkVal{kind: 'l'}
	for _, it := range arg.items {
		if it.kind == 'l' {
			out.items = append(out.items, it.items...)
		} else {
			out.items = append(out.items, it)
		}
	}
	return out
}

// chkSetIntersection gives the strings found in every list of arg.
func chkSetIntersection(arg chkVal) (chkVal, error) {
	var sets [][]string
	for _, it := range arg.items {
		set, err := chkToSet(it)
		if err != nil {
			return chkVal{}, err
		}
		sets = append(sets, set)
	}
	out := chkVal{kind: 'l'}
	for _, s := range chkIntersect(sets) {
		out.items = append(out.items, chkVal{kind: 's', s: s})
	}
	return out, nil
}

// chkAggregate applies a numeric function, or count, to one list.
func chkAggregate(fn string, arg chkVal) (chkVal, error) {
	if fn == "count" {
		return chkVal{kind: 'n', n: float64(len(arg.items)), team: arg.team}, nil
	}
	nums := make([]float64, 0, len(arg.items))
	for _, it := range arg.items {
		if it.kind != 'n' {
			return chkVal{}, fmt.Errorf("%s of %s, which is not a number", fn, chkFmt(it))
		}
		nums = append(nums, it.n)
	}
	if len(nums) == 0 && fn != "sum" {
		return chkVal{}, nil // no value
	}
	return chkVal{kind: 'n', n: chkStat(fn, nums), team: arg.team}, nil
}

// chkStat is min, max, avg, median, sum or (population) stddev of nums.
func chkStat(fn string, nums []float64) float64 {
	s := append([]float64(nil), nums...)
	sort.Float64s(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	switch fn {
	case "min":
		return s[0]
	case "max":
		return s[len(s)-1]
	case "sum":
		return sum
	case "median":
		return (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	case "stddev":
		mean, sq := sum/float64(len(s)), 0.0
		for _, x := range s {
			sq += (x - mean) * (x - mean)
		}
		return math.Sqrt(sq / float64(len(s)))
	}
	return sum / float64(len(s)) // avg
}

// chkLeaves opens lists down to single values; a player's string list stays whole.
func chkLeaves(v chkVal) []chkVal {
	if v.kind == 0 {
		return nil
	}
	if v.kind != 'l' || v.mp != nil {
		return []chkVal{v}
	}
	var out []chkVal
	for _, it := range v.items {
		out = append(out, chkLeaves(it)...)
	}
	return out
}

// chkParty aggregates the player-level numbers of each group (one ticket's players on one
// team) into one value; other values pass through.
func chkParty(vals []chkVal, agg string) []chkVal {
	groups, first := map[string][]float64{}, map[string]int{}
	var out []chkVal
	for _, v := range vals {
		if v.kind != 'n' || v.mp == nil {
			out = append(out, v)
			continue
		}
		k := chkGroup(v)
		if _, ok := first[k]; !ok {
			first[k] = len(out)
			out = append(out, v)
		}
		groups[k] = append(groups[k], v.n)
	}
	for k, i := range first {
		out[i].n, out[i].party = chkCombine(agg, groups[k]), len(groups[k])
	}
	return out
}

func chkGroup(v chkVal) string { return v.mp.Ticket.ID + "\x00" + v.team }

// chkCombine is the partyAggregation of numbers: min, max or avg (the default).
func chkCombine(agg string, nums []float64) float64 {
	if agg != "min" && agg != "max" {
		agg = "avg"
	}
	return chkStat(agg, nums)
}

// ---- Rules ----

// checkRules evaluates every rule that no compound statement names.
func (c *chk) checkRules() {
	for _, r := range c.rules {
		name := chkStr(r["name"])
		if c.inStatement[name] {
			continue // enforced only through its compound rule
		}
		for _, why := range c.evalRule(r, 0) {
			c.fail("rule %q: %s", name, why)
		}
	}
}

// evalRule says why rule r fails on the match; nothing when it holds.
func (c *chk) evalRule(r map[string]any, depth int) []string {
	switch t := chkStr(r["type"]); t {
	case "comparison":
		return c.comparison(r)
	case "distance":
		return c.distance(r)
	case "collection":
		return c.collection(r)
	case "batchDistance":
		return c.batchDistance(r)
	case "latency":
		return c.latency(r)
	case "absoluteSort", "distanceSort":
		return nil // sort rules only order candidates
	case "compound":
		return c.compound(r, depth)
	default:
		return []string{fmt.Sprintf("unknown rule type %q", t)}
	}
}

// measure evaluates a rule's measurements (a string or a list of strings) down to single
// values, party-aggregated.
func (c *chk) measure(r map[string]any) ([]chkVal, error) {
	var out []chkVal
	for _, m := range chkList(r["measurements"]) {
		e, err := chkParseExpr(chkStr(m))
		if err != nil {
			return nil, err
		}
		v, err := c.eval(e)
		if err != nil {
			return nil, err
		}
		out = append(out, chkLeaves(v)...)
	}
	return chkParty(out, chkStr(r["partyAggregation"])), nil
}

// reference returns the rule's referenceValue as single values, and whether it has one.
func (c *chk) reference(r map[string]any) ([]chkVal, bool, error) {
	rv, ok := r["referenceValue"]
	if !ok || rv == nil {
		return nil, false, nil
	}
	v, err := c.literalOrExpr(rv)
	return chkLeaves(v), true, err
}

// literalOrExpr reads a number, a numeric or literal string, an expression string, or a list
// of those.
func (c *chk) literalOrExpr(rv any) (chkVal, error) {
	switch x := rv.(type) {
	case float64:
		return chkVal{kind: 'n', n: x}, nil
	case string:
		if chkLooksLikeExpr(x) {
			e, err := chkParseExpr(x)
			if err != nil {
				return chkVal{}, err
			}
			return c.eval(e)
		}
		if n, ok := chkNum(x); ok {
			return chkVal{kind: 'n', n: n, s: x}, nil
		}
		return chkVal{kind: 's', s: x}, nil
	case []any:
		out := chkVal{kind: 'l'}
		for _, it := range x {
			v, err := c.literalOrExpr(it)
			if err != nil {
				return chkVal{}, err
			}
			out.items = append(out.items, v)
		}
		return out, nil
	}
	return chkVal{}, fmt.Errorf("referenceValue %v has an unsupported type", rv)
}

// comparison: each measured value against each reference value, or, without a reference,
// all equal (=) or all different (!=).
func (c *chk) comparison(r map[string]any) []string {
	vals, err := c.measure(r)
	if err != nil {
		return []string{err.Error()}
	}
	refs, has, err := c.reference(r)
	if err != nil {
		return []string{err.Error()}
	}
	op := chkStr(r["operation"])
	if !has {
		return chkAcross(vals, op)
	}
	var out []string
	for _, v := range vals {
		for _, ref := range refs {
			ok, err := chkCompare(v, op, ref)
			if err != nil {
				return []string{err.Error()}
			}
			if !ok {
				out = append(out, fmt.Sprintf("%s value %s is not %s %s", chkWho(v), chkFmt(v), op, chkFmt(ref)))
			}
		}
	}
	return out
}

// chkAcross is the comparison without a reference value.
func chkAcross(vals []chkVal, op string) []string {
	if op != "=" && op != "!=" {
		return []string{fmt.Sprintf("operation %q needs a referenceValue", op)}
	}
	var out []string
	for i := range vals {
		for j := i + 1; j < len(vals); j++ {
			eq, err := chkCompare(vals[i], "=", vals[j])
			if err != nil {
				return []string{err.Error()}
			}
			switch {
			case op == "=" && !eq && i == 0:
				out = append(out, fmt.Sprintf("%s value %s differs from %s value %s (operation =)",
					chkWho(vals[j]), chkFmt(vals[j]), chkWho(vals[i]), chkFmt(vals[i])))
			case op == "!=" && eq:
				out = append(out, fmt.Sprintf("%s and %s both have value %s (operation !=)",
					chkWho(vals[i]), chkWho(vals[j]), chkFmt(vals[i])))
			}
		}
	}
	return out
}

// chkCompare compares two values: as numbers when both are (or are numeric strings), else
// as strings.
func chkCompare(a chkVal, op string, b chkVal) (bool, error) {
	if x, y, ok := chkBothNums(a, b); ok {
		eq := chkClose(x, y)
		return chkOp(op, eq, x < y)
	}
	if (a.kind != 's' && a.kind != 'n') || (b.kind != 's' && b.kind != 'n') {
		return false, fmt.Errorf("cannot compare %s with %s", chkFmt(a), chkFmt(b))
	}
	x, y := chkText(a), chkText(b)
	return chkOp(op, x == y, x < y)
}

func chkOp(op string, eq, less bool) (bool, error) {
	switch op {
	case "=":
		return eq, nil
	case "!=":
		return !eq, nil
	case "<":
		return less && !eq, nil
	case "<=":
		return less || eq, nil
	case ">":
		return !less && !eq, nil
	case ">=":
		return !less || eq, nil
	}
	return false, fmt.Errorf("unknown operation %q", op)
}

// distance: |measured − reference| within [minDistance, maxDistance] for every pair.
func (c *chk) distance(r map[string]any) []string {
	vals, err := c.measure(r)
	if err != nil {
		return []string{err.Error()}
	}
	refs, has, err := c.reference(r)
	if err != nil || !has {
		return []string{fmt.Sprintf("distance without a usable referenceValue (%v)", err)}
	}
	lo, hasLo := chkNum(r["minDistance"])
	hi, hasHi := chkNum(r["maxDistance"])
	bounds := chkBounds("Distance", lo, hasLo, hi, hasHi)
	var out []string
	for _, v := range vals {
		for _, ref := range refs {
			x, y, ok := chkBothNums(v, ref)
			if !ok {
				return []string{fmt.Sprintf("distance between %s and %s, not numbers", chkFmt(v), chkFmt(ref))}
			}
			if d := math.Abs(x - y); (hasLo && chkLess(d, lo)) || (hasHi && chkLess(hi, d)) {
				out = append(out, fmt.Sprintf("%s value %s is %s from reference %s, %s",
					chkWho(v), chkFmt(v), chkG(d), chkFmt(ref), bounds))
			}
		}
	}
	return out
}

// chkColl is one collection of a collection rule.
type chkColl struct {
	v   chkVal // the first value; party counts the players combined
	set []string
}

// collection: intersection, contains or reference_intersection_count, bounded by
// minCount/maxCount.
func (c *chk) collection(r map[string]any) []string {
	colls, err := c.collections(r)
	if err != nil {
		return []string{err.Error()}
	}
	lo, hasLo := chkNum(r["minCount"])
	hi, hasHi := chkNum(r["maxCount"])
	within := func(n int) bool { f := float64(n); return !(hasLo && f < lo) && !(hasHi && f > hi) }
	bounds := chkBounds("Count", lo, hasLo, hi, hasHi)
	switch op := chkStr(r["operation"]); op {
	case "intersection":
		return chkIntersectionCount(colls, within, bounds)
	case "contains", "reference_intersection_count":
		refs, err := c.refStrings(r)
		if err != nil {
			return []string{err.Error()}
		}
		if op == "contains" {
			return chkContains(colls, refs, within, bounds)
		}
		return chkRefIntersection(colls, refs, within, bounds)
	default:
		return []string{fmt.Sprintf("unknown collection operation %q", op)}
	}
}

func chkIntersectionCount(colls []chkColl, within func(int) bool, bounds string) []string {
	sets := make([][]string, len(colls))
	for i, cl := range colls {
		sets[i] = cl.set
	}
	if n := len(chkIntersect(sets)); !within(n) {
		return []string{fmt.Sprintf("%d values are common to all %d lists, %s", n, len(colls), bounds)}
	}
	return nil
}

func chkContains(colls []chkColl, refs []string, within func(int) bool, bounds string) []string {
	n := 0
	for _, cl := range colls {
		if len(chkIntersect([][]string{refs, cl.set})) == len(refs) {
			n++ // the list holds every reference string
		}
	}
	if !within(n) {
		return []string{fmt.Sprintf("%d lists contain %s, %s", n, chkQuote(refs), bounds)}
	}
	return nil
}

func chkRefIntersection(colls []chkColl, refs []string, within func(int) bool, bounds string) []string {
	var out []string
	for _, cl := range colls {
		if n := len(chkIntersect([][]string{cl.set, refs})); !within(n) {
			out = append(out, fmt.Sprintf("%s list %s shares %d values with reference %s, %s",
				chkWho(cl.v), chkQuote(cl.set), n, chkQuote(refs), bounds))
		}
	}
	return out
}

// collections evaluates the measurements into collections, party-aggregated by union
// (default) or intersection.
func (c *chk) collections(r map[string]any) ([]chkColl, error) {
	var vals []chkVal
	for _, m := range chkList(r["measurements"]) {
		e, err := chkParseExpr(chkStr(m))
		if err != nil {
			return nil, err
		}
		v, err := c.eval(e)
		if err != nil {
			return nil, err
		}
		vals = append(vals, chkColls(v)...)
	}
	return chkPartyColls(vals, chkStr(r["partyAggregation"]))
}

// chkColls splits a measurement's value into collections: player-level values each, a
// computed list of strings as one.
func chkColls(v chkVal) []chkVal {
	switch {
	case v.kind == 0:
		return nil
	case v.kind != 'l' || v.mp != nil:
		return []chkVal{v}
	case v.team == "" && chkAllStrings(v.items):
		return []chkVal{v}
	}
	var out []chkVal
	for _, it := range v.items {
		out = append(out, chkColls(it)...)
	}
	return out
}

func chkAllStrings(items []chkVal) bool {
	for _, it := range items {
		if it.kind != 's' || it.mp != nil {
			return false
		}
	}
	return true
}

func chkPartyColls(vals []chkVal, agg string) ([]chkColl, error) {
	var out []chkColl
	index := map[string]int{}
	for _, v := range vals {
		set, err := chkToSet(v)
		if err != nil {
			return nil, err
		}
		if v.mp == nil {
			out = append(out, chkColl{v: v, set: set})
			continue
		}
		i, ok := index[chkGroup(v)]
		if !ok {
			v.party = 1
			index[chkGroup(v)] = len(out)
			out = append(out, chkColl{v: v, set: set})
			continue
		}
		out[i].v.party++
		out[i].set = chkUnionOrIntersection(agg, out[i].set, set)
	}
	return out, nil
}

func chkUnionOrIntersection(agg string, a, b []string) []string {
	if agg == "intersection" {
		return chkIntersect([][]string{a, b})
	}
	return chkDistinct(append(append([]string(nil), a...), b...))
}

// refStrings is the reference value as a list of strings.
func (c *chk) refStrings(r map[string]any) ([]string, error) {
	refs, has, err := c.reference(r)
	if err != nil || !has {
		return nil, fmt.Errorf("collection without a usable referenceValue (%v)", err)
	}
	var out []string
	for _, v := range refs {
		set, err := chkToSet(v)
		if err != nil {
			return nil, err
		}
		out = append(out, set...)
	}
	return chkDistinct(out), nil
}

// batchDistance: every group's (party-aggregated) number within maxDistance of every other,
// or every player's string the same.
func (c *chk) batchDistance(r map[string]any) []string {
	attr := chkStr(r["batchAttribute"])
	var vals []chkVal
	var err error
	c.eachPlayer(func(mp *MatchPlayer, team string) {
		v, ok := c.attr(mp.Player, attr)
		if !ok || err != nil {
			return
		}
		cv, e := chkFromValue(v, attr)
		cv.mp, cv.team, err = mp, team, e
		vals = append(vals, cv)
	})
	if err != nil {
		return []string{err.Error()}
	}
	vals = chkParty(vals, chkStr(r["partyAggregation"]))
	if len(vals) < 2 {
		return nil
	}
	if vals[0].kind == 'n' {
		maxD, _ := chkNum(r["maxDistance"]) // no maxDistance: the numbers must be equal
		return chkSpread(vals, maxD)
	}
	return chkAcross(vals, "=")
}

// chkSpread reports the lowest and highest numbers when they are more than maxD apart.
func chkSpread(vals []chkVal, maxD float64) []string {
	lo, hi := vals[0], vals[0]
	for _, v := range vals {
		if v.kind != 'n' {
			return []string{fmt.Sprintf("batchDistance over %s, not a number", chkFmt(v))}
		}
		if v.n < lo.n {
			lo = v
		}
		if v.n > hi.n {
			hi = v
		}
	}
	if d := hi.n - lo.n; chkLess(maxD, d) {
		return []string{fmt.Sprintf("%s value %s and %s value %s are %s apart, maxDistance %s",
			chkWho(lo), chkFmt(lo), chkWho(hi), chkFmt(hi), chkG(d), chkG(maxD))}
	}
	return nil
}

// ---- Latency ----

// latency holds when some region every player reported suits every player.
func (c *chk) latency(r map[string]any) []string {
	regions, missing := c.sharedRegions()
	if len(missing) > 0 {
		return missing
	}
	var whys []string
	for _, region := range regions {
		why := c.regionFails(r, region)
		if why == "" {
			return nil
		}
		whys = append(whys, region+": "+why)
	}
	if len(regions) == 0 {
		if c.playerCount() == 0 {
			return nil
		}
		return []string{"no region is reported by every player"}
	}
	return []string{"no region suits every player (" + strings.Join(whys, "; ") + ")"}
}

// sharedRegions lists, sorted, the regions every team player reported, and the players who
// reported none.
func (c *chk) sharedRegions() ([]string, []string) {
	counts, players := map[string]int{}, 0
	var missing []string
	c.eachPlayer(func(mp *MatchPlayer, _ string) {
		players++
		if len(mp.Player.Latency) == 0 {
			missing = append(missing, fmt.Sprintf("player %s reports no latency", mp.Player.ID))
		}
		for region := range mp.Player.Latency {
			counts[region]++
		}
	})
	var out []string
	for region, n := range counts {
		if n == players {
			out = append(out, region)
		}
	}
	sort.Strings(out)
	return out, missing
}

func (c *chk) playerCount() int {
	n := 0
	c.eachPlayer(func(*MatchPlayer, string) { n++ })
	return n
}

// regionFails says why rule r does not hold in region; "" when it does.
func (c *chk) regionFails(r map[string]any, region string) string {
	maxLat, hasMax := chkNum(r["maxLatency"])
	var vals []chkVal
	why := ""
	c.eachPlayer(func(mp *MatchPlayer, team string) {
		l := float64(mp.Player.Latency[region])
		if hasMax && l > maxLat && why == "" {
			why = fmt.Sprintf("player %s latency %s > maxLatency %s", mp.Player.ID, chkG(l), chkG(maxLat))
		}
		vals = append(vals, chkVal{kind: 'n', n: l, mp: mp, team: team})
	})
	maxD, hasD := chkNum(r["maxDistance"])
	if why != "" || !hasD || len(vals) == 0 {
		return why
	}
	vals = chkParty(vals, chkStr(r["partyAggregation"]))
	refName := chkStr(r["distanceReference"])
	if refName != "avg" {
		refName = "min"
	}
	nums := make([]float64, len(vals))
	for i, v := range vals {
		nums[i] = v.n
	}
	ref := chkStat(refName, nums)
	for _, v := range vals {
		if d := math.Abs(v.n - ref); chkLess(maxD, d) {
			return fmt.Sprintf("%s latency %s is %s from the %s %s, maxDistance %s",
				chkWho(v), chkFmt(v), chkG(d), refName, chkG(ref), chkG(maxD))
		}
	}
	return ""
}

// checkRegions checks m.Regions against the latency rules enforced on their own: not empty,
// every listed region suits every rule, none missing, best (lowest worst latency) first.
func (c *chk) checkRegions() {
	var lat []map[string]any
	anyLatency := false
	for _, r := range c.rules {
		if chkStr(r["type"]) == "latency" {
			anyLatency = true
			if !c.inStatement[chkStr(r["name"])] {
				lat = append(lat, r)
			}
		}
	}
	switch {
	case !anyLatency && len(c.m.Regions) > 0:
		c.fail("Regions %v is set but the rule set has no latency rule", c.m.Regions)
	case len(lat) == 0:
	case len(c.m.Regions) == 0:
		c.fail("Regions is empty but the rule set has latency rules")
	default:
		c.checkRegionList(lat)
	}
}

func (c *chk) checkRegionList(lat []map[string]any) {
	regions, _ := c.sharedRegions()
	listed, prev := map[string]bool{}, math.Inf(-1)
	for _, region := range c.m.Regions {
		if listed[region] {
			c.fail("region %s is listed twice in Regions", region)
			continue
		}
		listed[region] = true
		if !chkContainsStr(regions, region) {
			c.fail("region %s in Regions is not reported by every player", region)
			continue
		}
		for _, r := range lat {
			if why := c.regionFails(r, region); why != "" {
				c.fail("region %s in Regions fails rule %q: %s", region, chkStr(r["name"]), why)
			}
		}
		if worst := c.worstLatency(region); worst < prev {
			c.fail("Regions are not best first: %s (worst latency %s) follows one with %s", region, chkG(worst), chkG(prev))
		} else {
			prev = worst
		}
	}
	for _, region := range regions {
		if !listed[region] && c.regionSuits(lat, region) {
			c.fail("region %s suits every latency rule but is missing from Regions", region)
		}
	}
}

func (c *chk) regionSuits(lat []map[string]any, region string) bool {
	for _, r := range lat {
		if c.regionFails(r, region) != "" {
			return false
		}
	}
	return true
}

func (c *chk) worstLatency(region string) float64 {
	worst := 0.0
	c.eachPlayer(func(mp *MatchPlayer, _ string) {
		worst = math.Max(worst, float64(mp.Player.Latency[region]))
	})
	return worst
}

// ---- Compound rules ----

// chkStmt is a compound statement: an operator over statements, or a rule name.
type chkStmt struct {
	op   string
	args []*chkStmt
	rule string
}

// chkParseStmt parses a statement such as or(and(A, B), not(C)).
func chkParseStmt(s string) (*chkStmt, error) {
	st, rest, err := chkParseStmtAt(s)
	if err == nil && strings.TrimSpace(rest) != "" {
		err = fmt.Errorf("statement %q: unexpected %q", s, rest)
	}
	return st, err
}

func chkParseStmtAt(s string) (*chkStmt, string, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexAny(s, "(),")
	if i < 0 {
		i = len(s)
	}
	word := strings.TrimSpace(s[:i])
	if word == "" {
		return nil, "", fmt.Errorf("statement: a name is missing before %q", s)
	}
	if i == len(s) || s[i] != '(' {
		return &chkStmt{rule: word}, s[i:], nil
	}
	st, rest := &chkStmt{op: word}, s[i+1:]
	for {
		arg, r, err := chkParseStmtAt(rest)
		if err != nil {
			return nil, "", err
		}
		st.args = append(st.args, arg)
		r = strings.TrimSpace(r)
		switch {
		case strings.HasPrefix(r, ")"):
			return st, r[1:], nil
		case strings.HasPrefix(r, ","):
			rest = r[1:]
		default:
			return nil, "", fmt.Errorf("statement: missing ) in %q", s)
		}
	}
}

// names adds the rules the statement names to set.
func (st *chkStmt) names(set map[string]bool) {
	if st.op == "" {
		set[st.rule] = true
	}
	for _, a := range st.args {
		a.names(set)
	}
}

// compound evaluates the statement over the named rules' verdicts.
func (c *chk) compound(r map[string]any, depth int) []string {
	if depth > 8 {
		return []string{"compound statements nest too deeply"}
	}
	text := chkStr(r["statement"])
	st, err := chkParseStmt(text)
	if err != nil {
		return []string{err.Error()}
	}
	verdicts := map[string]bool{}
	ok, err := c.evalStmt(st, depth, verdicts)
	switch {
	case err != nil:
		return []string{err.Error()}
	case ok:
		return nil
	}
	var parts []string
	for _, name := range chkKeys(verdicts) {
		parts = append(parts, fmt.Sprintf("%s=%t", name, verdicts[name]))
	}
	return []string{fmt.Sprintf("statement %s is false (%s)", text, strings.Join(parts, ", "))}
}

func (c *chk) evalStmt(st *chkStmt, depth int, verdicts map[string]bool) (bool, error) {
	if st.op == "" {
		r := c.byName[st.rule]
		if r == nil {
			return false, fmt.Errorf("statement names unknown rule %q", st.rule)
		}
		ok := len(c.evalRule(r, depth+1)) == 0
		verdicts[st.rule] = ok
		return ok, nil
	}
	held := 0
	for _, a := range st.args {
		ok, err := c.evalStmt(a, depth, verdicts)
		if err != nil {
			return false, err
		}
		if ok {
			held++
		}
	}
	switch st.op {
	case "and":
		return held == len(st.args), nil
	case "or":
		return held > 0, nil
	case "xor":
		return held == 1, nil
	case "not":
		if len(st.args) != 1 {
			return false, fmt.Errorf("not takes one statement, has %d", len(st.args))
		}
		return held == 0, nil
	}
	return false, fmt.Errorf("unknown statement operator %q", st.op)
}

// ---- Small helpers ----

// chkNum reads a JSON number or a numeric string.
func chkNum(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		n, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		return n, err == nil
	}
	return 0, false
}

func chkStr(v any) string {
	s, _ := v.(string)
	return s
}

// chkList reads a value that may be one item or a list of items.
func chkList(v any) []any {
	switch x := v.(type) {
	case nil:
		return nil
	case []any:
		return x
	}
	return []any{v}
}

func chkObjs(v any) []map[string]any {
	var out []map[string]any
	for _, it := range chkList(v) {
		if m, ok := it.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// chkSplit splits "a, b" into trimmed names.
func chkSplit(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func chkKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func chkContainsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// chkToSet reads a collection: a list of strings, or one string.
func chkToSet(v chkVal) ([]string, error) {
	switch v.kind {
	case 's':
		return []string{v.s}, nil
	case 'n':
		return []string{chkText(v)}, nil
	case 'l':
		var out []string
		for _, it := range v.items {
			if it.kind != 's' {
				return nil, fmt.Errorf("%s is not a list of strings", chkFmt(v))
			}
			out = append(out, it.s)
		}
		return chkDistinct(out), nil
	}
	return nil, fmt.Errorf("%s is not a collection", chkFmt(v))
}

// chkIntersect is the distinct strings found in every set, in the first set's order.
func chkIntersect(sets [][]string) []string {
	if len(sets) == 0 {
		return nil
	}
	var out []string
	for _, s := range chkDistinct(sets[0]) {
		in := true
		for _, other := range sets[1:] {
			in = in && chkContainsStr(other, s)
		}
		if in {
			out = append(out, s)
		}
	}
	return out
}

func chkDistinct(list []string) []string {
	seen, out := map[string]bool{}, []string{}
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// chkBothNums reads both values as numbers (numbers or numeric strings).
func chkBothNums(a, b chkVal) (float64, float64, bool) {
	x, ok1 := chkAsNum(a)
	y, ok2 := chkAsNum(b)
	return x, y, ok1 && ok2
}

func chkAsNum(v chkVal) (float64, bool) {
	switch v.kind {
	case 'n':
		return v.n, true
	case 's':
		return chkNum(v.s)
	}
	return 0, false
}

func chkClose(a, b float64) bool {
	return math.Abs(a-b) <= chkEps*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// chkLess is a < b beyond the tolerance.
func chkLess(a, b float64) bool { return a < b && !chkClose(a, b) }

func chkG(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func chkText(v chkVal) string {
	if v.kind == 'n' && v.s == "" {
		return chkG(v.n)
	}
	return v.s
}

func chkBounds(what string, lo float64, hasLo bool, hi float64, hasHi bool) string {
	var parts []string
	if hasLo {
		parts = append(parts, "min"+what+" "+chkG(lo))
	}
	if hasHi {
		parts = append(parts, "max"+what+" "+chkG(hi))
	}
	return strings.Join(parts, ", ")
}

func chkQuote(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// chkFmt writes a value for a problem report.
func chkFmt(v chkVal) string {
	switch v.kind {
	case 'n':
		return chkG(v.n)
	case 's':
		return strconv.Quote(v.s)
	case 'p':
		if v.mp == nil {
			return "a player"
		}
		return "player " + v.mp.Player.ID
	case 'l':
		parts := make([]string, len(v.items))
		for i, it := range v.items {
			parts[i] = chkFmt(it)
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "none"
}

// chkWho names what a value belongs to.
func chkWho(v chkVal) string {
	switch {
	case v.mp != nil && v.party > 1:
		return fmt.Sprintf("ticket %s on team %s (%d players aggregated)", v.mp.Ticket.ID, v.team, v.party)
	case v.mp != nil:
		return "player " + v.mp.Player.ID
	case v.team != "":
		return "team " + v.team
	}
	return "match"
}

// ---- Tests of the checker itself ----

// chkN, chkS and chkSL are attribute values.
func chkN(n float64) Value                  { return Value{Type: TypeNumber, N: n} }
func chkS(s string) Value                   { return Value{Type: TypeString, S: s} }
func chkSL(s ...string) Value               { return Value{Type: TypeStringList, SL: s} }
func chkTk(id string, ps ...Player) *Ticket { return &Ticket{ID: id, Players: ps} }

// chkPl is a player with attributes given as name, value pairs.
func chkPl(id string, kv ...any) Player {
	p := Player{ID: id, Attributes: map[string]Value{}}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Attributes[kv[i].(string)] = kv[i+1].(Value)
	}
	return p
}

// chkLat is a player with latencies given as region, milliseconds pairs.
func chkLat(id string, kv ...any) Player {
	p := Player{ID: id, Latency: map[string]int{}}
	for i := 0; i+1 < len(kv); i += 2 {
		p.Latency[kv[i].(string)] = kv[i+1].(int)
	}
	return p
}

// chkTeamsOf lists match teams of distinct definitions, in order.
func chkTeamsOf(names ...string) []MatchTeam {
	out := make([]MatchTeam, len(names))
	for i, n := range names {
		out[i] = MatchTeam{Name: n, Definition: i}
	}
	return out
}

// chkBuild makes a match of tickets; place gives each player's team by player ID.
func chkBuild(teams []MatchTeam, place map[string]string, tickets ...*Ticket) *Match {
	m := &Match{Tickets: tickets, Teams: teams}
	for _, t := range tickets {
		for i := range t.Players {
			for j := range m.Teams {
				if m.Teams[j].Name == place[t.Players[i].ID] {
					m.Teams[j].Players = append(m.Teams[j].Players, MatchPlayer{Ticket: t, Player: &t.Players[i]})
				}
			}
		}
	}
	return m
}

// chkExpect wants exactly one problem containing each of wants, and no other problems.
func chkExpect(t *testing.T, probs []string, wants ...string) {
	t.Helper()
	all := "\n  " + strings.Join(probs, "\n  ")
	if len(probs) != len(wants) {
		t.Errorf("got %d problems, want %d %q:%s", len(probs), len(wants), wants, all)
	}
	for _, w := range wants {
		found := false
		for _, p := range probs {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem mentions %q:%s", w, all)
		}
	}
}

const chkTwoTeams = `{"ruleLanguageVersion": "1.0",
	"teams": [{"name": "red", "minPlayers": 2, "maxPlayers": 3},
	          {"name": "blue", "minPlayers": 2, "maxPlayers": 3}]}`

// chkFour is a party of two and two solo players.
func chkFour() []*Ticket {
	return []*Ticket{chkTk("a", chkPl("p1"), chkPl("p2")), chkTk("b", chkPl("p3")), chkTk("c", chkPl("p4"))}
}

func TestCheckerStructure(t *testing.T) {
	ok := map[string]string{"p1": "red", "p2": "red", "p3": "blue", "p4": "blue"}
	cases := []struct {
		name  string
		match func() *Match
		wants []string
	}{
		{"valid", func() *Match { return chkBuild(chkTeamsOf("red", "blue"), ok, chkFour()...) }, nil},
		{"missing team", func() *Match {
			return chkBuild(chkTeamsOf("red"), map[string]string{"p1": "red", "p2": "red"}, chkFour()...)
		}, []string{`team "blue" is missing`, "player p3 of ticket b is on no team", "player p4 of ticket c is on no team"}},
		{"team too small", func() *Match {
			return chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "red", "p3": "red", "p4": "blue"}, chkFour()...)
		}, []string{`team "blue" has 1 players, wants 2 to 3`}},
		{"party split", func() *Match {
			return chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "blue", "p3": "red", "p4": "blue"}, chkFour()...)
		}, []string{"ticket a is split across teams blue, red"}},
		{"player twice", func() *Match {
			m := chkBuild(chkTeamsOf("red", "blue"), ok, chkFour()...)
			m.Teams[1].Players = append(m.Teams[1].Players, m.Teams[0].Players[0])
			return m
		}, []string{"player p1 is placed twice (teams red and blue)"}},
		{"ticket twice", func() *Match {
			m := chkBuild(chkTeamsOf("red", "blue"), ok, chkFour()...)
			m.Tickets = append(m.Tickets, m.Tickets[0])
			return m
		}, []string{"ticket a appears twice"}},
		{"unknown team", func() *Match {
			return chkBuild(append(chkTeamsOf("red", "blue"), MatchTeam{Name: "green"}), ok, chkFour()...)
		}, []string{`team "green" is not a team`}},
		{"foreign player", func() *Match {
			m := chkBuild(chkTeamsOf("red", "blue"), ok, chkFour()...)
			x := chkTk("x", chkPl("p9"))
			m.Teams[1].Players = append(m.Teams[1].Players, MatchPlayer{Ticket: x, Player: &x.Players[0]})
			return m
		}, []string{"player p9 on team blue is not a player of ticket x"}},
		{"order", func() *Match {
			return chkBuild([]MatchTeam{{Name: "blue", Definition: 1}, {Name: "red"}}, ok, chkFour()...)
		}, []string{"teams are not in declaration order"}},
		{"definition", func() *Match {
			return chkBuild([]MatchTeam{{Name: "red"}, {Name: "blue"}}, ok, chkFour()...)
		}, []string{`team "blue" has Definition 0, want 1`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			chkExpect(t, checkMatch([]byte(chkTwoTeams), tc.match()), tc.wants...)
		})
	}
}

func TestCheckerTooManyPlayers(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0", "teams": [{"name": "big", "minPlayers": 1, "maxPlayers": 250}]}`
	var tickets []*Ticket
	place := map[string]string{}
	for i := range 201 {
		id := fmt.Sprintf("p%d", i)
		tickets = append(tickets, chkTk("t"+id, chkPl(id)))
		place[id] = "big"
	}
	chkExpect(t, checkMatch([]byte(body), chkBuild(chkTeamsOf("big"), place, tickets...)),
		"the match has 201 players, more than 200")
	chkExpect(t, checkMatch([]byte(body), chkBuild(chkTeamsOf("big"), place, tickets[:200]...)))
}

func TestCheckerBackfill(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 3},
		          {"name": "blue", "minPlayers": 1, "maxPlayers": 3}]}`
	backfill := func() *Ticket {
		bf := chkTk("bf", chkPl("x1"), chkPl("x2"))
		bf.Backfill, bf.Players[0].Team, bf.Players[1].Team = true, "red", "blue"
		return bf
	}
	place := map[string]string{"x1": "red", "x2": "blue", "p1": "red", "p2": "blue"}
	t.Run("valid", func(t *testing.T) {
		m := chkBuild(chkTeamsOf("red", "blue"), place, backfill(), chkTk("a", chkPl("p1")), chkTk("b", chkPl("p2")))
		chkExpect(t, checkMatch([]byte(body), m))
	})
	t.Run("wrong team", func(t *testing.T) {
		moved := map[string]string{"x1": "red", "x2": "red", "p1": "blue", "p2": "blue"}
		m := chkBuild(chkTeamsOf("red", "blue"), moved, backfill(), chkTk("a", chkPl("p1")), chkTk("b", chkPl("p2")))
		chkExpect(t, checkMatch([]byte(body), m), "backfill player x2 is on team red, not its team blue")
	})
	t.Run("two backfills", func(t *testing.T) {
		other := chkTk("bf2", chkPl("p1"))
		other.Backfill, other.Players[0].Team = true, "red"
		m := chkBuild(chkTeamsOf("red", "blue"), place, backfill(), other)
		chkExpect(t, checkMatch([]byte(body), m), "2 backfill tickets", "backfill ticket bf2 is not first")
	})
	t.Run("not first", func(t *testing.T) {
		m := chkBuild(chkTeamsOf("red", "blue"), place, chkTk("a", chkPl("p1")), backfill())
		chkExpect(t, checkMatch([]byte(body), m), "backfill ticket bf is not first")
	})
}

func TestCheckerQuantityTeams(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "trio", "minPlayers": 1, "maxPlayers": 2, "quantity": 3}],
		"rules": [{"name": "CloseTeamSizes", "type": "distance",
		           "measurements": ["max(count(teams[*].players))"],
		           "referenceValue": "min(count(teams[trio].players))", "maxDistance": 1}]}`
	trios := func(n int) []MatchTeam {
		out := make([]MatchTeam, n)
		for i := range out {
			out[i] = MatchTeam{Name: fmt.Sprintf("trio_%d", i+1)}
		}
		return out
	}
	tickets := func() []*Ticket {
		return []*Ticket{chkTk("a", chkPl("p1"), chkPl("p2")), chkTk("b", chkPl("p3")), chkTk("c", chkPl("p4"))}
	}
	place := map[string]string{"p1": "trio_1", "p2": "trio_1", "p3": "trio_2", "p4": "trio_3"}
	chkExpect(t, checkMatch([]byte(body), chkBuild(trios(3), place, tickets()...)))

	short := chkBuild(trios(2), place, tickets()[:2]...)
	chkExpect(t, checkMatch([]byte(body), short), `team "trio_3" is missing`,
		`rule "CloseTeamSizes": match value 2 is 2 from reference 0, maxDistance 1`)

	bare := chkBuild([]MatchTeam{{Name: "trio"}, {Name: "trio_2"}, {Name: "trio_3"}},
		map[string]string{"p1": "trio", "p2": "trio", "p3": "trio_2", "p4": "trio_3"}, tickets()...)
	// trio_1 counts as empty: sizes 0, 1, 1 are still within 1 of each other.
	chkExpect(t, checkMatch([]byte(body), bare), `team "trio" is not a team`, `team "trio_1" is missing`)
}

func TestCheckerTeamExpansions(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "red", "minPlayers": 3, "maxPlayers": 3},
		          {"name": "blue", "minPlayers": 3, "maxPlayers": 3}],
		"expansions": [{"target": "teams[red, blue].minPlayers",
		                "steps": [{"waitTimeSeconds": 10, "value": 2}, {"waitTimeSeconds": 20, "value": "1"}]}]}`
	match := func(age time.Duration, place map[string]string) *Match {
		tickets := []*Ticket{chkTk("a", chkPl("p1")), chkTk("b", chkPl("p2")), chkTk("c", chkPl("p3"))}
		if len(place) == 4 {
			tickets = append(tickets, chkTk("d", chkPl("p4")))
		}
		m := chkBuild(chkTeamsOf("red", "blue"), place, tickets...)
		m.ExpansionAge = age
		return m
	}
	twoTwo := map[string]string{"p1": "red", "p2": "red", "p3": "blue", "p4": "blue"}
	twoOne := map[string]string{"p1": "red", "p2": "red", "p3": "blue"}
	chkExpect(t, checkMatch([]byte(body), match(9*time.Second, twoTwo)),
		`team "red" has 2 players, wants 3 to 3`, `team "blue" has 2 players, wants 3 to 3`)
	chkExpect(t, checkMatch([]byte(body), match(10*time.Second, twoTwo)))
	chkExpect(t, checkMatch([]byte(body), match(19*time.Second, twoOne)), `team "blue" has 1 players, wants 2 to 3`)
	chkExpect(t, checkMatch([]byte(body), match(25*time.Second, twoOne)))
}

func TestCheckerAttributes(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number", "default": 10},
		                     {"name": "mode", "type": "string"}],
		"teams": [{"name": "solo", "minPlayers": 2, "maxPlayers": 2}],
		"rules": [{"name": "MinSkill", "type": "comparison", "operation": ">=",
		           "measurements": "teams[solo].players.attributes[skill]", "referenceValue": 10}]}`
	match := func(p1, p2 Player) *Match {
		return chkBuild(chkTeamsOf("solo"), map[string]string{"p1": "solo", "p2": "solo"}, chkTk("a", p1), chkTk("b", p2))
	}
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkS("x")), chkPl("p2", "mode", chkS("y"), "skill", chkN(12)))))
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkS("x")), chkPl("p2", "skill", chkN(12)))),
		"player p2 lacks attribute mode, which has no default")
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkS("x"), "skill", chkN(9)), chkPl("p2", "mode", chkS("y")))),
		`rule "MinSkill": player p1 value 9 is not >= 10`)
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkN(3)), chkPl("p2", "mode", chkS("y")))),
		"player p1 attribute mode is a number, declared string")
}

func TestCheckerComparison(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number", "default": 10},
		                     {"name": "wantsMonster", "type": "number", "default": 0},
		                     {"name": "desired", "type": "number", "default": 10}],
		"teams": [{"name": "hunters", "minPlayers": 1, "maxPlayers": 4},
		          {"name": "monster", "minPlayers": 1, "maxPlayers": 1}],
		"rules": [
		  {"name": "MonsterWants", "type": "comparison", "operation": "=", "referenceValue": 1,
		   "measurements": ["teams[monster].players.attributes[wantsMonster]"]},
		  {"name": "HuntersDont", "type": "comparison", "operation": "=", "referenceValue": "0",
		   "measurements": ["team[hunters].players.attributes[wantsMonster]"]},
		  {"name": "MonsterStrong", "type": "comparison", "operation": ">=",
		   "measurements": ["avg(teams[monster].players.attributes[skill])"],
		   "referenceValue": "max(teams[hunters].players.attributes[desired])"}]}`
	match := func(hunters *Ticket, monster Player) *Match {
		place := map[string]string{"m1": "monster"}
		for _, p := range hunters.Players {
			place[p.ID] = "hunters"
		}
		return chkBuild(chkTeamsOf("hunters", "monster"), place, hunters, chkTk("m", monster))
	}
	party := func(wants2 float64) *Ticket {
		return chkTk("hp", chkPl("h1", "desired", chkN(20)), chkPl("h2", "desired", chkN(15), "wantsMonster", chkN(wants2)))
	}
	strong := chkPl("m1", "wantsMonster", chkN(1), "skill", chkN(25))
	chkExpect(t, checkMatch([]byte(body), match(party(0), strong)))
	chkExpect(t, checkMatch([]byte(body), match(party(0), chkPl("m1", "skill", chkN(25)))),
		`rule "MonsterWants": player m1 value 0 is not = 1`)
	chkExpect(t, checkMatch([]byte(body), match(party(0), chkPl("m1", "wantsMonster", chkN(1), "skill", chkN(18)))),
		`rule "MonsterStrong": team monster value 18 is not >= 20`)
	// The party's values 0 and 1 are aggregated (avg) into one value 0.5.
	chkExpect(t, checkMatch([]byte(body), match(party(1), strong)),
		`rule "HuntersDont": ticket hp on team hunters (2 players aggregated) value 0.5 is not = 0`)
}

func TestCheckerPartyAggregation(t *testing.T) {
	const body = `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}],
		"teams": [{"name": "all", "minPlayers": 1, "maxPlayers": 4}],
		"rules": [{"name": "Skilled", "type": "comparison", "operation": ">=", "referenceValue": 15,
		           "measurements": "flatten(teams[*].players.attributes[skill])", "partyAggregation": "%s"}]}`
	match := func() *Match {
		return chkBuild(chkTeamsOf("all"), map[string]string{"p1": "all", "p2": "all", "p3": "all"},
			chkTk("a", chkPl("p1", "skill", chkN(10)), chkPl("p2", "skill", chkN(30))), chkTk("b", chkPl("p3", "skill", chkN(16))))
	}
	for agg, wants := range map[string][]string{
		"":    nil, // avg 20
		"avg": nil,
		"max": nil, // 30
		"min": {`rule "Skilled": ticket a on team all (2 players aggregated) value 10 is not >= 15`},
	} {
		t.Run(agg, func(t *testing.T) {
			chkExpect(t, checkMatch(fmt.Appendf(nil, body, agg), match()), wants...)
		})
	}
}

func TestCheckerComparisonAcross(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "mode", "type": "string"}, {"name": "hero", "type": "number"}],
		"teams": [{"name": "player", "minPlayers": 1, "maxPlayers": 1, "quantity": 2}],
		"rules": [
		  {"name": "SameMode", "type": "comparison", "operation": "=",
		   "measurements": ["flatten(teams[*].players.attributes[mode])"]},
		  {"name": "DifferentHero", "type": "comparison", "operation": "!=",
		   "measurements": ["flatten(teams[player].players.attributes[hero])"]}]}`
	match := func(p1, p2 Player) *Match {
		teams := []MatchTeam{{Name: "player_1"}, {Name: "player_2"}}
		return chkBuild(teams, map[string]string{"p1": "player_1", "p2": "player_2"}, chkTk("a", p1), chkTk("b", p2))
	}
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkS("ctf"), "hero", chkN(1)), chkPl("p2", "mode", chkS("ctf"), "hero", chkN(2)))))
	chkExpect(t, checkMatch([]byte(body), match(chkPl("p1", "mode", chkS("ctf"), "hero", chkN(1)), chkPl("p2", "mode", chkS("dm"), "hero", chkN(1)))),
		`rule "SameMode": player p2 value "dm" differs from player p1 value "ctf"`,
		`rule "DifferentHero": player p1 and player p2 both have value 1`)
}

func TestCheckerEqualTeamSizes(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 3}, {"name": "blue", "minPlayers": 1, "maxPlayers": 3}],
		"rules": [{"name": "EqualTeamSizes", "type": "comparison", "operation": "=",
		           "measurements": ["count(teams[red].players)"], "referenceValue": "count(teams[blue].players)"}]}`
	chkExpect(t, checkMatch([]byte(body), chkBuild(chkTeamsOf("red", "blue"),
		map[string]string{"p1": "red", "p2": "red", "p3": "blue", "p4": "blue"}, chkFour()...)))
	chkExpect(t, checkMatch([]byte(body), chkBuild(chkTeamsOf("red", "blue"),
		map[string]string{"p1": "red", "p2": "red", "p3": "blue"}, chkFour()[:2]...)),
		`rule "EqualTeamSizes": team red value 2 is not = 1`)
}

func TestCheckerDistanceExpansion(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}],
		"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 4}, {"name": "blue", "minPlayers": 1, "maxPlayers": 4}],
		"rules": [{"name": "FairSkill", "type": "distance", "maxDistance": 10,
		           "measurements": ["avg(teams[*].players.attributes[skill])"],
		           "referenceValue": "avg(flatten(teams[*].players.attributes[skill]))"}],
		"expansions": [{"target": "rules[FairSkill].maxDistance",
		                "steps": [{"waitTimeSeconds": 5, "value": 20}, {"waitTimeSeconds": 15, "value": "100"}]}]}`
	match := func(age time.Duration, red1, red2 float64) *Match {
		m := chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "red", "p3": "blue", "p4": "blue"},
			chkTk("a", chkPl("p1", "skill", chkN(red1))), chkTk("b", chkPl("p2", "skill", chkN(red2))),
			chkTk("c", chkPl("p3", "skill", chkN(10))), chkTk("d", chkPl("p4", "skill", chkN(15))))
		m.ExpansionAge = age
		return m
	}
	// Team averages 37.5 and 12.5 against the match average 25.
	chkExpect(t, checkMatch([]byte(body), match(4900*time.Millisecond, 30, 45)),
		`rule "FairSkill": team red value 37.5 is 12.5 from reference 25, maxDistance 10`,
		`rule "FairSkill": team blue value 12.5 is 12.5 from reference 25, maxDistance 10`)
	chkExpect(t, checkMatch([]byte(body), match(5*time.Second, 30, 45)))
	// Team averages 67.5 and 12.5 against 40: 27.5 apart.
	chkExpect(t, checkMatch([]byte(body), match(14*time.Second, 60, 75)),
		`team red value 67.5 is 27.5 from reference 40, maxDistance 20`,
		`team blue value 12.5 is 27.5 from reference 40, maxDistance 20`)
	chkExpect(t, checkMatch([]byte(body), match(15*time.Second, 60, 75)))
}

func TestCheckerDistanceLists(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}],
		"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 4}],
		"rules": [{"name": "Near", "type": "distance", "minDistance": "1", "maxDistance": "15",
		           "measurements": "teams[red].players.attributes[skill]", "referenceValue": [10, "20"]}]}`
	match := func(skills ...float64) *Match {
		var tickets []*Ticket
		place := map[string]string{}
		for i, s := range skills {
			id := fmt.Sprintf("p%d", i+1)
			tickets = append(tickets, chkTk("t"+id, chkPl(id, "skill", chkN(s))))
			place[id] = "red"
		}
		return chkBuild(chkTeamsOf("red"), place, tickets...)
	}
	chkExpect(t, checkMatch([]byte(body), match(12, 18)))
	chkExpect(t, checkMatch([]byte(body), match(12, 20, 26)),
		`rule "Near": player p2 value 20 is 0 from reference 20, minDistance 1, maxDistance 15`,
		`rule "Near": player p3 value 26 is 16 from reference 10, minDistance 1, maxDistance 15`)
}

const chkCollectionBody = `{"ruleLanguageVersion": "1.0",
	"playerAttributes": [{"name": "roles", "type": "string_list", "default": ["peasant"]},
	                     {"name": "maps", "type": "string_list"},
	                     {"name": "block", "type": "string_list", "default": []}],
	"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 4}, {"name": "blue", "minPlayers": 1, "maxPlayers": 4}],
	"rules": [
	  {"name": "MedicLimit", "type": "collection", "operation": "contains", "referenceValue": "medic", "maxCount": 1,
	   "measurements": ["flatten(teams[*].players.attributes[roles])"]},
	  {"name": "SharedMap", "type": "collection", "operation": "intersection", "minCount": 1,
	   "measurements": ["flatten(teams[*].players.attributes[maps])"], "partyAggregation": "%s"},
	  {"name": "NoBlocked", "type": "collection", "operation": "reference_intersection_count", "maxCount": 0,
	   "measurements": "flatten(teams[*].players.attributes[block])",
	   "referenceValue": "flatten(teams[*].players[playerId])"}]}`

func TestCheckerCollection(t *testing.T) {
	body := fmt.Appendf(nil, chkCollectionBody, "")
	match := func(p2, p3 Player) *Match {
		return chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "blue", "p3": "blue"},
			chkTk("a", chkPl("p1", "roles", chkSL("medic"), "maps", chkSL("a", "b"))), chkTk("b", p2), chkTk("c", p3))
	}
	p2 := chkPl("p2", "maps", chkSL("b", "c"))
	p3 := chkPl("p3", "maps", chkSL("b"), "block", chkSL("zz"))
	chkExpect(t, checkMatch(body, match(p2, p3)))
	chkExpect(t, checkMatch(body, match(chkPl("p2", "maps", chkSL("b"), "roles", chkSL("medic", "tank")), p3)),
		`rule "MedicLimit": 2 lists contain ["medic"], maxCount 1`)
	chkExpect(t, checkMatch(body, match(p2, chkPl("p3", "maps", chkSL("c")))),
		`rule "SharedMap": 0 values are common to all 3 lists, minCount 1`)
	chkExpect(t, checkMatch(body, match(p2, chkPl("p3", "maps", chkSL("b"), "block", chkSL("p1", "zz")))),
		`rule "NoBlocked": player p3 list ["p1" "zz"] shares 1 values with reference ["p1" "p2" "p3"], maxCount 0`)
}

func TestCheckerCollectionParty(t *testing.T) {
	// p2 and p3 are a party: with union their maps are [b c], which shares b with p1; with
	// intersection they are [c], which shares nothing.
	match := func() *Match {
		return chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "blue", "p3": "blue"},
			chkTk("a", chkPl("p1", "maps", chkSL("a", "b"))),
			chkTk("b", chkPl("p2", "maps", chkSL("b", "c")), chkPl("p3", "maps", chkSL("c"))))
	}
	chkExpect(t, checkMatch(fmt.Appendf(nil, chkCollectionBody, "union"), match()))
	chkExpect(t, checkMatch(fmt.Appendf(nil, chkCollectionBody, "intersection"), match()),
		`rule "SharedMap": 0 values are common to all 2 lists, minCount 1`)
}

func TestCheckerBatchDistance(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}, {"name": "mode", "type": "string", "default": "ctf"}],
		"teams": [{"name": "all", "minPlayers": 1, "maxPlayers": 5}],
		"rules": [{"name": "Similar", "type": "batchDistance", "batchAttribute": "skill", "maxDistance": "5"},
		          {"name": "SameMode", "type": "batchDistance", "batchAttribute": "mode"}]}`
	match := func(tickets ...*Ticket) *Match {
		place := map[string]string{}
		for _, tk := range tickets {
			for _, p := range tk.Players {
				place[p.ID] = "all"
			}
		}
		return chkBuild(chkTeamsOf("all"), place, tickets...)
	}
	chkExpect(t, checkMatch([]byte(body), match(chkTk("a", chkPl("p1", "skill", chkN(10))), chkTk("b", chkPl("p2", "skill", chkN(15))))))
	chkExpect(t, checkMatch([]byte(body), match(chkTk("a", chkPl("p1", "skill", chkN(10))), chkTk("b", chkPl("p2", "skill", chkN(16))))),
		`rule "Similar": player p1 value 10 and player p2 value 16 are 6 apart, maxDistance 5`)
	// A party of 8 and 12 counts as its average, 10.
	chkExpect(t, checkMatch([]byte(body), match(chkTk("a", chkPl("p1", "skill", chkN(8)), chkPl("p3", "skill", chkN(12))),
		chkTk("b", chkPl("p2", "skill", chkN(15))))))
	chkExpect(t, checkMatch([]byte(body), match(chkTk("a", chkPl("p1", "skill", chkN(10))), chkTk("b", chkPl("p2", "skill", chkN(12), "mode", chkS("dm"))))),
		`rule "SameMode": player p2 value "dm" differs from player p1 value "ctf"`)
}

func TestCheckerLatency(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "all", "minPlayers": 1, "maxPlayers": 4}],
		"rules": [{"name": "Fast", "type": "latency", "maxLatency": 100},
		          {"name": "Close", "type": "latency", "maxDistance": 30, "distanceReference": "min"}],
		"expansions": [{"target": "rules[Fast].maxLatency", "steps": [{"waitTimeSeconds": 10, "value": 200}]}]}`
	match := func(age time.Duration, regions []string, players ...Player) *Match {
		var tickets []*Ticket
		place := map[string]string{}
		for _, p := range players {
			tickets = append(tickets, chkTk("t"+p.ID, p))
			place[p.ID] = "all"
		}
		m := chkBuild(chkTeamsOf("all"), place, tickets...)
		m.ExpansionAge, m.Regions = age, regions
		return m
	}
	p1 := chkLat("p1", "east", 50, "west", 150)
	p2 := chkLat("p2", "east", 70, "west", 120, "eu", 20)
	chkExpect(t, checkMatch([]byte(body), match(0, []string{"east"}, p1, p2)))
	chkExpect(t, checkMatch([]byte(body), match(0, nil, p1, p2)), "Regions is empty")
	chkExpect(t, checkMatch([]byte(body), match(0, []string{"east", "west"}, p1, p2)),
		`region west in Regions fails rule "Fast": player p1 latency 150 > maxLatency 100`)
	chkExpect(t, checkMatch([]byte(body), match(0, []string{"east", "eu"}, p1, p2)),
		"region eu in Regions is not reported by every player")
	// At 10 seconds maxLatency is 200: west qualifies too, and comes after east.
	chkExpect(t, checkMatch([]byte(body), match(10*time.Second, []string{"east"}, p1, p2)),
		"region west suits every latency rule but is missing from Regions")
	chkExpect(t, checkMatch([]byte(body), match(10*time.Second, []string{"east", "west"}, p1, p2)))
	chkExpect(t, checkMatch([]byte(body), match(10*time.Second, []string{"west", "east"}, p1, p2)),
		"Regions are not best first: east (worst latency 70) follows one with 150")
}

func TestCheckerLatencyFails(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"teams": [{"name": "all", "minPlayers": 1, "maxPlayers": 4}],
		"rules": [{"name": "Fast", "type": "latency", "maxLatency": 100, "maxDistance": 30}]}`
	match := func(regions []string, tickets ...*Ticket) *Match {
		place := map[string]string{}
		for _, tk := range tickets {
			for _, p := range tk.Players {
				place[p.ID] = "all"
			}
		}
		m := chkBuild(chkTeamsOf("all"), place, tickets...)
		m.Regions = regions
		return m
	}
	slow := chkTk("a", chkLat("p1", "east", 120, "west", 150))
	chkExpect(t, checkMatch([]byte(body), match(nil, slow, chkTk("b", chkLat("p2", "east", 70)))),
		`rule "Fast": no region suits every player (east: player p1 latency 120 > maxLatency 100)`,
		"Regions is empty")
	chkExpect(t, checkMatch([]byte(body), match([]string{"east"}, chkTk("a", chkLat("p1", "east", 20)), chkTk("b", chkLat("p2", "east", 70)))),
		`rule "Fast": no region suits every player (east: player p2 latency 70 is 50 from the min 20, maxDistance 30)`,
		`region east in Regions fails rule "Fast": player p2 latency 70 is 50 from the min 20, maxDistance 30`)
	chkExpect(t, checkMatch([]byte(body), match([]string{"east"}, chkTk("a", chkLat("p1", "east", 20)), chkTk("b", chkPl("p2")))),
		`rule "Fast": player p2 reports no latency`, "region east in Regions is not reported by every player")
	// A party's latencies 10 and 90 count as their average 50, within 30 of 70.
	party := chkTk("a", chkLat("p1", "east", 10), chkLat("p3", "east", 90))
	chkExpect(t, checkMatch([]byte(body), match([]string{"east"}, party, chkTk("b", chkLat("p2", "east", 70)))))
}

const chkCompoundRules = `
	{"name": "Serious", "type": "comparison", "operation": "=", "referenceValue": "serious",
	 "measurements": "flatten(teams[*].players.attributes[mode])"},
	{"name": "Casual", "type": "comparison", "operation": "=", "referenceValue": "casual",
	 "measurements": "flatten(teams[*].players.attributes[mode])"},
	{"name": "Tight", "type": "distance", "maxDistance": 5,
	 "measurements": "max(flatten(teams[*].players.attributes[skill]))",
	 "referenceValue": "min(flatten(teams[*].players.attributes[skill]))"},
	{"name": "Loose", "type": "distance", "maxDistance": 50,
	 "measurements": "max(flatten(teams[*].players.attributes[skill]))",
	 "referenceValue": "min(flatten(teams[*].players.attributes[skill]))"}`

// chkCompoundBody is a rule set over chkCompoundRules plus the compound rule given.
func chkCompoundBody(compound string) []byte {
	return []byte(`{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}, {"name": "mode", "type": "string"}],
		"teams": [{"name": "all", "minPlayers": 2, "maxPlayers": 4}],
		"rules": [` + chkCompoundRules + `, ` + compound + `],
		"expansions": [{"target": "rules[Tight].maxDistance", "steps": [{"waitTimeSeconds": 30, "value": 40}]}]}`)
}

// chkPair is a match of two solo players with the given modes and skills.
func chkPair(age time.Duration, mode1 string, skill1 float64, mode2 string, skill2 float64) *Match {
	m := chkBuild(chkTeamsOf("all"), map[string]string{"p1": "all", "p2": "all"},
		chkTk("a", chkPl("p1", "mode", chkS(mode1), "skill", chkN(skill1))),
		chkTk("b", chkPl("p2", "mode", chkS(mode2), "skill", chkN(skill2))))
	m.ExpansionAge = age
	return m
}

func TestCheckerCompound(t *testing.T) {
	body := chkCompoundBody(`{"name": "Modes", "type": "compound",
		"statement": "or(and(Serious, Tight), and(Casual, Loose))"}`)
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "serious", 14)))
	// Serious and Tight fail here, but they are enforced only through Modes.
	chkExpect(t, checkMatch(body, chkPair(0, "casual", 10, "casual", 40)))
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "serious", 40)),
		`rule "Modes": statement or(and(Serious, Tight), and(Casual, Loose)) is false (Casual=false, Loose=true, Serious=true, Tight=false)`)
	// At 30 seconds Tight allows 40.
	chkExpect(t, checkMatch(body, chkPair(30*time.Second, "serious", 10, "serious", 40)))
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "casual", 12)), `rule "Modes": statement`)
}

func TestCheckerCompoundXorNot(t *testing.T) {
	body := chkCompoundBody(`{"name": "X", "type": "compound", "statement": "xor(Serious, not(Casual))"}`)
	// Mixed modes: Serious false, not(Casual) true. Tight and Loose are enforced on their own.
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "casual", 12)))
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "serious", 12)), `rule "X": statement xor(Serious, not(Casual)) is false`)
	chkExpect(t, checkMatch(body, chkPair(0, "casual", 10, "casual", 12)), `rule "X": statement xor(Serious, not(Casual)) is false`)
	chkExpect(t, checkMatch(body, chkPair(0, "serious", 10, "casual", 22)),
		`rule "Tight": match value 22 is 12 from reference 10, maxDistance 5`)
}

func TestCheckerExpressions(t *testing.T) {
	body := `{"ruleLanguageVersion": "1.0",
		"playerAttributes": [{"name": "skill", "type": "number"}, {"name": "tags", "type": "string_list"}],
		"teams": [{"name": "red", "minPlayers": 1, "maxPlayers": 4}, {"name": "blue", "minPlayers": 1, "maxPlayers": 4}]}`
	m := chkBuild(chkTeamsOf("red", "blue"), map[string]string{"p1": "red", "p2": "red", "p3": "blue"},
		chkTk("a", chkPl("p1", "skill", chkN(10), "tags", chkSL("a", "b"))),
		chkTk("b", chkPl("p2", "skill", chkN(20), "tags", chkSL("b", "a"))),
		chkTk("c", chkPl("p3", "skill", chkN(30), "tags", chkSL("b", "c"))))
	c, err := chkLoad([]byte(body), m)
	if err != nil {
		t.Fatal(err)
	}
	for expr, want := range map[string]string{
		"teams[red].players.attributes[skill]":                         "[10 20]",
		"teams[*].players.attributes[skill]":                           "[[10 20] [30]]",
		"avg(teams[*].players.attributes[skill])":                      "[15 30]",
		"avg(flatten(team[*].players.attributes[skill]))":              "20",
		"count(teams[red].players)":                                    "2",
		"count (teams[*].players)":                                     "[2 1]",
		"median(flatten(teams[*].players.attributes[skill]))":          "20",
		"stddev(teams[red].players.attributes[skill])":                 "5",
		"sum(teams[red, blue].players.attributes[skill])":              "[30 30]",
		"max(avg(teams[*].players.attributes[skill]))":                 "30",
		"min(teams[blue].players.attributes[skill])":                   "30",
		"set_intersection(flatten(teams[*].players.attributes[tags]))": `["b"]`,
		"set_intersection(teams[*].players.attributes[tags])":          `[["a" "b"] ["b" "c"]]`,
		"flatten(teams[*].players[playerId])":                          `["p1" "p2" "p3"]`,
	} {
		e, err := chkParseExpr(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		if v, err := c.eval(e); err != nil || chkFmt(v) != want {
			t.Errorf("%s = %s (%v), want %s", expr, chkFmt(v), err, want)
		}
	}
	for _, bad := range []string{"avg(teams[red].players.attributes[skill]", "mean(teams[red].players)", "teams[red]", "players"} {
		if _, err := chkParseExpr(bad); err == nil {
			t.Errorf("%s parses", bad)
		}
	}
	if _, err := c.eval(&chkExpr{teams: []string{"green"}, sel: "players"}); err == nil {
		t.Error("teams[green] selects a team")
	}
}

func TestCheckerStatements(t *testing.T) {
	for text, want := range map[string]string{
		"A":                       "A",
		"and(A, B)":               "and(A B)",
		" or( and(A,B) , not(C))": "or(and(A B) not(C))",
	} {
		st, err := chkParseStmt(text)
		if err != nil {
			t.Errorf("%q: %v", text, err)
			continue
		}
		if got := chkStmtText(st); got != want {
			t.Errorf("%q parses as %s, want %s", text, got, want)
		}
	}
	for _, bad := range []string{"", "and(A", "and(A,)", "A B)"} {
		if _, err := chkParseStmt(bad); err == nil {
			t.Errorf("%q parses", bad)
		}
	}
}

// chkStmtText writes a statement back, arguments separated by spaces.
func chkStmtText(st *chkStmt) string {
	if st.op == "" {
		return st.rule
	}
	args := make([]string, len(st.args))
	for i, a := range st.args {
		args[i] = chkStmtText(a)
	}
	return st.op + "(" + strings.Join(args, " ") + ")"
}
