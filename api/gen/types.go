package main

import (
	"fmt"
	"strconv"
)

// typesFile renders zz_types.go: one struct per non-exception structure shape, one string
// type with constants per enum shape, and an empty struct per operation without output.
func (g *gen) typesFile() (*file, error) {
	f := start()
	for _, n := range g.shapeNames {
		s := g.m.Shapes[n]
		switch {
		case g.isStruct(n):
			g.structType(f, n, s)
		case s.Type == "string" && s.Enum != nil:
			g.enumType(f, n, s)
		}
	}
	for _, op := range g.opNames {
		if name, ok := g.emptyOut[op]; ok {
			f.p("// %s is the empty output of %s (the model defines none).", name, op)
			f.p("type %s struct{}", name)
			f.p("")
		}
	}
	return f, nil
}

func (g *gen) structType(f *file, name string, s *Shape) {
	f.p("// %s is the GameLift %s structure.", name, name)
	if len(s.Members) == 0 {
		f.p("type %s struct{}", name)
		f.p("")
		return
	}
	f.p("type %s struct {", name)
	for _, mn := range sortedKeys(s.Members) {
		f.p("%s %s `json:\"%s,omitzero\"`", mn, g.fieldType(s.Members[mn].Shape), mn)
	}
	f.p("}")
	f.p("")
}

func (g *gen) enumType(f *file, name string, s *Shape) {
	f.p("// %s is the GameLift %s enumeration.", name, name)
	f.p("type %s string", name)
	f.p("")
	f.p("// Values of %s.", name)
	f.p("const (")
	for i, v := range s.Enum {
		c := g.enumConsts[name][i]
		f.p("// %s is %s %s.", c, name, strconv.Quote(v))
		f.p("%s %s = %s", c, name, strconv.Quote(v))
	}
	f.p(")")
	f.p("")
}

// errorsFile renders zz_errors.go: an ErrorCode per exception shape and the modeled error
// table.
func (g *gen) errorsFile() (*file, error) {
	f := start()
	var names []string
	for _, n := range g.shapeNames {
		if g.m.Shapes[n].Exception {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("model has no exceptions")
	}
	f.p("// Modeled GameLift exceptions.")
	f.p("const (")
	for _, n := range names {
		f.p("// %s is the modeled GameLift exception of that name.", n)
		f.p("%s ErrorCode = %q", n, n)
	}
	f.p(")")
	f.p("")
	f.p("// modeledErrors holds the HTTP status and fault of every modeled exception.")
	f.p("var modeledErrors = map[ErrorCode]errorInfo{")
	for _, n := range names {
		if g.m.Shapes[n].Fault {
			f.p("%s: {500, true},", n)
		} else {
			f.p("%s: {400, false},", n)
		}
	}
	f.p("}")
	return f, nil
}
