package matchsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/gamelift/flexmatch"
)

// Distribution kinds a Dist can be.
const (
	DistNormal  = "normal"  // normal:mean:stddev, a number
	DistUniform = "uniform" // uniform:lo:hi, a number
	DistConst   = "const"   // const:value, a number or a string
	DistChoice  = "choice"  // choice:a,b,c, one of the strings, equally likely
	DistSubset  = "subset"  // subset:a,b,c, a non-empty random subset (a string list)
)

// Dist is a distribution of attribute or latency values, written kind:params on the command
// line (normal:1500:300, uniform:20:200, const:7, choice:ctf,dm, subset:a,b,c).
type Dist struct {
	Kind    string
	A, B    float64
	Choices []string
}

// ParseDist parses a distribution written kind:params.
func ParseDist(s string) (Dist, error) {
	kind, params, _ := strings.Cut(s, ":")
	d := Dist{Kind: kind}
	var err error
	switch kind {
	case DistNormal, DistUniform:
		d.A, d.B, err = twoNumbers(params)
	case DistConst:
		d.Choices = []string{params}
		d.A, err = strconv.ParseFloat(params, 64)
		if err != nil {
			d.A, err = math.NaN(), nil
		}
	case DistChoice, DistSubset:
		d.Choices = strings.Split(params, ",")
		if params == "" {
			err = fmt.Errorf("no choices")
		}
	default:
		err = fmt.Errorf("unknown kind %q (want normal, uniform, const, choice or subset)", kind)
	}
	if err != nil {
		return Dist{}, fmt.Errorf("distribution %q: %w", s, err)
	}
	return d, nil
}

// twoNumbers parses "a:b".
func twoNumbers(s string) (float64, float64, error) {
	as, bs, ok := strings.Cut(s, ":")
	a, err1 := strconv.ParseFloat(as, 64)
	b, err2 := strconv.ParseFloat(bs, 64)
	if !ok || err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("want two numbers a:b, got %q", s)
	}
	return a, b, nil
}

// Numeric reports whether the distribution gives numbers.
func (d Dist) Numeric() bool {
	return d.Kind == DistNormal || d.Kind == DistUniform || (d.Kind == DistConst && !math.IsNaN(d.A))
}

// naturalType is the attribute type a distribution gives when the rule set does not
// declare the attribute.
func (d Dist) naturalType() flexmatch.AttrType {
	switch {
	case d.Numeric():
		return flexmatch.TypeNumber
	case d.Kind == DistSubset:
		return flexmatch.TypeStringList
	}
	return flexmatch.TypeString
}

// number draws a number.
func (d Dist) number(r *rand.Rand) float64 {
	switch d.Kind {
	case DistNormal:
		return d.A + r.NormFloat64()*d.B
	case DistUniform:
		return d.A + r.Float64()*(d.B-d.A)
	}
	return d.A
}

// strings draws a string list: one choice, or a non-empty subset.
func (d Dist) strings(r *rand.Rand) []string {
	if d.Kind != DistSubset {
		return []string{d.Choices[r.IntN(len(d.Choices))]}
	}
	var out []string
	for _, c := range d.Choices {
		if r.IntN(2) == 0 {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		out = []string{d.Choices[r.IntN(len(d.Choices))]}
	}
	return out
}

// fits reports whether the distribution can give values of type t.
func (d Dist) fits(t flexmatch.AttrType) bool {
	switch t {
	case flexmatch.TypeNumber:
		return d.Numeric()
	case flexmatch.TypeString:
		return d.Kind == DistChoice || d.Kind == DistConst
	case flexmatch.TypeStringList:
		return !d.Numeric()
	}
	return false
}

// value draws an attribute value of type t (which the distribution fits).
func (d Dist) value(r *rand.Rand, t flexmatch.AttrType) flexmatch.Value {
	switch t {
	case flexmatch.TypeNumber:
		return flexmatch.Value{Type: t, N: d.number(r)}
	case flexmatch.TypeString:
		return flexmatch.Value{Type: t, S: d.strings(r)[0]}
	}
	return flexmatch.Value{Type: t, SL: d.strings(r)}
}

// latency draws a latency in whole milliseconds, at least 1.
func (d Dist) latency(r *rand.Rand) int {
	return max(1, int(math.Round(d.number(r))))
}

// PartyDist is the distribution of party sizes: sizes with relative weights, written "1"
// or "1:0.7,2:0.2,5:0.1" on the command line.
type PartyDist struct {
	Sizes   []int
	Weights []float64
}

// ParsePartyDist parses a party size distribution.
func ParsePartyDist(s string) (PartyDist, error) {
	var p PartyDist
	for part := range strings.SplitSeq(s, ",") {
		size, weight, hasWeight := strings.Cut(part, ":")
		n, err := strconv.Atoi(size)
		w := 1.0
		if hasWeight {
			w, err = parseWeight(weight, err)
		}
		if err != nil || n < 1 || w <= 0 {
			return PartyDist{}, fmt.Errorf("party sizes %q: want size[:weight],... with sizes of at least 1 and positive weights", s)
		}
		p.Sizes, p.Weights = append(p.Sizes, n), append(p.Weights, w)
	}
	return p, nil
}

// parseWeight parses a weight unless an earlier error happened.
func parseWeight(s string, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	return strconv.ParseFloat(s, 64)
}

// draw picks a party size.
func (p PartyDist) draw(r *rand.Rand) int {
	if len(p.Sizes) <= 1 {
		return max(1, firstOr(p.Sizes, 1))
	}
	total := 0.0
	for _, w := range p.Weights {
		total += w
	}
	x := r.Float64() * total
	for i, w := range p.Weights {
		if x < w {
			return p.Sizes[i]
		}
		x -= w
	}
	return p.Sizes[len(p.Sizes)-1]
}

// firstOr is s[0], or def for an empty s.
func firstOr(s []int, def int) int {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
