package api

import (
	"encoding/binary"
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

// MarshalCBOR writes tag 1 (0xc1) with an integer for whole seconds, else a float64. The bytes
// are built here rather than through cbor.Marshal: every timestamp of every response passes
// through this method.
func (t Timestamp) MarshalCBOR() ([]byte, error) {
	b := make([]byte, 1, 10)
	b[0] = 0xc1
	if t.UnixMilli()%1000 != 0 {
		b = append(b, 0xfb)
		return binary.BigEndian.AppendUint64(b, math.Float64bits(t.seconds())), nil
	}
	if s := t.Unix(); s < 0 {
		return appendCBORHead(b, 0x20, uint64(-1-s)), nil
	}
	return appendCBORHead(b, 0x00, uint64(t.Unix())), nil
}

// appendCBORHead appends a CBOR data item head of the given major type (already shifted into
// the top three bits) with argument n, in its shortest form.
func appendCBORHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major|byte(n))
	case n <= math.MaxUint8:
		return append(b, major|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, major|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, major|26), uint32(n))
	default:
		return binary.BigEndian.AppendUint64(append(b, major|27), n)
	}
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
