package api

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
)

var (
	wholeSecond = time.Date(2019, 9, 18, 19, 49, 51, 0, time.UTC)
	withMillis  = time.Date(2019, 9, 18, 19, 49, 51, 995_000_000, time.UTC)
)

func TestTimestampJSON(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		json string
	}{{withMillis, "1568836191.995"}, {wholeSecond, "1568836191"}} {
		b, err := json.Marshal(Time(tc.t))
		if err != nil || string(b) != tc.json {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tc.t, b, err, tc.json)
		}
		var got Timestamp
		if err := json.Unmarshal(b, &got); err != nil || !got.Equal(tc.t) {
			t.Errorf("Unmarshal(%s) = %v, %v", b, got, err)
		}
	}
	var got Timestamp
	if err := json.Unmarshal([]byte(`"2019-09-18T19:49:51.995Z"`), &got); err != nil || !got.Equal(withMillis) {
		t.Errorf("RFC 3339: %v, %v", got, err)
	}
	for _, bad := range []string{`"yesterday"`, `true`, `{}`} {
		if err := json.Unmarshal([]byte(bad), &got); err == nil {
			t.Errorf("Unmarshal(%s) succeeded", bad)
		}
	}
}

func TestTimestampCBOR(t *testing.T) {
	b, err := cbor.Marshal(Time(wholeSecond))
	if err != nil || !bytes.HasPrefix(b, []byte{0xc1, 0x1a}) { // tag 1, uint32
		t.Errorf("whole seconds encode as % x, %v; want tag 1 + integer", b, err)
	}
	f, err := cbor.Marshal(Time(withMillis))
	if err != nil || !bytes.HasPrefix(f, []byte{0xc1, 0xfb}) { // tag 1, float64
		t.Errorf("milliseconds encode as % x, %v; want tag 1 + float64", f, err)
	}
	for _, tc := range []struct {
		b    []byte
		want time.Time
	}{{b, wholeSecond}, {f, withMillis}} {
		var got Timestamp
		if err := cbor.Unmarshal(tc.b, &got); err != nil || !got.Equal(tc.want) {
			t.Errorf("Unmarshal(% x) = %v, %v; want %v", tc.b, got, err, tc.want)
		}
	}
	for _, untagged := range []any{1568836191, 1568836191.995, "2019-09-18T19:49:51Z", cbor.Tag{Number: 0, Content: "2019-09-18T19:49:51Z"}} {
		raw, _ := cbor.Marshal(untagged)
		var got Timestamp
		if err := cbor.Unmarshal(raw, &got); err == nil {
			t.Errorf("Unmarshal(%v) succeeded: %v", untagged, got)
		}
	}
}

// TestOneTagServesBothCodecs checks that the generated json tags with omitzero drive both
// encoding/json and fxamacker/cbor: absent members are omitted and names are kept.
func TestOneTagServesBothCodecs(t *testing.T) {
	in := &DescribeFleetEventsInput{FleetId: String("fleet-1"), StartTime: Time(withMillis)}
	j, err := json.Marshal(in)
	if err != nil || string(j) != `{"FleetId":"fleet-1","StartTime":1568836191.995}` {
		t.Errorf("JSON %s, %v", j, err)
	}
	c, err := cbor.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := cbor.Unmarshal(c, &m); err != nil || len(m) != 2 || m["FleetId"] != "fleet-1" {
		t.Errorf("CBOR map %v, %v", m, err)
	}
	var back DescribeFleetEventsInput
	if err := cbor.Unmarshal(c, &back); err != nil || !back.StartTime.Equal(withMillis) || Deref(back.FleetId) != "fleet-1" {
		t.Errorf("CBOR round trip %+v, %v", back, err)
	}
	if e, _ := cbor.Marshal(&DeleteAliasOutput{}); !bytes.Equal(e, []byte{0xa0}) {
		t.Errorf("empty output encodes as % x, want an empty map", e)
	}
}

// TestTimestampCBORBytes checks the hand-built encoding against the cbor library's own
// encoding of the same tag, across integer widths, signs and fractions.
func TestTimestampCBORBytes(t *testing.T) {
	for _, ms := range []int64{0, 1000, 23000, 24000, 255000, 256000, 65535000, 65536000,
		1568836191000, 1568836191995, -1000, -25000, -1500, 1 << 40 * 1000, 4102444800123} {
		ts := Timestamp{time.UnixMilli(ms).UTC()}
		got, err := ts.MarshalCBOR()
		if err != nil {
			t.Fatal(err)
		}
		var content any = ts.Unix()
		if ms%1000 != 0 {
			content = float64(ms) / 1000
		}
		want, _ := cbor.Marshal(cbor.Tag{Number: 1, Content: content})
		if !bytes.Equal(got, want) {
			t.Errorf("%d ms: got % x, want % x", ms, got, want)
		}
		var back Timestamp
		if err := back.UnmarshalCBOR(got); err != nil || !back.Equal(ts.Time) {
			t.Errorf("%d ms: round trip gave %v, %v", ms, back.Time, err)
		}
	}
}
