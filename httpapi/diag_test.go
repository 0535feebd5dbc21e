package httpapi

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"

	smithycbor "github.com/aws/smithy-go/encoding/cbor"
)

// diagnose decodes body with the AWS SDK's own CBOR decoder (so a golden file also proves the
// client can read it) and prints it in CBOR diagnostic notation, one member per line, map keys
// sorted. Integers print as 5, floats always with a fraction or exponent (5.0), tags as 1(...).
func diagnose(body []byte) (string, error) {
	v, err := smithycbor.Decode(body)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	writeDiag(&b, v, "")
	b.WriteString("\n")
	return b.String(), nil
}

func writeDiag(b *strings.Builder, v smithycbor.Value, indent string) {
	switch v := v.(type) {
	case smithycbor.Map:
		writeDiagMap(b, v, indent)
	case smithycbor.List:
		if len(v) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range v {
			b.WriteString(indent + "  ")
			writeDiag(b, e, indent+"  ")
			if i < len(v)-1 {
				b.WriteString(",")
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "]")
	case *smithycbor.Tag:
		fmt.Fprintf(b, "%d(", v.ID)
		writeDiag(b, v.Value, indent)
		b.WriteString(")")
	default:
		b.WriteString(diagScalar(v))
	}
}

func writeDiagMap(b *strings.Builder, m smithycbor.Map, indent string) {
	if len(m) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{\n")
	keys := sortedKeys(m)
	for i, k := range keys {
		b.WriteString(indent + "  " + strconv.Quote(k) + ": ")
		writeDiag(b, m[k], indent+"  ")
		if i < len(keys)-1 {
			b.WriteString(",")
		}
		b.WriteString("\n")
	}
	b.WriteString(indent + "}")
}

func diagScalar(v smithycbor.Value) string {
	switch v := v.(type) {
	case smithycbor.String:
		return strconv.Quote(string(v))
	case smithycbor.Uint:
		return strconv.FormatUint(uint64(v), 10)
	case smithycbor.NegInt:
		return "-" + strconv.FormatUint(uint64(v), 10)
	case smithycbor.Float32:
		return diagFloat(float64(v)) + "_2"
	case smithycbor.Float64:
		return diagFloat(float64(v))
	case smithycbor.Bool:
		return strconv.FormatBool(bool(v))
	case smithycbor.Slice:
		return "h'" + hex.EncodeToString(v) + "'"
	case *smithycbor.Nil:
		return "null"
	}
	return fmt.Sprintf("<%T>", v)
}

func diagFloat(f float64) string {
	format := byte('f')
	if math.Abs(f) >= 1e15 || (f != 0 && math.Abs(f) < 1e-6) {
		format = 'g'
	}
	s := strconv.FormatFloat(f, format, -1, 64)
	if !math.IsInf(f, 0) && !math.IsNaN(f) && !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
