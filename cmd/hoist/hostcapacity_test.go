package main

import (
	"errors"
	"runtime"
	"testing"

	"github.com/hoist-gg/hoist/internal/cli"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64GiB": 64 << 30, "512MiB": 512 << 20, "1TiB": 1 << 40, "4096": 4096, "10B": 10, "2 GiB": 2 << 30} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GiB", "-1GiB", "0", "12GB", "1.5GiB", "99999999999TiB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestHostCapacityFlags(t *testing.T) {
	c, err := hostCapacity("", 0)
	if err != nil || c.MemoryBytes < 64<<20 || c.CPUs != runtime.NumCPU() {
		t.Fatalf("detected capacity %+v, %v", c, err)
	}
	c, err = hostCapacity("32GiB", 6)
	if err != nil || c.MemoryBytes != 32<<30 || c.CPUs != 6 {
		t.Fatalf("given capacity %+v, %v", c, err)
	}
	var ue *cli.UsageError
	if _, err := hostCapacity("lots", 0); !errors.As(err, &ue) {
		t.Fatalf("--host-memory lots: %v", err)
	}
	if _, err := hostCapacity("", -2); !errors.As(err, &ue) {
		t.Fatalf("--host-cpus -2: %v", err)
	}
}
