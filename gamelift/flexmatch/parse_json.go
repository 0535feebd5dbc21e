package flexmatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The JSON layer of Parse. A rule set body is strict JSON, as the service takes it: no
// comments, no trailing commas, no duplicate keys.
//
// Hoist: the guide's examples have all three (comments in Examples 1-4, a duplicated
// target/steps pair and later a trailing comma in Example 7); the API reference says
// comments are not allowed, so Hoist is strict and says where the problem is, rather than
// accept bodies the service refuses. checkStrictJSON finds those with their line; the parser
// then reads the body object by object, each object checked against the keys it may hold so
// that a misspelt key is an error rather than a silently ignored property.

// checkStrictJSON reports the first comment, trailing comma, duplicate key or other syntax
// error of body, with its line.
func checkStrictJSON(body []byte) error {
	if err := scanLexical(body); err != nil {
		return err
	}
	w := jsonWalker{body: body, dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	if tok != json.Delim('{') {
		return errors.New("the rule set body must be a JSON object")
	}
	if err := w.object(); err != nil {
		return err
	}
	if _, err := w.dec.Token(); err != io.EOF {
		return fmt.Errorf("line %d: unexpected text after the rule set's closing brace",
			lineAt(body, int(w.dec.InputOffset())))
	}
	return nil
}

// scanLexical finds comments and trailing commas outside strings: the two things JSON
// decoders report least clearly.
func scanLexical(body []byte) error {
	inString, escaped, lastComma := false, false, -1
	for i, c := range body {
		switch {
		case inString:
			inString, escaped = escaped || c != '"', !escaped && c == '\\'
		case c == '"':
			inString, lastComma = true, -1
		case c == '/' && i+1 < len(body) && (body[i+1] == '/' || body[i+1] == '*'):
			return fmt.Errorf("line %d: comments are not allowed in a rule set body", lineAt(body, i))
		case c == ',':
			lastComma = i
		case (c == '}' || c == ']') && lastComma >= 0:
			return fmt.Errorf("line %d: trailing comma before %q", lineAt(body, lastComma), c)
		case c != ' ' && c != '\t' && c != '\n' && c != '\r':
			lastComma = -1
		}
	}
	return nil
}

// lineAt is the 1-based line of byte offset off of body.
func lineAt(body []byte, off int) int {
	off = min(max(off, 0), len(body))
	return 1 + bytes.Count(body[:off], []byte{'\n'})
}

// jsonWalker walks a body's tokens to find duplicate keys.
type jsonWalker struct {
	body []byte
	dec  *json.Decoder
}

// value walks one value whose first token is next.
func (w *jsonWalker) value() error {
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	switch tok {
	case json.Delim('{'):
		return w.object()
	case json.Delim('['):
		for w.dec.More() {
			if err := w.value(); err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return w.syntax(err)
	}
	return nil
}

// object walks the rest of an object whose '{' was read, rejecting a key seen twice.
func (w *jsonWalker) object() error {
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		key, _ := tok.(string)
		if seen[key] {
			return fmt.Errorf("line %d: duplicate key %q", lineAt(w.body, int(w.dec.InputOffset())), key)
		}
		seen[key] = true
		if err := w.value(); err != nil {
			return err
		}
	}
	_, err := w.dec.Token()
	return w.syntax(err)
}

// syntax turns a decoder error into one that says the line; nil stays nil.
func (w *jsonWalker) syntax(err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return fmt.Errorf("line %d: invalid JSON: %s", lineAt(w.body, int(se.Offset)), se.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("invalid JSON: the rule set body ends too early")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}

// object is one JSON object of the body, with where it is (for error messages).
type object struct {
	where  string
	fields map[string]json.RawMessage
}

// decodeObject reads raw as an object whose keys must all be in allowed (when allowed is
// empty the caller checks the keys later, with checkKeys).
func decodeObject(where string, raw json.RawMessage, allowed ...string) (object, error) {
	o := object{where: where}
	if kind := jsonKind(raw); kind != "an object" {
		return o, fmt.Errorf("%s must be an object, got %s", where, kind)
	}
	if err := json.Unmarshal(raw, &o.fields); err != nil {
		return o, fmt.Errorf("%s: %w", where, err)
	}
	if len(allowed) == 0 {
		return o, nil
	}
	return o, o.checkKeys(allowed...)
}

// checkKeys rejects a key not in allowed, naming it (so that typos surface).
func (o object) checkKeys(allowed ...string) error {
	for _, k := range sortedKeys(o.fields) {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: unknown key %q (allowed: %s)", o.where, k, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// sortedKeys are m's keys in order, so that errors do not depend on map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// has reports whether the object has key.
func (o object) has(key string) bool {
	_, ok := o.fields[key]
	return ok
}

// str reads a string property; ok is false when it is absent.
func (o object) str(key string) (s string, ok bool, err error) {
	raw, ok := o.fields[key]
	if !ok {
		return "", false, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil || jsonKind(raw) != "a string" {
		return "", true, fmt.Errorf("%s: %s must be a string, got %s", o.where, key, shortJSON(raw))
	}
	return s, true, nil
}

// requiredStr reads a string property that must be present and not empty.
func (o object) requiredStr(key string) (string, error) {
	s, ok, err := o.str(key)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("%s: %s is required", o.where, key)
	case s == "":
		return "", fmt.Errorf("%s: %s must not be empty", o.where, key)
	}
	return s, nil
}

// oneOf reads an optional string property that must be one of values; absent gives def.
func (o object) oneOf(key, def string, values ...string) (string, error) {
	s, ok, err := o.str(key)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return def, nil
	case !slices.Contains(values, s):
		return "", fmt.Errorf("%s: %s must be one of %s, got %q", o.where, key, strings.Join(values, ", "), s)
	}
	return s, nil
}

// number reads an optional numeric property (nil when absent). Like the service, it takes a
// JSON number or a string holding one (the guide's batchDistance example writes "500").
func (o object) number(key string) (*float64, error) {
	raw, ok := o.fields[key]
	if !ok {
		return nil, nil
	}
	n, err := jsonNumber(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s %w", o.where, key, err)
	}
	return &n, nil
}

// bounded reads an optional numeric property that must be at least lo (and whole if whole).
func (o object) bounded(key string, lo float64, whole bool) (*float64, error) {
	n, err := o.number(key)
	if err != nil || n == nil {
		return n, err
	}
	if err := checkBound(*n, lo, whole); err != nil {
		return nil, fmt.Errorf("%s: %s %w", o.where, key, err)
	}
	return n, nil
}

// integer reads a whole-number property of at least lo; ok is false when it is absent.
func (o object) integer(key string, lo int) (n int, ok bool, err error) {
	f, err := o.bounded(key, float64(lo), true)
	if err != nil || f == nil {
		return 0, false, err
	}
	return int(*f), true, nil
}

// checkBound checks that n is at least lo and, if whole, a whole number; the error reads
// after the property's name.
func checkBound(n, lo float64, whole bool) error {
	switch {
	case whole && n != math.Trunc(n):
		return fmt.Errorf("must be a whole number, got %s", formatNum(n))
	case n < lo:
		return fmt.Errorf("must be at least %s, got %s", formatNum(lo), formatNum(n))
	case whole && n > 1e9:
		return fmt.Errorf("is too large: %s", formatNum(n))
	}
	return nil
}

// jsonNumber reads a JSON number, or a JSON string that holds one; the error reads after the
// property's name ("must be a number, got ...").
func jsonNumber(raw json.RawMessage) (float64, error) {
	text := string(bytes.TrimSpace(raw))
	if jsonKind(raw) == "a string" {
		if err := json.Unmarshal(raw, &text); err != nil || !isJSONNumber(text) {
			return 0, fmt.Errorf("must be a number, got %s", shortJSON(raw))
		}
	} else if jsonKind(raw) != "a number" {
		return 0, fmt.Errorf("must be a number, got %s", shortJSON(raw))
	}
	n, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(n, 0) {
		return 0, fmt.Errorf("is out of range: %s", text)
	}
	return n, nil
}

// isJSONNumber reports whether s is a number in JSON's syntax (no NaN, Inf, hex or spaces).
func isJSONNumber(s string) bool {
	return s != "" && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) && json.Valid([]byte(s))
}

// formatNum prints a number the way a rule set would write it.
func formatNum(n float64) string {
	return strconv.FormatFloat(n, 'g', -1, 64)
}

// list reads an optional array property as its raw elements.
func (o object) list(key string) ([]json.RawMessage, bool, error) {
	raw, ok := o.fields[key]
	if !ok {
		return nil, false, nil
	}
	var items []json.RawMessage
	if jsonKind(raw) != "an array" || json.Unmarshal(raw, &items) != nil {
		return nil, true, fmt.Errorf("%s: %s must be an array, got %s", o.where, key, shortJSON(raw))
	}
	return items, true, nil
}

// stringList reads raw as an array of strings; what names the value in the error.
func stringList(what string, raw json.RawMessage) ([]string, error) {
	var items []json.RawMessage
	if jsonKind(raw) != "an array" || json.Unmarshal(raw, &items) != nil {
		return nil, fmt.Errorf("%s must be a list of strings, got %s", what, shortJSON(raw))
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		var s string
		if jsonKind(it) != "a string" || json.Unmarshal(it, &s) != nil {
			return nil, fmt.Errorf("%s[%d] must be a string, got %s", what, i, shortJSON(it))
		}
		out = append(out, s)
	}
	return out, nil
}

// jsonKind names the kind of a JSON value, for error messages and type checks.
func jsonKind(raw json.RawMessage) string {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 {
		return "nothing"
	}
	switch t[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// shortJSON quotes a raw value for an error message, shortened if long.
func shortJSON(raw json.RawMessage) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}
