package api

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// validator collects constraint violations while generated validate methods walk an input.
// Messages follow the AWS wording ("Value 'x' at 'routingStrategy.fleetId' failed to satisfy
// constraint: ..."), with member paths in lowerCamel case as AWS writes them.
type validator struct {
	errs []string
}

// validatable is implemented by every generated structure type.
type validatable interface {
	validate(v *validator, path string)
}

// Validate checks in (a pointer to a generated input type) against the model's constraints:
// required members, lengths, ranges, enums and patterns. It returns an InvalidRequestException
// naming every violation, or nil.
func Validate(in any) *Error {
	s, ok := in.(validatable)
	if !ok {
		return nil
	}
	v := &validator{}
	s.validate(v, "")
	if len(v.errs) == 0 {
		return nil
	}
	n := len(v.errs)
	noun := "errors"
	if n == 1 {
		noun = "error"
	}
	return Errorf(InvalidRequestException, "%d validation %s detected: %s", n, noun, strings.Join(v.errs, "; "))
}

// member joins a parent path and a member name, lower-casing the member's first letter.
func member(path, name string) string {
	lc := strings.ToLower(name[:1]) + name[1:]
	if path == "" {
		return lc
	}
	return path + "." + lc
}

// index names the i-th element of a list member (1-based, as AWS does).
func index(path string, i int) string { return fmt.Sprintf("%s.%d.member", path, i+1) }

// key names the value of a map member under k.
func key(path, k string) string { return fmt.Sprintf("%s.%s", path, k) }

func (v *validator) fail(value, path, constraint string) {
	v.errs = append(v.errs, fmt.Sprintf("Value %s at '%s' failed to satisfy constraint: Member %s", value, path, constraint))
}

func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "..."
	}
	return "'" + s + "'"
}

func (v *validator) required(present bool, path string) {
	if !present {
		v.fail("null", path, "must not be null")
	}
}

func (v *validator) strLen(s, path string, min, max int) {
	n := utf8.RuneCountInString(s)
	if min >= 0 && n < min {
		v.fail(quote(s), path, fmt.Sprintf("must have length greater than or equal to %d", min))
	}
	if max >= 0 && n > max {
		v.fail(quote(s), path, fmt.Sprintf("must have length less than or equal to %d", max))
	}
}

func (v *validator) pattern(s, path string, re *regexp.Regexp, src string) {
	if !re.MatchString(s) {
		v.fail(quote(s), path, "must satisfy regular expression pattern: "+src)
	}
}

func (v *validator) enum(s, path string, values []string) {
	for _, e := range values {
		if s == e {
			return
		}
	}
	v.fail(quote(s), path, "must satisfy enum value set: ["+strings.Join(values, ", ")+"]")
}

func (v *validator) count(n int, path string, min, max int) {
	if min >= 0 && n < min {
		v.fail(fmt.Sprintf("'%d items'", n), path, fmt.Sprintf("must have length greater than or equal to %d", min))
	}
	if max >= 0 && n > max {
		v.fail(fmt.Sprintf("'%d items'", n), path, fmt.Sprintf("must have length less than or equal to %d", max))
	}
}

func (v *validator) intRange(n int64, path string, min, max *int64) {
	if min != nil && n < *min {
		v.fail(fmt.Sprintf("'%d'", n), path, fmt.Sprintf("must have value greater than or equal to %d", *min))
	}
	if max != nil && n > *max {
		v.fail(fmt.Sprintf("'%d'", n), path, fmt.Sprintf("must have value less than or equal to %d", *max))
	}
}

func (v *validator) floatRange(f float64, path string, min, max *float64) {
	if min != nil && f < *min {
		v.fail(fmt.Sprintf("'%g'", f), path, fmt.Sprintf("must have value greater than or equal to %g", *min))
	}
	if max != nil && f > *max {
		v.fail(fmt.Sprintf("'%g'", f), path, fmt.Sprintf("must have value less than or equal to %g", *max))
	}
}

// fullMatch compiles a model pattern so that it must match the whole value. Model patterns are
// ECMA-262 and mostly unanchored; Hoist anchors them (shared/reference/wire-protocol.md §10),
// with (?s) so that '.' also matches line breaks.
func fullMatch(src string) *regexp.Regexp {
	return regexp.MustCompile(`^(?s:` + src + `)$`)
}

func i64(n int64) *int64     { return &n }
func f64(f float64) *float64 { return &f }
