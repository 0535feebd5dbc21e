package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fxamacker/cbor/v2"
)

// fakeHoist answers CreateAlias (JSON) with an alias ID and DescribeAlias in both protocols,
// and answers 400 to any request whose protocol headers, signature scope or input are wrong.
type fakeHoist struct {
	calls atomic.Int64
}

func (f *fakeHoist) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AK/") ||
		!strings.Contains(r.Header.Get("Authorization"), "/us-east-1/gamelift/aws4_request") {
		http.Error(w, "bad signature "+r.Header.Get("Authorization"), http.StatusBadRequest)
		return
	}
	var in map[string]any
	switch {
	case r.URL.Path == "/" && r.Header.Get("Content-Type") == "application/x-amz-json-1.1":
		if r.Header.Get("X-Amz-Target") == "GameLift.CreateAlias" {
			_, _ = io.WriteString(w, `{"Alias":{"AliasId":"alias-42","Name":"bench"}}`)
			return
		}
		if r.Header.Get("X-Amz-Target") != "GameLift.DescribeAlias" || json.Unmarshal(body, &in) != nil {
			http.Error(w, "bad JSON request", http.StatusBadRequest)
			return
		}
	case r.URL.Path == "/service/GameLift/operation/DescribeAlias" &&
		r.Header.Get("Smithy-Protocol") == "rpc-v2-cbor" && r.Header.Get("Accept") == "application/cbor" &&
		r.Header.Get("Content-Type") == "application/cbor" && r.Header.Get("X-Amz-Target") == "":
		if cbor.Unmarshal(body, &in) != nil {
			http.Error(w, "bad CBOR body", http.StatusBadRequest)
			return
		}
		w.Header().Set("Smithy-Protocol", "rpc-v2-cbor")
	default:
		http.Error(w, "unexpected request "+r.URL.Path, http.StatusBadRequest)
		return
	}
	if in["AliasId"] != "alias-42" {
		http.Error(w, "wrong AliasId", http.StatusBadRequest)
		return
	}
	_, _ = w.Write([]byte("{}"))
}

func benchArgs(endpoint string, extra ...string) []string {
	return append([]string{
		"--endpoint", endpoint, "--setup", "CreateAlias",
		"--setup-input", `{"Name":"bench","RoutingStrategy":{"Type":"TERMINAL","Message":"m"}}`,
		"--input", `{"AliasId":"{{Alias.AliasId}}"}`, "--protocol", "both",
		"--requests", "40", "--warmup", "0", "--concurrency", "4",
		"--access-key-id", "AK", "--secret-access-key", "SK", "--region", "us-east-1",
	}, extra...)
}

func TestMainEndToEnd(t *testing.T) {
	fake := &fakeHoist{}
	srv := httptest.NewServer(fake)
	defer srv.Close()
	var out bytes.Buffer
	if err := Main(context.Background(), benchArgs(srv.URL, "--json"), &out); err != nil {
		t.Fatalf("Main: %v\n%s", err, out.String())
	}
	var rep Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out.String())
	}
	want := []string{"bare/json", "hoist/json", "bare/cbor", "hoist/cbor"}
	if len(rep.Rows) != len(want) {
		t.Fatalf("report has %d rows, want %v:\n%s", len(rep.Rows), want, out.String())
	}
	for i, row := range rep.Rows {
		if got := row.Target + "/" + string(row.Protocol); got != want[i] || row.Mode != "max" {
			t.Errorf("row %d = %s %s, want %s max", i, got, row.Mode, want[i])
		}
		if row.Requests != 40 || row.Errors != 0 || row.RPS <= 0 || row.Latency.P50 <= 0 || row.VsBareRPS <= 0 {
			t.Errorf("row %s: %+v, want 40 requests, 0 errors, measured latency and ratio", want[i], row)
		}
	}
	if rep.Rows[0].VsBareRPS != 1 || !rep.Signed {
		t.Errorf("bare row ratio = %v, signed = %v; want 1, true", rep.Rows[0].VsBareRPS, rep.Signed)
	}
	if n := fake.calls.Load(); n != 81 {
		t.Errorf("fake hoist got %d calls, want 1 setup + 80 measured", n)
	}
}

func TestMainHalfLoadTable(t *testing.T) {
	srv := httptest.NewServer(&fakeHoist{})
	defer srv.Close()
	var out bytes.Buffer
	args := benchArgs(srv.URL, "--rate", "half", "--protocol", "cbor", "--requests", "20")
	if err := Main(context.Background(), args, &out); err != nil {
		t.Fatalf("Main: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"vs bare req/s", "p99.9", "bare  cbor   max", "hoist  cbor  half"} {
		if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "FAILED") {
		t.Errorf("unexpected failures:\n%s", text)
	}
}

func TestMainReportsErrorsLoudly(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"__type":"NotFoundException"}`, http.StatusBadRequest)
	}))
	defer srv.Close()
	var out bytes.Buffer
	args := []string{"--endpoint", srv.URL, "--protocol", "json", "--requests", "10", "--warmup", "0",
		"--concurrency", "2", "--rate", "2000"}
	err := Main(context.Background(), args, &out)
	if !errors.Is(err, ErrRequestsFailed) {
		t.Fatalf("Main error = %v, want ErrRequestsFailed", err)
	}
	for _, want := range []string{"10 REQUESTS FAILED", "hoist/json/2000/s: HTTP 400", "NotFoundException"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

func TestMainFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"--baseline-only", "--protocol", "xml"},
		{"--baseline-only", "--rate", "fast"},
		{"--baseline-only", "--setup", "CreateAlias"},
		{"--baseline-only", "--concurrency", "0"},
		{"--baseline-only", "extra"},
	} {
		if err := Main(context.Background(), args, io.Discard); err == nil {
			t.Errorf("Main(%q) succeeded, want an error", args)
		}
	}
	if err := Main(context.Background(), []string{"-h"}, io.Discard); err != nil {
		t.Errorf("Main(-h) = %v, want nil", err)
	}
}

// TestMainSpreadsOverSeveralEndpoints: with several --endpoint URLs the clients are spread
// over them (the setup call goes to the first).
func TestMainSpreadsOverSeveralEndpoints(t *testing.T) {
	a, b := &fakeHoist{}, &fakeHoist{}
	sa, sb := httptest.NewServer(a), httptest.NewServer(b)
	defer sa.Close()
	defer sb.Close()
	var out bytes.Buffer
	if err := Main(context.Background(), benchArgs(sa.URL+","+sb.URL, "--protocol", "cbor"), &out); err != nil {
		t.Fatalf("Main: %v\n%s", err, out.String())
	}
	if na, nb := a.calls.Load(), b.calls.Load(); na+nb != 41 || nb < 10 || na < 11 {
		t.Errorf("calls: %d on the first endpoint, %d on the second; want 1 setup + 40 spread over both", na, nb)
	}
}
