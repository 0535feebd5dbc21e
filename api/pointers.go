package api

// String returns a pointer to s.
func String(s string) *string { return &s }

// Int32 returns a pointer to v.
func Int32(v int32) *int32 { return &v }

// Int64 returns a pointer to v.
func Int64(v int64) *int64 { return &v }

// Bool returns a pointer to v.
func Bool(v bool) *bool { return &v }

// Float32 returns a pointer to v.
func Float32(v float32) *float32 { return &v }

// Float64 returns a pointer to v.
func Float64(v float64) *float64 { return &v }

// Deref returns *p, or the zero value when p is nil.
func Deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
