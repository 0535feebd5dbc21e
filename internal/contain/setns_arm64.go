//go:build linux && arm64

package contain

const setnsTrap = 268
