package awsjson

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

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
	Ratio   *float64          `json:"Ratio,omitzero"`
	On      *bool             `json:"On,omitzero"`
	When    *api.Timestamp    `json:"When,omitzero"`
	Inner   *inner            `json:"Inner,omitzero"`
	List    []inner           `json:"List,omitzero"`
	Strings []string          `json:"Strings,omitzero"`
	Map     map[string]string `json:"Map,omitzero"`
	Blob    []byte            `json:"Blob,omitzero"`
}

func TestDecodeInput(t *testing.T) {
	var s shape
	body := `{"Name":"n","Limit":5,"Ratio":1.5,"On":true,"When":1568836191.995,"Unknown":{"x":[1]},
		"Inner":{"FleetId":"fleet-1","Type":"SIMPLE"},"List":[{"FleetId":"a"},{}],"Strings":["x"],
		"Map":{"k":"v"},"Blob":"aGk=","Ratio":null}`
	if err := DecodeInput([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	if *s.Name != "n" || *s.Limit != 5 || !*s.On || s.Ratio != nil {
		t.Errorf("scalars: %+v", s)
	}
	if got := s.When.UTC().Format(time.RFC3339Nano); got != "2019-09-18T19:49:51.995Z" {
		t.Errorf("When = %s", got)
	}
	if *s.Inner.FleetId != "fleet-1" || s.Inner.Type != "SIMPLE" || len(s.List) != 2 || *s.List[0].FleetId != "a" {
		t.Errorf("nested: %+v", s)
	}
	if s.Map["k"] != "v" || string(s.Blob) != "hi" || s.Strings[0] != "x" {
		t.Errorf("map/blob: %+v", s)
	}
}

func TestDecodeInputEmpty(t *testing.T) {
	for _, body := range []string{"", "  \n", "{}", `{"When":null,"Inner":null,"List":null}`} {
		var s shape
		if err := DecodeInput([]byte(body), &s); err != nil {
			t.Errorf("%q: %v", body, err)
		}
		if s.Name != nil || s.Inner != nil || s.When != nil || s.List != nil {
			t.Errorf("%q: not empty: %+v", body, s)
		}
	}
}

func TestDecodeInputErrors(t *testing.T) {
	cases := []struct{ body, want string }{
		{`[]`, "must be a JSON object"},
		{`null`, "must be a JSON object"},
		{`"x"`, "must be a JSON object"},
		{`{"Limit":"5"}`, "member 'Limit' cannot be decoded from a JSON string"},
		{`{"Limit":5000000000}`, "member 'Limit'"},
		{`{"Limit":1.5}`, "member 'Limit'"},
		{`{"Inner":{"FleetId":5}}`, "member 'Inner.FleetId' cannot be decoded from a JSON number"},
		{`{"List":[{"Type":[]}]}`, "member 'List.Type'"},
		{`{"Name":"x"`, "unexpected end of JSON input"},
		{`{"Name":x}`, "malformed JSON at offset 9"},
		{`{"Name":"x"} {}`, "malformed JSON"},
		{`{"When":"yesterday"}`, "neither epoch seconds nor RFC 3339"},
		{`{"When":true}`, "timestamp true is not a number"},
		{`{"Blob":"!!"}`, "cannot decode"},
	}
	for _, c := range cases {
		var s shape
		err := DecodeInput([]byte(c.body), &s)
		if err == nil {
			t.Errorf("%s: no error", c.body)
			continue
		}
		if err.Code != api.SerializationException || !strings.Contains(err.Message, c.want) {
			t.Errorf("%s: got %v, want SerializationException containing %q", c.body, err, c.want)
		}
	}
}

func TestEncodeOutput(t *testing.T) {
	for _, out := range []any{nil, (*shape)(nil), &shape{}} {
		b, err := EncodeOutput(out)
		if err != nil || string(b) != "{}" {
			t.Errorf("%#v: %s, %v", out, b, err)
		}
	}
	s := &shape{Name: api.String("n"), When: api.Time(time.UnixMilli(1568836191995)),
		Inner: &inner{Type: "SIMPLE"}, List: []inner{}, Map: map[string]string{"k": "v"}}
	b, err := EncodeOutput(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Name":"n","When":1568836191.995,"Inner":{"Type":"SIMPLE"},"List":[],"Map":{"k":"v"}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestEncodeError(t *testing.T) {
	b := EncodeError(api.Errorf(api.NotFoundException, `alias "a<b>" not found`))
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	want := `alias "a<b>" not found`
	if m["__type"] != "NotFoundException" || m["message"] != want || m["Message"] != want || len(m) != 3 {
		t.Errorf("got %s", b)
	}
}

// FuzzDecodeInput checks that no body panics the decoder and that every failure is a
// SerializationException.
func FuzzDecodeInput(f *testing.F) {
	for _, seed := range []string{"", "{}", `{"Name":"x","Limit":1,"Inner":{"Type":"A"}}`,
		`{"List":[{},{"FleetId":null}],"When":1.5}`, `{"Map":{"a":"b"},"Blob":"aGk="}`, `[`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var s shape
		if err := DecodeInput(body, &s); err != nil && err.Code != api.SerializationException {
			t.Fatalf("%q: %v", body, err)
		}
		var in api.StartMatchmakingInput // maps of structures, lists, doubles
		if err := DecodeInput(body, &in); err != nil && err.Code != api.SerializationException {
			t.Fatalf("%q: %v", body, err)
		}
	})
}
