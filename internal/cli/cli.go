// Package cli holds the conventions every hoist command follows (docs/cli.md): each flag can
// also be set from an environment variable, HOIST_ and the flag's name upper-cased with dashes
// turned into underscores, and from a JSON config file named by --config (or HOIST_CONFIG);
// the command line wins over the environment, and the environment over the file. -h and
// --help are not errors, and a bad flag is reported in one line.
package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
)

// ConfigFlag is the flag, added to every command, naming the config file.
const ConfigFlag = "config"

// EnvPrefix starts every flag's environment variable.
const EnvPrefix = "HOIST_"

// EnvName returns the environment variable of the flag named name, e.g. HOIST_ACCESS_KEY_ID
// for access-key-id.
func EnvName(name string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// UsageError is a mistake on the command line, in the environment or in the config file: an
// unknown flag or a value a flag does not take.
type UsageError struct{ Err error }

// Error returns the one-line message.
func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *UsageError) Unwrap() error { return e.Err }

// Parse parses args into fs, adding the --config flag when fs has none, then sets each flag
// the command line left alone from its environment variable, else from the config file. It
// returns flag.ErrHelp, after printing the usage to fs.Output(), for -h and --help, and a
// *UsageError for anything wrong with the flags.
func Parse(fs *flag.FlagSet, args []string) error {
	if fs.Lookup(ConfigFlag) == nil {
		fs.String(ConfigFlag, "", "JSON file of flag names and values (docs/cli.md); the environment and the command line win over it")
	}
	if captured(fs) {
		return ErrCaptured
	}
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printUsage(fs)
		return err
	case err != nil:
		return &UsageError{err}
	}
	return fillUnset(fs)
}

// printUsage writes fs's usage (its Usage function when it has one) to fs.Output().
func printUsage(fs *flag.FlagSet) {
	if fs.Usage != nil {
		fs.Usage()
		return
	}
	fmt.Fprintf(fs.Output(), "Usage of %s:\n", fs.Name())
	fs.PrintDefaults()
}

// fillUnset sets the flags the command line did not from the environment and the config file.
func fillUnset(fs *flag.FlagSet) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set[ConfigFlag] {
		if v, ok := os.LookupEnv(EnvName(ConfigFlag)); ok {
			fs.Set(ConfigFlag, v)
		}
	}
	file, err := readConfig(fs.Lookup(ConfigFlag).Value.String(), fs)
	if err != nil {
		return &UsageError{err}
	}
	var firstErr error
	fs.VisitAll(func(f *flag.Flag) {
		if set[f.Name] || f.Name == ConfigFlag || firstErr != nil {
			return
		}
		firstErr = fillOne(fs, f, file)
	})
	return firstErr
}

// fillOne sets f from its environment variable, else from the config file's values.
func fillOne(fs *flag.FlagSet, f *flag.Flag, file map[string][]string) error {
	if v, ok := os.LookupEnv(EnvName(f.Name)); ok {
		if err := fs.Set(f.Name, v); err != nil {
			return &UsageError{fmt.Errorf("invalid value %q for %s: %v", v, EnvName(f.Name), err)}
		}
		return nil
	}
	for _, v := range file[f.Name] {
		if err := fs.Set(f.Name, v); err != nil {
			return &UsageError{fmt.Errorf("invalid value %q for %q in the config file: %v", v, f.Name, err)}
		}
	}
	return nil
}

// readConfig reads a config file: a JSON object of flag names (without dashes) and values —
// strings, numbers, booleans, or arrays of them for repeatable flags. Empty path: no file.
func readConfig(path string, fs *flag.FlagSet) (map[string][]string, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %v", err)
	}
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("config file %s: not a JSON object: %v", path, err)
	}
	values := map[string][]string{}
	for _, name := range sortedKeys(doc) {
		if fs.Lookup(name) == nil || name == ConfigFlag {
			return nil, fmt.Errorf("config file %s: %s has no flag %q", path, fs.Name(), name)
		}
		vs, err := jsonValues(doc[name])
		if err != nil {
			return nil, fmt.Errorf("config file %s: %q: %v", path, name, err)
		}
		values[name] = vs
	}
	return values, nil
}

// jsonValues turns a config value into the text of one or more flag settings.
func jsonValues(raw json.RawMessage) ([]string, error) {
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil {
		var out []string
		for _, item := range list {
			s, err := jsonScalar(item)
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
	s, err := jsonScalar(raw)
	return []string{s}, err
}

// jsonScalar returns the text of a JSON string, number or boolean.
func jsonScalar(raw json.RawMessage) (string, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("want a string, number, boolean or an array of them, got %s", raw)
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ErrCaptured is what Parse returns while Capture collects flag sets.
var ErrCaptured = errors.New("cli: flag set captured")

var capture struct {
	sync.Mutex
	on   bool
	sets []*flag.FlagSet
}

// captured records fs and reports true while Capture runs.
func captured(fs *flag.FlagSet) bool {
	capture.Lock()
	defer capture.Unlock()
	if capture.on {
		capture.sets = append(capture.sets, fs)
	}
	return capture.on
}

// Capture runs f and returns the flag sets Parse was given meanwhile; Parse returns
// ErrCaptured instead of parsing, so a command stops before doing anything. It is how the
// flag reference (docs/cli.md) is generated from the commands themselves. Not for concurrent
// use with other parsing.
func Capture(f func()) []*flag.FlagSet {
	capture.Lock()
	capture.on, capture.sets = true, nil
	capture.Unlock()
	f()
	capture.Lock()
	defer capture.Unlock()
	capture.on = false
	return capture.sets
}
