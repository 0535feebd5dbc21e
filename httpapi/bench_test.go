package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	fxcbor "github.com/fxamacker/cbor/v2"

	"github.com/hoist-gg/hoist/api"
)

// The benchmarks compare Hoist's front with bare net/http handlers doing the same work by hand:
// read the body, decode DescribeAliasInput, read the fake store, encode the output.

var (
	benchJSONBody = []byte(`{"AliasId":"alias-1"}`)
	benchCBORBody = []byte{0xa1, 0x67, 'A', 'l', 'i', 'a', 's', 'I', 'd', 0x67, 'a', 'l', 'i', 'a', 's', '-', '1'}
)

// bareHandler is the baseline: no routing, no validation, no request IDs, no error mapping.
func bareHandler(st *fakeStore, useCBOR bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in api.DescribeAliasInput
		unmarshal, marshal, ct := json.Unmarshal, json.Marshal, "application/x-amz-json-1.1"
		if useCBOR {
			unmarshal, marshal, ct = fxcbor.Unmarshal, fxcbor.Marshal, "application/cbor"
		}
		if err := unmarshal(body, &in); err != nil || in.AliasId == nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		a, _ := st.alias(*in.AliasId)
		out, _ := marshal(&api.DescribeAliasOutput{Alias: &a})
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write(out)
	})
}

type benchCase struct {
	name    string
	handler http.Handler
	path    string
	header  http.Header
	body    []byte
}

func benchCases() []benchCase {
	st := newFakeStore()
	hoist := New(Config{Handlers: fakeHandlers(st)})
	jsonHeader := http.Header{"X-Amz-Target": {"GameLift.DescribeAlias"}, "Content-Type": {"application/x-amz-json-1.1"}}
	cborHeader := http.Header{"Smithy-Protocol": {"rpc-v2-cbor"}, "Content-Type": {"application/cbor"}}
	cborPath := "/service/GameLift/operation/DescribeAlias"
	return []benchCase{
		{"bare-json", bareHandler(st, false), "/", jsonHeader, benchJSONBody},
		{"hoist-json", hoist, "/", jsonHeader, benchJSONBody},
		{"bare-cbor", bareHandler(st, true), cborPath, cborHeader, benchCBORBody},
		{"hoist-cbor", hoist, cborPath, cborHeader, benchCBORBody},
	}
}

// recorder is a ResponseWriter that keeps nothing between requests but its header map.
type recorder struct {
	h      http.Header
	status int
	n      int
}

func (r *recorder) Header() http.Header         { return r.h }
func (r *recorder) WriteHeader(s int)           { r.status = s }
func (r *recorder) Write(b []byte) (int, error) { r.n += len(b); return len(b), nil }

// BenchmarkServeHTTP measures the handlers in process: decode, store read, encode.
func BenchmarkServeHTTP(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			body := bytes.NewReader(c.body)
			req := httptest.NewRequest(http.MethodPost, c.path, body)
			req.Header = c.header
			w := &recorder{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(c.body)
				req.Body = io.NopCloser(body)
				req.ContentLength = int64(len(c.body))
				clear(w.h)
				w.status = 0
				c.handler.ServeHTTP(w, req)
			}
			if w.status != 0 && w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		})
	}
}

// BenchmarkEndToEnd measures whole requests over loopback with a keep-alive client.
func BenchmarkEndToEnd(b *testing.B) {
	for _, c := range benchCases() {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.handler)
			defer srv.Close()
			client := srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, bytes.NewReader(c.body))
				req.Header = c.header.Clone()
				resp, err := client.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatalf("status %d", resp.StatusCode)
				}
			}
		})
	}
}
