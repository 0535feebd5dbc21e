package flexmatch

import (
	"math"
	"slices"
	"sort"
)

// A property expression evaluates to a val: a number, a string, a string list (an attribute
// value), or a list of vals. Selecting several teams gives a list with one list per team.
type val struct {
	kind valKind
	num  float64
	str  string
	strs []string
	list []val
}

type valKind uint8

const (
	vNone valKind = iota // no value (e.g. the average of nothing): rules skip it
	vNum
	vStr
	vStrs
	vList
)

// view is what expressions and rules are evaluated on: the teams of a (possibly partial)
// match.
type view struct {
	rs    *RuleSet
	teams []viewTeam
}

// viewTeam is one team of a view.
type viewTeam struct {
	name string
	def  int
	// players are the team's players, grouped by ticket (a ticket's players are adjacent).
	players []MatchPlayer
}

// eval evaluates a property expression on v.
func (v *view) eval(e *Expr, agg string) val {
	if e.Func == "" {
		return v.selectTeams(e, agg)
	}
	return apply(e.Func, v.eval(e.Arg, agg))
}

// selectTeams evaluates a selector: one team's values, or a list of lists when the selector
// may name several teams.
func (v *view) selectTeams(e *Expr, agg string) val {
	var per []val
	multi := len(e.Teams) > 1
	for i := range v.teams {
		t := &v.teams[i]
		if !selects(v.rs, e.Teams, t, &multi) {
			continue
		}
		per = append(per, t.values(e, agg))
	}
	if !multi && len(per) == 1 {
		return per[0]
	}
	return val{kind: vList, list: per}
}

// selects reports whether a team selector's names select team t; a "*" or a definition that
// stands for several teams makes the selection multi-team.
func selects(rs *RuleSet, names []string, t *viewTeam, multi *bool) bool {
	for _, n := range names {
		if n == "*" {
			*multi = true
			return true
		}
		if n == t.name {
			return true
		}
		if d := &rs.Teams[t.def]; d.Name == n {
			if d.Quantity > 1 {
				*multi = true
			}
			return true
		}
	}
	return false
}

// values is a team's list for a selector: its players, their IDs, or their attribute values
// (each combined over the player's party as agg says).
func (t *viewTeam) values(e *Expr, agg string) val {
	out := make([]val, 0, len(t.players))
	for i := 0; i < len(t.players); {
		j := i + 1
		for j < len(t.players) && t.players[j].Ticket == t.players[i].Ticket {
			j++
		}
		party := t.players[i:j]
		var pv val
		if e.Attribute != "" && agg != noAggregation {
			pv = partyValue(party, e.Attribute, agg)
		}
		for _, p := range party {
			switch {
			case e.Attribute != "" && (pv.kind == vStr || agg == noAggregation):
				out = append(out, attrVal(p.Player.Attributes[e.Attribute])) // strings do not combine
			case e.Attribute != "":
				out = append(out, pv)
			default:
				out = append(out, val{kind: vStr, str: p.Player.ID})
			}
		}
		i = j
	}
	return val{kind: vList, list: out}
}

// partyValue is a party's value of an attribute: the one player's value, or the party's
// values combined by agg (min, max, avg for numbers; union, intersection for lists).
func partyValue(party []MatchPlayer, attr, agg string) val {
	if len(party) == 1 {
		return attrVal(party[0].Player.Attributes[attr])
	}
	vals := make([]val, len(party))
	for i, p := range party {
		vals[i] = attrVal(p.Player.Attributes[attr])
	}
	switch vals[0].kind {
	case vNum:
		return aggregateNums(vals, agg)
	case vStrs:
		return aggregateStrs(vals, agg)
	}
	return vals[0]
}

// aggregateNums combines a party's numbers.
func aggregateNums(vals []val, agg string) val {
	nums := make([]float64, len(vals))
	for i, v := range vals {
		nums[i] = v.num
	}
	switch agg {
	case "min":
		return num(slices.Min(nums))
	case "max":
		return num(slices.Max(nums))
	}
	return num(mean(nums))
}

// aggregateStrs combines a party's string lists.
func aggregateStrs(vals []val, agg string) val {
	lists := make([][]string, len(vals))
	for i, v := range vals {
		lists[i] = v.strs
	}
	if agg == "intersection" {
		return val{kind: vStrs, strs: intersect(lists)}
	}
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	slices.Sort(all)
	return val{kind: vStrs, strs: slices.Compact(all)}
}

// attrVal converts an attribute value.
func attrVal(a Value) val {
	switch a.Type {
	case TypeNumber:
		return num(a.N)
	case TypeString:
		return val{kind: vStr, str: a.S}
	case TypeStringList:
		return val{kind: vStrs, strs: a.SL}
	}
	return val{}
}

func num(f float64) val { return val{kind: vNum, num: f} }

// apply applies a function. Given a list of lists, every function but flatten applies to
// each sub-list and gives a list.
func apply(fn string, arg val) val {
	if arg.kind != vList {
		return val{}
	}
	if fn == "flatten" {
		return flatten(arg)
	}
	if len(arg.list) > 0 && arg.list[0].kind == vList {
		out := make([]val, len(arg.list))
		for i, sub := range arg.list {
			out[i] = apply(fn, sub)
		}
		return val{kind: vList, list: out}
	}
	return reduce(fn, arg.list)
}

// flatten turns a list of lists into one list.
func flatten(arg val) val {
	var out []val
	for _, v := range arg.list {
		if v.kind == vList {
			out = append(out, v.list...)
		} else {
			out = append(out, v)
		}
	}
	return val{kind: vList, list: out}
}

// reduce applies a function to a flat list.
func reduce(fn string, list []val) val {
	switch fn {
	case "count":
		return num(float64(len(list)))
	case "set_intersection":
		lists := make([][]string, 0, len(list))
		for _, v := range list {
			lists = append(lists, v.strs)
		}
		return val{kind: vStrs, strs: intersect(lists)}
	}
	nums := numbers(list)
	if len(nums) == 0 {
		if fn == "sum" {
			return num(0)
		}
		return val{}
	}
	return num(numericFuncs[fn](nums))
}

// numericFuncs are the functions from a list of numbers to a number.
var numericFuncs = map[string]func([]float64) float64{
	"min":    slices.Min[[]float64],
	"max":    slices.Max[[]float64],
	"avg":    mean,
	"sum":    sum,
	"median": median,
	"stddev": stddev,
}

// numbers collects the numbers of a list.
func numbers(list []val) []float64 {
	out := make([]float64, 0, len(list))
	for _, v := range list {
		if v.kind == vNum {
			out = append(out, v.num)
		}
	}
	return out
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

func mean(xs []float64) float64 { return sum(xs) / float64(len(xs)) }

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// stddev is the population standard deviation.
func stddev(xs []float64) float64 {
	m := mean(xs)
	v := 0.0
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	return math.Sqrt(v / float64(len(xs)))
}

// intersect is the strings found in every list, each once, sorted.
func intersect(lists [][]string) []string {
	if len(lists) == 0 {
		return nil
	}
	out := slices.Clone(lists[0])
	slices.Sort(out)
	out = slices.Compact(out)
	for _, l := range lists[1:] {
		out = slices.DeleteFunc(out, func(s string) bool { return !slices.Contains(l, s) })
	}
	return out
}

// leaves appends the scalar values (numbers and strings) in v, depth first.
func leaves(v val, out []val) []val {
	switch v.kind {
	case vList:
		for _, x := range v.list {
			out = leaves(x, out)
		}
	case vNum, vStr:
		out = append(out, v)
	}
	return out
}

// stringLists appends the string lists in v, depth first.
func stringLists(v val, out [][]string) [][]string {
	switch v.kind {
	case vList:
		for _, x := range v.list {
			out = stringLists(x, out)
		}
	case vStrs:
		out = append(out, v.strs)
	}
	return out
}
