package api

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// Timestamp is a GameLift timestamp member. On awsJson1_1 it is epoch seconds as a JSON number
// with millisecond fraction; on RPC v2 CBOR it is CBOR tag 1 wrapping a float (or an integer
// for whole seconds). See shared/reference/wire-protocol.md §3 and §5.
type Timestamp struct{ time.Time }

// Time returns a pointer to a Timestamp holding t, truncated to milliseconds as GameLift does.
func Time(t time.Time) *Timestamp { return &Timestamp{t.UTC().Truncate(time.Millisecond)} }

func (t Timestamp) seconds() float64 { return float64(t.UnixMilli()) / 1000 }

// MarshalJSON writes epoch seconds, e.g. 1568836191.995.
func (t Timestamp) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, t.seconds(), 'f', -1, 64), nil
}

// UnmarshalJSON reads epoch seconds (a number) or, leniently, an RFC 3339 string.
func (t *Timestamp) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		p, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("timestamp %q is neither epoch seconds nor RFC 3339", s)
		}
		t.Time = p.UTC()
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("timestamp %s is not a number of epoch seconds", b)
	}
	t.Time = fromSeconds(f)
	return nil
}

// MarshalCBOR writes tag 1 with an integer for whole seconds, else a float64.
func (t Timestamp) MarshalCBOR() ([]byte, error) {
	if t.UnixMilli()%1000 == 0 {
		return cbor.Marshal(cbor.Tag{Number: 1, Content: t.Unix()})
	}
	return cbor.Marshal(cbor.Tag{Number: 1, Content: t.seconds()})
}

// UnmarshalCBOR reads tag 1 wrapping an integer or a float, as the Go SDK sends.
func (t *Timestamp) UnmarshalCBOR(b []byte) error {
	var tag cbor.Tag
	if err := cbor.Unmarshal(b, &tag); err != nil || tag.Number != 1 {
		return fmt.Errorf("timestamp must be CBOR tag 1 wrapping epoch seconds")
	}
	switch v := tag.Content.(type) {
	case uint64:
		t.Time = time.Unix(int64(v), 0).UTC()
	case int64:
		t.Time = time.Unix(v, 0).UTC()
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("timestamp is not finite")
		}
		t.Time = fromSeconds(v)
	default:
		return fmt.Errorf("timestamp tag 1 holds %T, want a number", v)
	}
	return nil
}

func fromSeconds(f float64) time.Time {
	ms := int64(math.Round(f * 1000))
	return time.UnixMilli(ms).UTC()
}
