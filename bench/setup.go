package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// placeholder matches {{Path.To.Value}} in an input template.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}\s]+)\s*\}\}`)

// Lookup follows a dotted path such as "Alias.AliasId" or "FleetIds.0" through decoded JSON
// (objects by member name, arrays by index) and returns the value found as text: strings
// as-is, anything else as its JSON encoding.
func Lookup(doc any, path string) (string, error) {
	cur := doc
	for _, part := range strings.Split(path, ".") {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[part]
			if !ok {
				return "", fmt.Errorf("path %q: no member %q", path, part)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i < 0 || i >= len(x) {
				return "", fmt.Errorf("path %q: bad index %q", path, part)
			}
			cur = x[i]
		default:
			return "", fmt.Errorf("path %q: %q is not inside an object or array", path, part)
		}
	}
	if s, ok := cur.(string); ok {
		return s, nil
	}
	b, err := json.Marshal(cur)
	return string(b), err
}

// Expand replaces every {{path}} in tmpl with Lookup(doc, path). A string value is inserted
// without quotes, so write the quotes in the template: {"AliasId":"{{Alias.AliasId}}"}.
func Expand(tmpl string, doc any) (string, error) {
	var firstErr error
	out := placeholder.ReplaceAllStringFunc(tmpl, func(m string) string {
		v, err := Lookup(doc, placeholder.FindStringSubmatch(m)[1])
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return v
	})
	return out, firstErr
}

// runSetup calls operation op once over awsJson1_1 with the given JSON input and returns its
// decoded JSON output. Any status other than 200 is an error that quotes the response body.
func runSetup(ctx context.Context, client *http.Client, endpoint, op, input string, creds *Credentials) (any, error) {
	body, err := EncodeBody(ProtocolJSON, []byte(input))
	if err != nil {
		return nil, fmt.Errorf("setup input: %w", err)
	}
	t, err := NewTemplate(endpoint, ProtocolJSON, op, body, creds, time.Now())
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(t.Request(ctx))
	if err != nil {
		return nil, fmt.Errorf("setup %s: %w", op, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("setup %s: %w", op, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("setup %s: HTTP %d: %s", op, resp.StatusCode, bytes.TrimSpace(out))
	}
	var doc any
	if err := json.Unmarshal(out, &doc); err != nil {
		return nil, fmt.Errorf("setup %s: output is not JSON: %w", op, err)
	}
	return doc, nil
}
