package main

import (
	"fmt"
	"strconv"
)

// checkFunc renders the check function of a non-structure shape with constraints.
func (g *gen) checkFunc(f *file, name string, s *Shape) error {
	if g.hand["check"+name] {
		return fmt.Errorf("check%s is a hand-written name", name)
	}
	f.p("func check%s(v *validator, x %s, path string) {", name, g.paramType(name))
	var err error
	switch s.Type {
	case "string":
		err = g.stringChecks(f, name, s)
	case "integer", "long":
		err = rangeCheck(f, s, "intRange", "i64")
	case "double", "float":
		err = rangeCheck(f, s, "floatRange", "f64")
	case "blob":
		err = countCheck(f, s)
	case "list":
		err = g.listChecks(f, s)
	case "map":
		err = g.mapChecks(f, s)
	default:
		err = fmt.Errorf("shape %s: cannot check type %s", name, s.Type)
	}
	f.p("}")
	f.p("")
	return err
}

func (g *gen) stringChecks(f *file, name string, s *Shape) error {
	if s.Min != "" || s.Max != "" {
		lo, hi, err := bounds(s)
		if err != nil {
			return fmt.Errorf("shape %s: %w", name, err)
		}
		f.p("v.strLen(x, path, %d, %d)", lo, hi)
	}
	if s.Enum != nil {
		f.p("v.enum(x, path, enum%s)", name)
	}
	if s.Pattern != "" {
		f.p("v.pattern(x, path, rx%s, %s)", name, goString(s.Pattern))
	}
	return nil
}

// bounds returns a shape's integer min and max, -1 where absent.
func bounds(s *Shape) (lo, hi int, err error) {
	lo, hi = -1, -1
	if s.Min != "" {
		if lo, err = strconv.Atoi(s.Min.String()); err != nil {
			return 0, 0, fmt.Errorf("min %s is not an integer", s.Min)
		}
	}
	if s.Max != "" {
		if hi, err = strconv.Atoi(s.Max.String()); err != nil {
			return 0, 0, fmt.Errorf("max %s is not an integer", s.Max)
		}
	}
	return lo, hi, nil
}

// rangeCheck renders a numeric range check through the validator method fn, with bounds
// wrapped by the pointer helper ptr (i64 or f64).
func rangeCheck(f *file, s *Shape, fn, ptr string) error {
	bound := func(n string) (string, error) {
		if n == "" {
			return "nil", nil
		}
		if _, err := strconv.ParseFloat(n, 64); err != nil {
			return "", fmt.Errorf("bound %q is not a number", n)
		}
		if ptr == "i64" {
			if _, err := strconv.ParseInt(n, 10, 64); err != nil {
				return "", fmt.Errorf("bound %q is not an integer", n)
			}
		}
		return ptr + "(" + n + ")", nil
	}
	lo, err := bound(s.Min.String())
	if err != nil {
		return err
	}
	hi, err := bound(s.Max.String())
	if err != nil {
		return err
	}
	f.p("v.%s(x, path, %s, %s)", fn, lo, hi)
	return nil
}

// countCheck renders the item-count check of a list, map or blob with min or max.
func countCheck(f *file, s *Shape) error {
	if s.Min == "" && s.Max == "" {
		return nil
	}
	lo, hi, err := bounds(s)
	if err != nil {
		return err
	}
	f.p("v.count(len(x), path, %d, %d)", lo, hi)
	return nil
}

func (g *gen) listChecks(f *file, s *Shape) error {
	if err := countCheck(f, s); err != nil {
		return err
	}
	if !g.needsCheck(s.Member.Shape) {
		return nil
	}
	f.p("for i := range x {")
	f.p("%s", g.callCheck(s.Member.Shape, "x[i]", "index(path, i)"))
	f.p("}")
	return nil
}

// mapChecks renders a map's count check and the checks of its keys and values, visited in
// key order so that messages come out in a stable order.
func (g *gen) mapChecks(f *file, s *Shape) error {
	if err := countCheck(f, s); err != nil {
		return err
	}
	checkKey, checkValue := g.needsCheck(s.Key.Shape), g.needsCheck(s.Value.Shape)
	if !checkKey && !checkValue {
		return nil
	}
	f.p("for _, k := range slices.Sorted(maps.Keys(x)) {")
	f.p("p := key(path, k)")
	if checkKey {
		f.p("%s", g.callCheck(s.Key.Shape, "k", "p"))
	}
	if checkValue {
		f.p("e := x[k]")
		f.p("%s", g.callCheck(s.Value.Shape, "e", "p"))
	}
	f.p("}")
	return nil
}
