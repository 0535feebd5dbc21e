package cbor

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"

	smithycbor "github.com/aws/smithy-go/encoding/cbor"
	fxcbor "github.com/fxamacker/cbor/v2"

	"github.com/hoist-gg/hoist/api"
)

// The test shapes follow the generated types' conventions: pointer members tagged
// `json:"Name,omitzero"`, lists as slices of values, enums as typed strings.
type kind string

type inner struct {
	FleetId *string `json:"FleetId,omitzero"`
	Type    kind    `json:"Type,omitzero"`
}

type shape struct {
	Name    *string           `json:"Name,omitzero"`
	Limit   *int32            `json:"Limit,omitzero"`
	Big     *int64            `json:"Big,omitzero"`
	Ratio   *float64          `json:"Ratio,omitzero"`
	On      *bool             `json:"On,omitzero"`
	When    *api.Timestamp    `json:"When,omitzero"`
	Inner   *inner            `json:"Inner,omitzero"`
	List    []inner           `json:"List,omitzero"`
	Strings []string          `json:"Strings,omitzero"`
	Map     map[string]string `json:"Map,omitzero"`
	Blob    []byte            `json:"Blob,omitzero"`
}

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeInput(t *testing.T) {
	body, err := fxcbor.Marshal(map[string]any{
		"Name": "n", "Limit": 5, "Big": -7, "Ratio": 2, "On": true, "Unknown": []any{1, "x"},
		"When":  fxcbor.Tag{Number: 1, Content: 1568836191.995},
		"Inner": map[string]any{"FleetId": "fleet-1", "Type": "SIMPLE"},
		"List":  []any{map[string]any{"FleetId": "a"}, map[string]any{}},
		"Map":   map[string]any{"k": "v"}, "Blob": []byte("hi"), "Strings": nil,
	})
	if err != nil {
		t.Fatal(err)
	}
	var s shape
	if err := DecodeInput(body, &s); err != nil {
		t.Fatal(err)
	}
	if *s.Name != "n" || *s.Limit != 5 || *s.Big != -7 || *s.Ratio != 2 || !*s.On || s.Strings != nil {
		t.Errorf("scalars: %+v", s)
	}
	if got := s.When.UTC().Format(time.RFC3339Nano); got != "2019-09-18T19:49:51.995Z" {
		t.Errorf("When = %s", got)
	}
	if *s.Inner.FleetId != "fleet-1" || s.Inner.Type != "SIMPLE" || len(s.List) != 2 || *s.List[0].FleetId != "a" {
		t.Errorf("nested: %+v", s)
	}
	if s.Map["k"] != "v" || string(s.Blob) != "hi" {
		t.Errorf("map/blob: %+v", s)
	}
}

func TestDecodeInputIndefinite(t *testing.T) {
	// {_ "Name": (_ "a", "b"), "List": [_ {_ "FleetId": "f"}], "When": 1(1700000000), "Limit": null}
	body := mustHex(t, "bf 644e616d65 7f 6161 6162 ff 644c697374 9f bf 67466c6565744964 6166 ff ff"+
		"645768656e c1 1a6553f100 654c696d6974 f6 ff")
	var s shape
	if err := DecodeInput(body, &s); err != nil {
		t.Fatal(err)
	}
	if *s.Name != "ab" || len(s.List) != 1 || *s.List[0].FleetId != "f" || s.Limit != nil {
		t.Errorf("got %+v", s)
	}
	if s.When.Unix() != 1700000000 {
		t.Errorf("When = %v", s.When)
	}
}

func TestDecodeInputEmpty(t *testing.T) {
	// {}, {_ }, {"When": null, "Inner": null}
	whenNull := []byte{0xa2, 0x64, 'W', 'h', 'e', 'n', 0xf6, 0x65, 'I', 'n', 'n', 'e', 'r', 0xf6}
	for _, body := range [][]byte{nil, {0xa0}, {0xbf, 0xff}, whenNull} {
		var s shape
		if err := DecodeInput(body, &s); err != nil || s.Name != nil || s.When != nil || s.Inner != nil {
			t.Errorf("%x: %v %+v", body, err, s)
		}
	}
}

func TestDecodeInputErrors(t *testing.T) {
	cases := []struct{ name, hex, want string }{
		{"array top", "80", "must be a CBOR map"},
		{"null top", "f6", "must be a CBOR map"},
		{"float for int", "a1 654c696d6974 fb3ff8000000000000", "member 'Limit': a CBOR float or simple value cannot be decoded into int32"},
		{"bytes for string", "a1 644e616d65 426869", "member 'Name': a CBOR byte string cannot be decoded into string"},
		{"int32 overflow", "a1 654c696d6974 1a80000000", "member 'Limit': a CBOR positive integer cannot be decoded into int32 (out of range)"},
		{"int32 underflow", "a1 654c696d6974 3a80000000", "member 'Limit'"},
		{"text for int", "a1 654c696d6974 6135", "member 'Limit': a CBOR UTF-8 text string cannot be decoded into int32"},
		{"untagged timestamp", "a1 645768656e 1a6553f100", "tag 1"},
		{"tag 0 timestamp", "a1 645768656e c0 6131", "tag 1"},
		{"nested mismatch", "a1 65496e6e6572 a1 67466c656574496400", "member 'Inner': a CBOR positive integer cannot be decoded into string"},
		{"truncated", "a1 644e616d65 65616263", "unexpected end"},
		{"trailing data", "a0 a0", "extraneous data"},
		{"missing break", "bf 644e616d65 6161", "unexpected end"},
		{"huge length", "bb ffffffffffffffff", "unexpected end"},
		{"huge string", "a1 644e616d65 7b ffffffffffffffff", "unexpected end"},
		{"reserved info", "a1 644e616d65 1c", "reserved"},
		{"stray break", "a1 644e616d65 ff", "reserved"},
		{"invalid utf8", "a1 644e616d65 61ff", "UTF-8"},
	}
	for _, c := range cases {
		var s shape
		err := DecodeInput(mustHex(t, c.hex), &s)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		if err.Code != api.SerializationException || !strings.Contains(err.Message, c.want) {
			t.Errorf("%s: got %v, want SerializationException containing %q", c.name, err, c.want)
		}
	}
}

func TestDecodeInputLimits(t *testing.T) {
	deep := strings.Repeat("a1 6149", MaxDepth+1) + "a0"
	many := append([]byte{0xa1, 0x64, 'L', 'i', 's', 't', 0x9f}, make([]byte, 0, MaxItems+2)...)
	for range MaxItems + 1 {
		many = append(many, 0xa0)
	}
	many = append(many, 0xff)
	for name, body := range map[string][]byte{"deep": mustHex(t, deep), "many": many} {
		var s shape
		err := DecodeInput(body, &s)
		if err == nil || err.Code != api.SerializationException {
			t.Errorf("%s: got %v", name, err)
		}
	}
}

func TestEncodeOutput(t *testing.T) {
	for _, out := range []any{nil, (*shape)(nil), &shape{}} {
		b, err := EncodeOutput(out)
		if err != nil || hex.EncodeToString(b) != "a0" {
			t.Errorf("%#v: %x, %v", out, b, err)
		}
	}
	s := &shape{Name: api.String("n"), Limit: api.Int32(-3), When: api.Time(time.UnixMilli(1568836191995)),
		Inner: &inner{Type: "SIMPLE"}, List: []inner{{}}, Map: map[string]string{"k": "v"}}
	b, err := EncodeOutput(s)
	if err != nil {
		t.Fatal(err)
	}
	// Decode with the SDK's own CBOR decoder to check the value types it will see.
	v, err := smithycbor.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(smithycbor.Map)
	if len(m) != 6 {
		t.Errorf("want 6 members, got %d: %#v", len(m), m)
	}
	if m["Name"] != smithycbor.String("n") || m["Limit"] != smithycbor.NegInt(3) {
		t.Errorf("scalars: %#v %#v", m["Name"], m["Limit"])
	}
	tag, ok := m["When"].(*smithycbor.Tag)
	if !ok || tag.ID != 1 || tag.Value != smithycbor.Float64(1568836191.995) {
		t.Errorf("When: %#v", m["When"])
	}
	if in := m["Inner"].(smithycbor.Map); in["Type"] != smithycbor.String("SIMPLE") || len(in) != 1 {
		t.Errorf("Inner: %#v", in)
	}
	if l := m["List"].(smithycbor.List); len(l) != 1 || len(l[0].(smithycbor.Map)) != 0 {
		t.Errorf("List: %#v", l)
	}
	if b[0] != 0xa6 {
		t.Errorf("top-level map head %x, want definite a6", b[0])
	}
}

func TestEncodeError(t *testing.T) {
	b := EncodeError(api.Errorf(api.NotFoundException, "alias %q not found", "a"))
	v, err := smithycbor.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(smithycbor.Map)
	want := smithycbor.String(`alias "a" not found`)
	if m["__type"] != smithycbor.String("NotFoundException") || m["message"] != want || m["Message"] != want || len(m) != 3 {
		t.Errorf("got %#v", m)
	}
	long := strings.Repeat("x", 70000) + "\xff"
	v, err = smithycbor.Decode(EncodeError(&api.Error{Code: api.InvalidRequestException, Message: long}))
	if err != nil || len(v.(smithycbor.Map)["Message"].(smithycbor.String)) != 70003 {
		t.Errorf("long message: %v", err)
	}
}

// FuzzDecodeInput checks that no body panics the decoder and that every failure is a
// SerializationException.
func FuzzDecodeInput(f *testing.F) {
	seeds := []string{"", "a0", "bfff", "a1644e616d656161", "a1654c696d697405",
		"a1645768656ec11a6553f100", "a1644c697374819f a0 ff", "a2 65496e6e6572 a0 634d6170 a1 616b 6176"}
	for _, s := range seeds {
		f.Add(mustHex(f, s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var s shape
		if err := DecodeInput(body, &s); err != nil && err.Code != api.SerializationException {
			t.Fatalf("%x: %v", body, err)
		}
		var in api.StartMatchmakingInput // maps of structures, lists, doubles
		if err := DecodeInput(body, &in); err != nil && err.Code != api.SerializationException {
			t.Fatalf("%x: %v", body, err)
		}
	})
}
