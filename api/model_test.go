package api

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// testModel is the part of the stripped model (model/gamelift.json) the tests compare the
// generated code with.
type testModel struct {
	Operations map[string]struct {
		Name   string
		Input  *struct{ Shape string }
		Output *struct{ Shape string }
		Errors []struct{ Shape string }
	}
	Shapes map[string]struct {
		Type      string
		Members   map[string]struct{ Shape string }
		Required  []string
		Exception bool
		Fault     bool
		Pattern   string
		Enum      []string
	}
}

func loadModel(t *testing.T) *testModel {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("model", "gamelift.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m testModel
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return &m
}

func TestModelSize(t *testing.T) {
	m := loadModel(t)
	if len(m.Operations) != 120 || len(m.Shapes) != 616 {
		t.Errorf("model has %d operations and %d shapes, want 120 and 616", len(m.Operations), len(m.Shapes))
	}
}

// TestModelStripped checks that the committed model carries no documentation, HTTP bindings
// or examples, and that it is canonical: pretty-printed with sorted keys.
func TestModelStripped(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("model", "gamelift.json"))
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	forbidden := []string{"documentation", "http", "examples", "xmlNamespace", "serviceFullName"}
	walkKeys(doc, "", func(path, key string) {
		if slices.Contains(forbidden, key) {
			t.Errorf("model has %q at %s", key, path)
		}
	})
	var canon bytes.Buffer
	enc := json.NewEncoder(&canon)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(canon.Bytes(), b) {
		t.Error("model/gamelift.json is not canonical (pretty-printed, keys sorted); run scripts/update-model")
	}
}

func walkKeys(v any, path string, fn func(path, key string)) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			fn(path, k)
			walkKeys(e, path+"/"+k, fn)
		}
	case []any:
		for _, e := range v {
			walkKeys(e, path+"/[]", fn)
		}
	}
}

// TestGeneratedUpToDate regenerates the package from the committed model into a temporary
// directory and compares: the zz_*.go files and the model cannot drift apart.
func TestGeneratedUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the generator")
	}
	out := t.TempDir()
	cmd := exec.Command(goTool(), "run", "./gen", "-model", filepath.Join("model", "gamelift.json"), "-out", out, "-hand", ".")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("generator failed: %v\n%s", err, b)
	}
	want, _ := filepath.Glob(filepath.Join(out, "zz_*.go"))
	have, _ := filepath.Glob("zz_*.go")
	if len(want) != 4 || len(have) != len(want) {
		t.Fatalf("generator wrote %d files, package has %d", len(want), len(have))
	}
	for _, w := range want {
		name := filepath.Base(w)
		gen, _ := os.ReadFile(w)
		committed, err := os.ReadFile(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Equal(gen, committed) {
			t.Errorf("%s differs from what the generator writes; run go generate ./api", name)
		}
	}
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
