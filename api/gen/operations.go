package main

import (
	"fmt"
	"strings"
)

// operationsFile renders zz_operations.go: the Handlers struct, the Operations table and
// LookupOperation.
func (g *gen) operationsFile() (*file, error) {
	f := start("context")
	g.handlersType(f)
	f.p("// Operations is the table of all GameLift operations, in name order.")
	f.p("var Operations = []Operation{")
	for _, n := range g.opNames {
		if err := g.operationRow(f, n); err != nil {
			return nil, err
		}
	}
	f.p("}")
	f.p("")
	f.p("// operationIndex maps operation names to rows of Operations.")
	f.p("var operationIndex = func() map[string]*Operation {")
	f.p("m := make(map[string]*Operation, len(Operations))")
	f.p("for i := range Operations {")
	f.p("m[Operations[i].Name] = &Operations[i]")
	f.p("}")
	f.p("return m")
	f.p("}()")
	f.p("")
	f.p("// LookupOperation returns the operation named name, or nil when there is none.")
	f.p("func LookupOperation(name string) *Operation { return operationIndex[name] }")
	return f, nil
}

// outputType is the Go type name of an operation's output.
func (g *gen) outputType(op string) string {
	if o := g.m.Operations[op].Output; o != nil {
		return o.Shape
	}
	return g.emptyOut[op]
}

func (g *gen) handlersType(f *file) {
	f.p("// Handlers holds one handler per GameLift operation; a nil field means Hoist does not")
	f.p("// implement the operation, and Operation.Bind answers NotImplementedException for it.")
	f.p("//")
	f.p("// Beware the typed-nil trap: a handler that returns a nil *XOutput with a nil error hands")
	f.p("// the codecs a non-nil `any` holding a nil pointer. Codecs encode that as an empty")
	f.p("// structure, so returning nil output is allowed, but code that compares the erased")
	f.p("// output with nil must not expect true.")
	f.p("type Handlers struct {")
	for _, n := range g.opNames {
		in := g.m.Operations[n].Input.Shape
		f.p("// %s handles GameLift.%s.", n, n)
		f.p("%s func(context.Context, *%s) (*%s, error)", n, in, g.outputType(n))
	}
	f.p("}")
	f.p("")
}

func (g *gen) operationRow(f *file, n string) error {
	op := g.m.Operations[n]
	in := op.Input.Shape
	if !g.isStruct(in) {
		return fmt.Errorf("%s: input %s is not a structure", n, in)
	}
	if out := op.Output; out != nil && !g.isStruct(out.Shape) {
		return fmt.Errorf("%s: output %s is not a structure", n, out.Shape)
	}
	_, paginated := g.m.Shapes[in].Members["NextToken"]
	f.p("{")
	f.p("Name: %q,", n)
	f.p("Paginated: %v,", paginated)
	errs := make([]string, len(op.Errors))
	for i, e := range op.Errors {
		if !g.m.Shapes[e.Shape].Exception {
			return fmt.Errorf("%s: error %s is not an exception", n, e.Shape)
		}
		errs[i] = e.Shape
	}
	f.p("Errors: []ErrorCode{%s},", strings.Join(errs, ", "))
	f.p("NewInput: func() any { return new(%s) },", in)
	f.p("bind: func(h *Handlers) HandlerFunc {")
	f.p("if h == nil || h.%s == nil {", n)
	f.p("return nil")
	f.p("}")
	f.p("return func(ctx context.Context, in any) (any, error) { return h.%s(ctx, in.(*%s)) }", n, in)
	f.p("},")
	f.p("},")
	return nil
}
