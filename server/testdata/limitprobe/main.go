// Command limitprobe runs inside a managed-fleet instance in the server's tests.
//
//	limitprobe bind FILE   writes where its binds land: the wildcard, the server's 127.0.0.1
//	                       and the instance's address (HOIST_INSTANCE_IP_ADDRESS)
//	limitprobe hog MIB     allocates and touches MIB MiB, 16 MiB at a time, then exits 0
package main

import (
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: limitprobe bind FILE | hog MIB")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "bind":
		report := bindReport(os.Getenv("HOIST_INSTANCE_IP_ADDRESS"))
		if err := os.WriteFile(os.Args[2], []byte(report), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	case "hog":
		mib, _ := strconv.Atoi(os.Args[2])
		hog(mib)
	}
}

// bindReport tries three binds and says, one line each, where they landed or why they failed.
func bindReport(instance string) string {
	var b strings.Builder
	for _, try := range [][2]string{{"wildcard", "0.0.0.0:0"}, {"server", "127.0.0.1:0"}, {"instance", instance + ":0"}} {
		l, err := net.Listen("tcp4", try[1])
		if err != nil {
			fmt.Fprintf(&b, "%s refused: %v\n", try[0], err)
			continue
		}
		fmt.Fprintf(&b, "%s bound %s\n", try[0], l.Addr())
		l.Close()
	}
	return b.String()
}

// hog keeps mib MiB of touched memory.
func hog(mib int) {
	var keep [][]byte
	for n := 0; n < mib; n += 16 {
		chunk := make([]byte, 16<<20)
		for i := 0; i < len(chunk); i += 4096 {
			chunk[i] = 1
		}
		keep = append(keep, chunk)
	}
	fmt.Println("survived", len(keep)*16, "MiB")
}
