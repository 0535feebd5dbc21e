package bench

import (
	"context"
	"encoding/hex"
	"io"
	"regexp"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
)

var signTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var testCreds = &Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", Region: "eu-west-1"}

func TestJSONRequest(t *testing.T) {
	body, err := EncodeBody(ProtocolJSON, []byte(` { "AliasId" : "alias-1" } `))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := NewTemplate("http://127.0.0.1:9080", ProtocolJSON, "DescribeAlias", body, testCreds, signTime)
	if err != nil {
		t.Fatal(err)
	}
	r := tpl.Request(context.Background())
	if r.Method != "POST" || r.URL.String() != "http://127.0.0.1:9080/" {
		t.Errorf("request line = %s %s, want POST http://127.0.0.1:9080/", r.Method, r.URL)
	}
	wantHeaders := map[string]string{
		"X-Amz-Target": "GameLift.DescribeAlias",
		"Content-Type": "application/x-amz-json-1.1",
		"X-Amz-Date":   "20260102T030405Z",
	}
	checkHeaders(t, r.Header.Get, wantHeaders)
	if r.Header.Get("Smithy-Protocol") != "" {
		t.Error("a JSON request must not carry smithy-protocol")
	}
	checkBody(t, r.Body, `{"AliasId":"alias-1"}`)
	checkAuth(t, r.Header.Get("Authorization"),
		"content-length;content-type;host;x-amz-date;x-amz-target")
}

func TestCBORRequest(t *testing.T) {
	body, err := EncodeBody(ProtocolCBOR, []byte(`{"FleetId":"fleet-123","Limit":5}`))
	if err != nil {
		t.Fatal(err)
	}
	tpl, err := NewTemplate("http://h:1/prefix/", ProtocolCBOR, "DescribeGameSessions", body, testCreds, signTime)
	if err != nil {
		t.Fatal(err)
	}
	r := tpl.Request(context.Background())
	if got, want := r.URL.String(), "http://h:1/prefix/service/GameLift/operation/DescribeGameSessions"; got != want {
		t.Errorf("URL = %s, want %s", got, want)
	}
	checkHeaders(t, r.Header.Get, map[string]string{
		"Smithy-Protocol": "rpc-v2-cbor",
		"Content-Type":    "application/cbor",
		"Accept":          "application/cbor",
	})
	if r.Header.Get("X-Amz-Target") != "" {
		t.Error("a CBOR request must not carry X-Amz-Target")
	}
	// A definite-length map of 2, keys in deterministic order, Limit as unsigned int 5.
	want := "a2" + "654c696d6974" + "05" + "67466c6565744964" + "69666c6565742d313233"
	if got := hex.EncodeToString(tpl.Body()); got != want {
		t.Errorf("CBOR body = %s, want %s", got, want)
	}
	checkAuth(t, r.Header.Get("Authorization"),
		"accept;content-length;content-type;host;smithy-protocol;x-amz-date")
}

func TestCBORNestedValues(t *testing.T) {
	body, err := EncodeBody(ProtocolCBOR, []byte(`{"A":{"B":[1,-2,1.5,true,null,"x"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string][]any
	if err := cbor.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	list := got["A"]["B"]
	want := []any{uint64(1), int64(-2), 1.5, true, nil, "x"}
	if len(list) != len(want) {
		t.Fatalf("list = %#v, want %#v", list, want)
	}
	for i := range want {
		if list[i] != want[i] {
			t.Errorf("item %d = %#v (%T), want %#v (%T)", i, list[i], list[i], want[i], want[i])
		}
	}
}

func TestUnsignedRequestAndResign(t *testing.T) {
	tpl, err := NewTemplate("http://h", ProtocolJSON, "ListAliases", []byte("{}"), &Credentials{}, signTime)
	if err != nil {
		t.Fatal(err)
	}
	if a := tpl.Request(context.Background()).Header.Get("Authorization"); a != "" {
		t.Errorf("unsigned request has Authorization %q", a)
	}
	tpl, _ = NewTemplate("http://h", ProtocolJSON, "ListAliases", []byte("{}"), testCreds, signTime)
	first := tpl.Request(context.Background()).Header.Get("Authorization")
	if err := tpl.Sign(signTime.Add(5 * time.Minute)); err != nil {
		t.Fatal(err)
	}
	r := tpl.Request(context.Background())
	if r.Header.Get("Authorization") == first || r.Header.Get("X-Amz-Date") != "20260102T030905Z" {
		t.Errorf("re-signing did not refresh the signature: %v", r.Header)
	}
}

func TestBadInputs(t *testing.T) {
	for _, in := range []string{`[1]`, `{"A":`, `"x"`} {
		if _, err := EncodeBody(ProtocolJSON, []byte(in)); err == nil {
			t.Errorf("EncodeBody(%q) succeeded, want an error", in)
		}
	}
	if b, err := EncodeBody(ProtocolJSON, nil); err != nil || string(b) != "{}" {
		t.Errorf("empty input = %q, %v; want {}", b, err)
	}
	for _, u := range []string{"127.0.0.1:9080", "ftp://h", "http://"} {
		if _, err := NewTemplate(u, ProtocolJSON, "X", nil, nil, signTime); err == nil {
			t.Errorf("NewTemplate(%q) succeeded, want an error", u)
		}
	}
}

func checkHeaders(t *testing.T, get func(string) string, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if got := get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
}

func checkBody(t *testing.T, body io.Reader, want string) {
	t.Helper()
	b, err := io.ReadAll(body)
	if err != nil || string(b) != want {
		t.Errorf("body = %q, %v; want %q", b, err, want)
	}
}

func checkAuth(t *testing.T, got, signedHeaders string) {
	t.Helper()
	re := regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260102/eu-west-1/gamelift/aws4_request, ` +
		`SignedHeaders=` + regexp.QuoteMeta(signedHeaders) + `, Signature=[0-9a-f]{64}$`)
	if !re.MatchString(got) {
		t.Errorf("Authorization = %q, want SigV4 with scope 20260102/eu-west-1/gamelift and headers %s", got, signedHeaders)
	}
}
