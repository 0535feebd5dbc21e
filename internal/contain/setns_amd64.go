//go:build linux && amd64

package contain

const setnsTrap = 308
