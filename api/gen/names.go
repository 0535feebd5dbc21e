package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// gen holds the model and the names chosen for it while the files are generated.
type gen struct {
	m          *Model
	shapeNames []string            // all shape names, sorted
	opNames    []string            // all operation names, sorted
	emptyOut   map[string]string   // operation name -> generated empty output type
	enumConsts map[string][]string // enum shape -> constant names, in value order
	used       map[string]bool     // exported top-level names taken so far
	hand       map[string]bool     // top-level names of the hand-written files
	needs      map[string]bool     // memo of needsCheck
}

// generatedNames are the fixed exported names of the generated files.
var generatedNames = []string{"Handlers", "Operations", "LookupOperation"}

func newGen(m *Model, hand map[string]bool) (*gen, error) {
	g := &gen{m: m, hand: hand, used: map[string]bool{}, emptyOut: map[string]string{},
		enumConsts: map[string][]string{}, needs: map[string]bool{}}
	g.shapeNames = sortedKeys(m.Shapes)
	g.opNames = sortedKeys(m.Operations)
	for _, n := range generatedNames {
		if err := g.claim(n); err != nil {
			return nil, err
		}
	}
	if err := g.claimShapes(); err != nil {
		return nil, err
	}
	if err := g.claimEmptyOutputs(); err != nil {
		return nil, err
	}
	g.nameEnumConsts()
	return g, nil
}

// claim reserves an exported name that must be exactly name.
func (g *gen) claim(name string) error {
	if g.used[name] || g.hand[name] {
		return fmt.Errorf("generated name %s is already taken", name)
	}
	g.used[name] = true
	return nil
}

// claimShapes reserves the names of generated types and error constants.
func (g *gen) claimShapes() error {
	for _, n := range g.shapeNames {
		s := g.m.Shapes[n]
		if s.Type == "structure" || s.Enum != nil {
			if err := g.claim(n); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimEmptyOutputs names an empty output type for every operation without an output shape.
func (g *gen) claimEmptyOutputs() error {
	for _, n := range g.opNames {
		if g.m.Operations[n].Output != nil {
			continue
		}
		name := n + "Output"
		if g.m.Shapes[name] != nil {
			return fmt.Errorf("%s has no output but shape %s exists", n, name)
		}
		if err := g.claim(name); err != nil {
			return err
		}
		g.emptyOut[n] = name
	}
	return nil
}

// nameEnumConsts names every enum value's constant: the shape name followed by the value in
// Go style. A name already taken gets the first free suffix _2, _3, ...; shapes are visited in
// name order and values in model order, so the result is deterministic.
func (g *gen) nameEnumConsts() {
	for _, n := range g.shapeNames {
		for _, v := range g.m.Shapes[n].Enum {
			base := n + goify(v)
			name := base
			for i := 2; g.used[name] || g.hand[name]; i++ {
				name = base + "_" + strconv.Itoa(i)
			}
			g.used[name] = true
			g.enumConsts[n] = append(g.enumConsts[n], name)
		}
	}
}

// goify turns an enum value into an identifier part: "c5.large" -> "C5Large",
// "IN_PROGRESS" -> "InProgress", "ipAddress" -> "IpAddress".
func goify(v string) string {
	parts := strings.FieldsFunc(v, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)))
	})
	var b strings.Builder
	for _, p := range parts {
		if p == strings.ToUpper(p) {
			p = strings.ToLower(p)
		}
		b.WriteString(strings.ToUpper(p[:1]) + p[1:])
	}
	if b.Len() == 0 {
		return "Empty"
	}
	return b.String()
}

// handNames returns the top-level names declared in the non-generated, non-test Go files of
// dir (a missing directory has none).
func handNames(dir string) (map[string]bool, error) {
	names := map[string]bool{}
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	for _, f := range files {
		base := filepath.Base(f)
		if strings.HasPrefix(base, "zz_") || strings.HasSuffix(base, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		addDeclNames(af, names)
	}
	return names, nil
}

func addDeclNames(f *ast.File, names map[string]bool) {
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil {
				names[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					names[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						names[n.Name] = true
					}
				}
			}
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// valueType is the Go type of a shape where it appears without a pointer: as a list element,
// a map value, or inside a pointer.
func (g *gen) valueType(name string) string {
	s := g.m.Shapes[name]
	switch s.Type {
	case "string":
		if s.Enum != nil {
			return name
		}
		return "string"
	case "list":
		return "[]" + g.valueType(s.Member.Shape)
	case "map":
		return "map[string]" + g.valueType(s.Value.Shape)
	case "structure":
		return name
	}
	return scalarTypes[s.Type]
}

// scalarTypes maps the model's scalar types to Go.
var scalarTypes = map[string]string{
	"integer": "int32", "long": "int64", "boolean": "bool", "double": "float64",
	"float": "float32", "timestamp": "Timestamp", "blob": "[]byte",
}

// fieldType is the Go type of a structure member of the named shape.
func (g *gen) fieldType(name string) string {
	switch g.m.Shapes[name].Type {
	case "list", "map", "blob":
		return g.valueType(name)
	}
	return "*" + g.valueType(name)
}

// isStruct reports whether a shape generates a struct type.
func (g *gen) isStruct(name string) bool {
	s := g.m.Shapes[name]
	return s.Type == "structure" && !s.Exception
}
