package main

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"github.com/hoist-gg/hoist/gamelift"
	"github.com/hoist-gg/hoist/internal/cgroup"
	"github.com/hoist-gg/hoist/internal/cli"
)

// hostCapacity is the capacity `hoist server` gives its instance limits: --host-memory and
// --host-cpus, else what the host has (MemTotal, the CPUs this process may run on).
func hostCapacity(memory string, cpus int) (gamelift.HostCapacity, error) {
	var c gamelift.HostCapacity
	var err error
	switch {
	case memory != "":
		if c.MemoryBytes, err = parseSize(memory); err != nil {
			return c, &cli.UsageError{Err: fmt.Errorf("--host-memory: %w", err)}
		}
	default:
		c.MemoryBytes, _ = cgroup.HostMemory() // unknown (0) if /proc/meminfo cannot tell
	}
	if cpus < 0 {
		return c, &cli.UsageError{Err: fmt.Errorf("--host-cpus %d is negative", cpus)}
	}
	c.CPUs = cpus
	if cpus == 0 {
		c.CPUs = runtime.NumCPU()
	}
	return c, nil
}

// sizeUnits are the suffixes parseSize accepts.
var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}, {"", 0}}

// parseSize parses a positive byte count such as 64GiB, 512MiB or 1073741824.
func parseSize(s string) (int64, error) {
	for _, u := range sizeUnits {
		num, ok := strings.CutSuffix(s, u.suffix)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
		if err != nil || n <= 0 || n > (1<<62)>>u.shift {
			break
		}
		return n << u.shift, nil
	}
	return 0, fmt.Errorf("%q is not a size such as 64GiB, 512MiB or a number of bytes", s)
}
