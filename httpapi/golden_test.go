package httpapi

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the expected responses of testdata/*.golden")

// A golden file holds one case: the request, a separator line, and the expected response.
//
//	# comments
//	POST /service/GameLift/operation/DescribeAlias
//	Smithy-Protocol: rpc-v2-cbor
//	Content-Type: application/cbor
//
//	hex: a1 67416c6961734964   (CBOR as hex; '#' starts a comment) or the body as text
//	----------
//	200
//	Content-Type: application/cbor
//	X-Amzn-Requestid: <uuid>
//
//	the body: JSON re-indented with sorted keys; CBOR in diagnostic notation with sorted keys
const separator = "----------\n"

// goldenMaxBody is the body limit of the golden server, small so that the oversize cases fit.
const goldenMaxBody = 512

// shownHeaders are the response headers a golden file records.
var shownHeaders = []string{"Allow", "Content-Type", "Smithy-Protocol", "X-Amzn-Errortype", "X-Amzn-Requestid"}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func TestGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.golden"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	srv := httptest.NewServer(New(Config{Handlers: fakeHandlers(newFakeStore()), MaxBodyBytes: goldenMaxBody}))
	defer srv.Close()
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".golden"), func(t *testing.T) {
			runGolden(t, srv.URL, file)
		})
	}
}

func runGolden(t *testing.T, base, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	reqText, want, ok := strings.Cut(string(data), separator)
	if !ok {
		t.Fatalf("%s: no %q separator", file, strings.TrimSpace(separator))
	}
	req, err := parseRequest(base, reqText)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := renderResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(file, []byte(reqText+separator+got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("%s: response differs\n--- got\n%s--- want\n%s", file, got, want)
	}
}

// parseRequest reads the request part of a golden file.
func parseRequest(base, text string) (*http.Request, error) {
	var lines []string
	for _, l := range strings.SplitAfter(text, "\n") {
		if !strings.HasPrefix(l, "#") {
			lines = append(lines, l)
		}
	}
	head, body, _ := strings.Cut(strings.Join(lines, ""), "\n\n")
	hl := strings.Split(strings.TrimRight(head, "\n"), "\n")
	method, path, ok := strings.Cut(hl[0], " ")
	if !ok {
		return nil, fmt.Errorf("bad request line %q", hl[0])
	}
	raw, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	var rd io.Reader
	if len(raw) > 0 {
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return nil, err
	}
	for _, h := range hl[1:] {
		k, v, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("bad header line %q", h)
		}
		req.Header.Add(k, strings.TrimSpace(v))
	}
	return req, nil
}

// parseBody returns a body given as text, or as hex after "hex:" with '#' comments.
func parseBody(body string) ([]byte, error) {
	hx, ok := strings.CutPrefix(body, "hex:")
	if !ok {
		return []byte(strings.TrimSuffix(body, "\n")), nil
	}
	var clean strings.Builder
	sc := bufio.NewScanner(strings.NewReader(hx))
	for sc.Scan() {
		l, _, _ := strings.Cut(sc.Text(), "#")
		clean.WriteString(strings.Join(strings.Fields(l), ""))
	}
	return hex.DecodeString(clean.String())
}

// renderResponse writes the status, the headers that matter and the normalized body.
func renderResponse(resp *http.Response) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", resp.StatusCode)
	for _, k := range shownHeaders {
		for _, v := range resp.Header.Values(k) {
			if k == "X-Amzn-Requestid" && uuidRE.MatchString(v) {
				v = "<uuid>"
			}
			fmt.Fprintf(&b, "%s: %s\n", k, v)
		}
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	b.WriteString("\n")
	norm, err := normalizeBody(resp.Header.Get("Content-Type"), body)
	if err != nil {
		return "", fmt.Errorf("body %q: %w", body, err)
	}
	b.WriteString(norm)
	return b.String(), nil
}

func normalizeBody(contentType string, body []byte) (string, error) {
	switch {
	case len(body) == 0:
		return "", nil
	case contentType == "application/cbor":
		return diagnose(body)
	case strings.HasPrefix(contentType, "application/x-amz-json"):
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			return "", err
		}
		var out strings.Builder // maps marshal with sorted keys
		enc := json.NewEncoder(&out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		err := enc.Encode(v)
		return out.String(), err
	}
	return string(body) + "\n", nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
