package main

import (
	"fmt"
	"strconv"
	"strings"
)

// validateFile renders zz_validate.go: a validate method per structure type, a check function
// per other shape that carries constraints, and the compiled patterns and enum value sets.
func (g *gen) validateFile() (*file, error) {
	body := &file{}
	usesMaps := false
	for _, n := range g.shapeNames {
		s := g.m.Shapes[n]
		switch {
		case g.isStruct(n):
			g.validateMethod(body, n, s)
		case s.Type != "structure" && g.needsCheck(n):
			if err := g.checkFunc(body, n, s); err != nil {
				return nil, err
			}
			usesMaps = usesMaps || s.Type == "map"
		}
	}
	vars, err := g.validateVars()
	if err != nil {
		return nil, err
	}
	f := start()
	if usesMaps {
		f = start("maps", "slices")
	}
	f.Write(vars.Bytes())
	f.Write(body.Bytes())
	return f, nil
}

// validateVars renders the compiled patterns and the enum value sets.
func (g *gen) validateVars() (*file, error) {
	f := &file{}
	f.p("// Model patterns, anchored (see fullMatch).")
	f.p("var (")
	for _, n := range g.shapeNames {
		s := g.m.Shapes[n]
		if s.Pattern == "" || !g.needsCheck(n) {
			continue
		}
		re, err := goPattern(s.Pattern)
		if err != nil {
			return nil, fmt.Errorf("shape %s: %w", n, err)
		}
		f.p("rx%s = fullMatch(%s)", n, goString(re))
	}
	f.p(")")
	f.p("")
	f.p("// Enum value sets.")
	f.p("var (")
	for _, n := range g.shapeNames {
		if vals := g.m.Shapes[n].Enum; vals != nil {
			f.p("enum%s = []string{%s}", n, quoteAll(vals))
		}
	}
	f.p(")")
	f.p("")
	return f, nil
}

func quoteAll(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// needsCheck reports whether a shape carries a constraint, directly or in a part of it.
func (g *gen) needsCheck(name string) bool {
	if v, ok := g.needs[name]; ok {
		return v
	}
	g.needs[name] = true // a shape reached again through itself is assumed to need checks
	s := g.m.Shapes[name]
	v := s.Min != "" || s.Max != "" || s.Pattern != "" || s.Enum != nil || len(s.Required) > 0
	switch s.Type {
	case "structure":
		for _, mn := range sortedKeys(s.Members) {
			v = g.needsCheck(s.Members[mn].Shape) || v
		}
	case "list":
		v = g.needsCheck(s.Member.Shape) || v
	case "map":
		v = g.needsCheck(s.Key.Shape) || v
		v = g.needsCheck(s.Value.Shape) || v
	}
	g.needs[name] = v
	return v
}

// validateMethod renders the validate method of a structure type.
func (g *gen) validateMethod(f *file, name string, s *Shape) {
	f.p("func (s *%s) validate(v *validator, path string) {", name)
	f.p("if s == nil {")
	f.p("return")
	f.p("}")
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, mn := range sortedKeys(s.Members) {
		g.memberCheck(f, mn, s.Members[mn].Shape, required[mn])
	}
	f.p("}")
	f.p("")
}

// memberCheck renders the checks of one structure member.
func (g *gen) memberCheck(f *file, mn, shape string, required bool) {
	check := g.needsCheck(shape)
	if !required && !check {
		return
	}
	p := fmt.Sprintf("member(path, %q)", mn)
	if !check {
		f.p("if s.%s == nil {", mn)
		f.p("v.required(false, %s)", p)
		f.p("}")
		return
	}
	f.p("if s.%s != nil {", mn)
	x := "s." + mn
	if g.fieldType(shape)[0] == '*' && !g.isStruct(shape) {
		x = "*" + x
	}
	f.p("%s", g.callCheck(shape, x, p))
	if required {
		f.p("} else {")
		f.p("v.required(false, %s)", p)
	}
	f.p("}")
}

// callCheck is the statement that checks the value x (of the shape's value type, or a
// pointer for structures) at path p.
func (g *gen) callCheck(shape, x, p string) string {
	if g.isStruct(shape) {
		return fmt.Sprintf("%s.validate(v, %s)", x, p)
	}
	s := g.m.Shapes[shape]
	switch {
	case s.Enum != nil:
		x = "string(" + x + ")"
	case s.Type == "integer":
		x = "int64(" + x + ")"
	case s.Type == "float":
		x = "float64(" + x + ")"
	}
	return fmt.Sprintf("check%s(v, %s, %s)", shape, x, p)
}

// paramType is the type of a check function's value parameter.
func (g *gen) paramType(name string) string {
	switch g.m.Shapes[name].Type {
	case "string":
		return "string"
	case "integer", "long":
		return "int64"
	case "double", "float":
		return "float64"
	}
	return g.valueType(name)
}
