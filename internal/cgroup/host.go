package cgroup

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// HostMemory is the host's physical memory in bytes (MemTotal of /proc/meminfo), the capacity
// local instances share.
func HostMemory() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("host memory: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			return parseKiB(rest)
		}
	}
	return 0, fmt.Errorf("host memory: /proc/meminfo has no MemTotal")
}

// parseKiB parses " 16318532 kB" into bytes.
func parseKiB(s string) (int64, error) {
	f := strings.Fields(s)
	if len(f) != 2 || f[1] != "kB" {
		return 0, fmt.Errorf("host memory: MemTotal %q is not in kB", strings.TrimSpace(s))
	}
	n, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("host memory: MemTotal %q is not a number", f[0])
	}
	return n * 1024, nil
}
