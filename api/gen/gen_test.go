package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestGoPattern(t *testing.T) {
	for _, tc := range []struct{ in, out string }{
		{`[a-zA-Z0-9-\.]+`, `[a-zA-Z0-9-\.]+`},
		{`^[\u0031-\u0039]$`, `^[\x{31}-\x{39}]$`},
		{`[\u0020-\uD7FF\uD800\uDC00-\uDBFF\uDFFF]*`, `[\x{20}-\x{D7FF}\x{10000}-\x{10FFFF}]*`},
	} {
		got, err := goPattern(tc.in)
		if err != nil || got != tc.out {
			t.Errorf("goPattern(%q) = %q, %v; want %q", tc.in, got, err, tc.out)
		}
	}
	for _, bad := range []string{`\uD800x`, `\u12`, `(?<=a)b`} {
		if got, err := goPattern(bad); err == nil {
			t.Errorf("goPattern(%q) = %q, want an error", bad, got)
		}
	}
}

// TestModelPatterns translates every pattern of the committed model and checks a few
// translations accept what the model means.
func TestModelPatterns(t *testing.T) {
	m, err := readModel(filepath.Join("..", "model", "gamelift.json"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for name, s := range m.Shapes {
		if s.Pattern == "" {
			continue
		}
		n++
		if _, err := goPattern(s.Pattern); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n != 69 {
		t.Errorf("model has %d patterns, want 69", n)
	}
	p, _ := goPattern(m.Shapes["LaunchTemplateId"].Pattern)
	re := regexp.MustCompile(`^(?s:` + p + `)$`)
	if !re.MatchString("lt-\U0001F600") || re.MatchString("lt-\x01") {
		t.Errorf("%q does not accept exactly XML characters", p)
	}
}

func TestGoify(t *testing.T) {
	for in, want := range map[string]string{
		"ACTIVE": "Active", "c5.large": "C5Large", "IN_PROGRESS": "InProgress",
		"AMAZON_LINUX_2": "AmazonLinux2", "ipAddress": "IpAddress", "": "Empty", "c5.2xlarge": "C52xlarge",
	} {
		if got := goify(in); got != want {
			t.Errorf("goify(%q) = %q, want %q", in, got, want)
		}
	}
}

// tinyModel is a botocore-shaped model with documentation, HTTP bindings and name collisions.
const tinyModel = `{
  "version": "2.0", "documentation": "<p>doc</p>",
  "metadata": {"apiVersion": "1", "serviceId": "T", "xmlNamespace": "x", "protocols": ["json"]},
  "operations": {
    "DoIt": {"name": "DoIt", "http": {"method": "POST"}, "input": {"shape": "DoItInput"},
             "errors": [{"shape": "BadException"}], "documentation": "d"}
  },
  "shapes": {
    "DoItInput": {"type": "structure", "required": ["Kind"], "members": {
      "Kind": {"shape": "Kind", "documentation": "d"}, "NextToken": {"shape": "Str"}}},
    "Kind": {"type": "string", "enum": ["x-y", "X_Y", "Other"]},
    "KindXY": {"type": "structure", "members": {}},
    "Str": {"type": "string", "min": 1, "max": 3, "pattern": "^[\\u0061-\\u007A]+$"},
    "BadException": {"type": "structure", "exception": true, "members": {}}
  }
}`

func TestImportAndGenerate(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "service-2.json"), filepath.Join(dir, "model.json")
	if err := os.WriteFile(src, []byte(tinyModel), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(src, dst, "", ""); err != nil {
		t.Fatal(err)
	}
	stripped, _ := os.ReadFile(dst)
	for _, gone := range []string{"documentation", "http", "xmlNamespace", "version"} {
		if bytes.Contains(stripped, []byte(`"`+gone+`"`)) {
			t.Errorf("stripped model still has %q:\n%s", gone, stripped)
		}
	}
	out1, out2 := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	for _, out := range []string{out1, out2} {
		if err := run("", dst, out, dir); err != nil {
			t.Fatal(err)
		}
	}
	types := readFiles(t, out1, out2, "zz_types.go")
	for _, want := range []string{
		"KindXY_2 Kind = \"x-y\"", "KindXY_3 Kind = \"X_Y\"", "KindOther Kind = \"Other\"",
		"type KindXY struct{}", "type DoItOutput struct{}", "NextToken *string `json:\"NextToken,omitzero\"`",
	} {
		if !strings.Contains(types, want) {
			t.Errorf("zz_types.go lacks %q:\n%s", want, types)
		}
	}
	ops := readFiles(t, out1, out2, "zz_operations.go")
	if !strings.Contains(ops, "Paginated: true") || !strings.Contains(ops, "Errors:    []ErrorCode{BadException}") {
		t.Errorf("zz_operations.go:\n%s", ops)
	}
	val := readFiles(t, out1, out2, "zz_validate.go")
	if !strings.Contains(val, "fullMatch(`^[\\x{61}-\\x{7A}]+$`)") {
		t.Errorf("zz_validate.go:\n%s", val)
	}
}

// readFiles returns the named file of dir a after checking dir b has the same bytes.
func readFiles(t *testing.T, a, b, name string) string {
	t.Helper()
	x, err := os.ReadFile(filepath.Join(a, name))
	if err != nil {
		t.Fatal(err)
	}
	y, _ := os.ReadFile(filepath.Join(b, name))
	if !bytes.Equal(x, y) {
		t.Errorf("%s differs between two runs", name)
	}
	if !strings.HasPrefix(string(x), header) {
		t.Errorf("%s lacks the generated-code header", name)
	}
	return string(x)
}

func TestGenerateRefusesTakenNames(t *testing.T) {
	dir := t.TempDir()
	hand := "package api\n\ntype DoItInput struct{}\n"
	if err := os.WriteFile(filepath.Join(dir, "hand.go"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "service-2.json")
	if err := os.WriteFile(src, []byte(tinyModel), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := readModel(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := generate(m, filepath.Join(dir, "out"), dir); err == nil || !strings.Contains(err.Error(), "DoItInput") {
		t.Errorf("generate with a taken name: %v", err)
	}
	names, _ := handNames(dir)
	if !slices.Equal(sortedKeys(names), []string{"DoItInput"}) {
		t.Errorf("handNames = %v", names)
	}
}
