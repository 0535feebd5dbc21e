package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// goPattern translates a model pattern (ECMA-262 syntax) into Go's RE2 syntax and checks that
// it compiles the way the api package's fullMatch compiles it. The only construct of the
// GameLift model that RE2 lacks is the \uXXXX escape: it becomes \x{XXXX}, and a UTF-16
// surrogate pair written as two escapes (\uD800\uDC00) becomes the one code point it encodes
// (\x{10000}), as the XML-character patterns of the model intend.
func goPattern(src string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(src); i++ {
		c := src[i]
		if c != '\\' || i+1 >= len(src) {
			b.WriteByte(c)
			continue
		}
		if src[i+1] != 'u' {
			b.WriteString(src[i : i+2])
			i++
			continue
		}
		r, n, err := unicodeEscape(src[i:])
		if err != nil {
			return "", fmt.Errorf("pattern %q: %w", src, err)
		}
		fmt.Fprintf(&b, `\x{%X}`, r)
		i += n - 1
	}
	out := b.String()
	if _, err := regexp.Compile(`^(?s:` + out + `)$`); err != nil {
		return "", fmt.Errorf("pattern %q (as %q) does not compile in Go: %w", src, out, err)
	}
	return out, nil
}

// goString renders s as a Go string literal, raw when it can be (patterns read better so).
func goString(s string) string {
	if strings.ContainsAny(s, "`\r\n") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return "`" + s + "`"
}

// unicodeEscape decodes the \uXXXX escape (or surrogate pair of escapes) at the start of s
// and returns the code point and the number of bytes consumed.
func unicodeEscape(s string) (rune, int, error) {
	hi, err := hex4(s)
	if err != nil {
		return 0, 0, err
	}
	if hi < 0xD800 || hi > 0xDBFF {
		return hi, 6, nil
	}
	lo, err := hex4(s[6:])
	if err != nil || lo < 0xDC00 || lo > 0xDFFF {
		return 0, 0, fmt.Errorf("lone high surrogate in %q", s)
	}
	return 0x10000 + (hi-0xD800)<<10 + (lo - 0xDC00), 12, nil
}

// hex4 parses the \uXXXX escape at the start of s.
func hex4(s string) (rune, error) {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return 0, fmt.Errorf("bad \\u escape in %q", s)
	}
	v, err := strconv.ParseUint(s[2:6], 16, 32)
	if err != nil {
		return 0, fmt.Errorf("bad \\u escape in %q", s)
	}
	return rune(v), nil
}
