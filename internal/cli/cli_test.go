package cli

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testSet is a flag set with a string, an int and a repeatable flag.
func testSet() (*flag.FlagSet, *string, *int, *[]string) {
	fs := flag.NewFlagSet("hoist test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := fs.String("listen-addr", "a", "address")
	n := fs.Int("count", 1, "count")
	var list []string
	fs.Func("attr", "repeatable", func(v string) error { list = append(list, v); return nil })
	return fs, s, n, &list
}

func TestEnvName(t *testing.T) {
	if got := EnvName("access-key-id"); got != "HOIST_ACCESS_KEY_ID" {
		t.Errorf("EnvName = %q", got)
	}
}

// TestPrecedence: command line over environment over config file over default.
func TestPrecedence(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "hoist.json")
	os.WriteFile(cfg, []byte(`{"listen-addr": "file", "count": 7, "attr": ["x", "y"]}`), 0o600)
	t.Setenv("HOIST_LISTEN_ADDR", "env")
	fs, s, n, list := testSet()
	if err := Parse(fs, []string{"--config", cfg}); err != nil {
		t.Fatal(err)
	}
	if *s != "env" || *n != 7 || strings.Join(*list, ",") != "x,y" {
		t.Errorf("got %q %d %v; want env 7 [x y]", *s, *n, *list)
	}
	t.Setenv("HOIST_CONFIG", cfg)
	fs, s, n, _ = testSet()
	if err := Parse(fs, []string{"--listen-addr", "flag"}); err != nil {
		t.Fatal(err)
	}
	if *s != "flag" || *n != 7 {
		t.Errorf("got %q %d; want flag 7 (config from HOIST_CONFIG)", *s, *n)
	}
}

// TestUsageErrors: each mistake is a one-line *UsageError.
func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	unknown := filepath.Join(dir, "unknown.json")
	os.WriteFile(unknown, []byte(`{"nope": 1}`), 0o600)
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"count": "many"}`), 0o600)
	cases := map[string]struct {
		args []string
		env  string
		want string
	}{
		"unknown flag":        {[]string{"--nope"}, "", "flag provided but not defined: -nope"},
		"bad value":           {[]string{"--count", "x"}, "", `invalid value "x" for flag -count`},
		"bad env value":       {nil, "x", `invalid value "x" for HOIST_COUNT`},
		"unknown config key":  {[]string{"--config", unknown}, "", `has no flag "nope"`},
		"bad config value":    {[]string{"--config", bad}, "", `invalid value "many" for "count" in the config file`},
		"missing config file": {[]string{"--config", filepath.Join(dir, "none.json")}, "", "config file: open"},
	}
	for name, c := range cases {
		if c.env != "" {
			t.Setenv("HOIST_COUNT", c.env)
		} else {
			os.Unsetenv("HOIST_COUNT")
		}
		fs, _, _, _ := testSet()
		err := Parse(fs, c.args)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want a one-line UsageError with %q", name, err, c.want)
		}
	}
}

// TestHelp: -h and --help print the usage and return flag.ErrHelp.
func TestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		fs, _, _, _ := testSet()
		var out strings.Builder
		fs.SetOutput(&out)
		if err := Parse(fs, []string{arg}); !errors.Is(err, flag.ErrHelp) || !strings.Contains(out.String(), "-listen-addr") {
			t.Errorf("%s: %v, output %q", arg, err, out.String())
		}
	}
}

// TestCaptureAndTable: Capture stops Parse; Table has a row per flag with its variable.
func TestCaptureAndTable(t *testing.T) {
	sets := Capture(func() {
		fs, _, _, _ := testSet()
		if err := Parse(fs, nil); err != ErrCaptured {
			t.Errorf("Parse while capturing: %v", err)
		}
	})
	if len(sets) != 1 {
		t.Fatalf("captured %d sets", len(sets))
	}
	table := Table([]Command{{Name: "hoist test", Flags: sets[0], Defaults: map[string]string{"count": "2 × n"}}})
	for _, want := range []string{"| hoist test | `--listen-addr` | `HOIST_LISTEN_ADDR` | `a` | address |", "`2 × n`", "`HOIST_CONFIG`"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
