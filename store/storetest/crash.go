package storetest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hoist-gg/hoist/store"
)

// crashEnv carries the backing location to the child process of Crash.
const crashEnv = "HOIST_STORETEST_CRASH_LOCATION"

// crashWritersEnv carries the number of concurrent writers to the child of Crash.
const crashWritersEnv = "HOIST_STORETEST_CRASH_WRITERS"

// concurrentCrashWriters is how many goroutines commit at once in CrashConcurrent's child.
const concurrentCrashWriters = 16

// crashAcks is how many acknowledged writes the parent waits for before it kills the child.
const crashAcks = 300

// Crash checks that every write an Update acknowledged survives kill -9 of the process that
// made it. It re-executes the test binary, running only the calling test, as a child that
// opens the store and commits records, printing each acknowledged ID, until the parent kills it
// with SIGKILL mid-stream; then the parent opens the same data and looks for every ID.
//
// fresh makes new backing data (a directory, a database DSN) and runs only in the parent;
// open opens a store on it and runs in both. Call Crash from a top-level test.
func Crash(t *testing.T, fresh func(t *testing.T) string, open func(location string) (store.Store, error)) {
	crash(t, fresh, open, 1)
}

// CrashConcurrent is Crash with concurrentCrashWriters goroutines committing at once in the
// child, so that the kill lands while many Updates (or one batch of them) are in flight.
func CrashConcurrent(t *testing.T, fresh func(t *testing.T) string, open func(location string) (store.Store, error)) {
	crash(t, fresh, open, concurrentCrashWriters)
}

func crash(t *testing.T, fresh func(t *testing.T) string, open func(string) (store.Store, error), writers int) {
	if loc, ok := os.LookupEnv(crashEnv); ok {
		n, err := strconv.Atoi(os.Getenv(crashWritersEnv))
		if err != nil || n < 1 {
			n = 1
		}
		crashChild(loc, open, n)
		return
	}
	if testing.Short() {
		t.Skip("crash test skipped in -short mode")
	}
	loc := fresh(t)
	acked := runAndKill(t, loc, writers)
	s, err := open(loc)
	must(t, "reopen after kill -9", err)
	defer s.Close()
	view(t, s, func(tx store.Tx) error {
		for _, id := range acked {
			if _, err := tx.Get("crash", id); err != nil {
				t.Errorf("acknowledged record %s lost: %v", id, err)
			}
		}
		return nil
	})
	insert(t, s, rec("crash", "after", "")) // the store still takes writes
}

// runAndKill runs the child until it has acknowledged crashAcks writes, kills it and returns
// every ID it acknowledged, including those printed just before it died.
func runAndKill(t *testing.T, loc string, writers int) []string {
	cmd := exec.Command(os.Args[0], "-test.run="+runPattern(t.Name()), "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+loc, crashWritersEnv+"="+strconv.Itoa(writers))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	must(t, "stdout pipe", err)
	must(t, "start child", cmd.Start())
	// A deadline, not a wait: if the child hangs, kill it so that the read below ends.
	deadline := time.AfterFunc(2*time.Minute, func() { cmd.Process.Kill() })
	defer deadline.Stop()
	acked, killed := readAcks(out, func() { cmd.Process.Kill() })
	io.Copy(io.Discard, out)
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child stopped after %d acknowledged writes (%v); stderr:\n%s", len(acked), err, stderr.String())
	}
	t.Logf("child acknowledged %d records before kill -9", len(acked))
	return acked
}

// readAcks reads "ack <id>... ." lines, calling kill once crashAcks IDs have been read and
// reading on until the pipe closes. A line cut short by the kill is not counted.
func readAcks(out io.Reader, kill func()) (acked []string, killed bool) {
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != "ack" || f[len(f)-1] != "." {
			continue
		}
		acked = append(acked, f[1:len(f)-1]...)
		if len(acked) >= crashAcks && !killed {
			kill()
			killed = true
		}
	}
	return acked, killed
}

// crashChild commits records from writers goroutines until it is killed, printing each
// acknowledged batch.
func crashChild(loc string, open func(string) (store.Store, error), writers int) {
	s, err := open(loc)
	if err != nil {
		fmt.Fprintln(os.Stderr, "child: open:", err)
		os.Exit(2)
	}
	var wg sync.WaitGroup
	for w := range writers {
		prefix := "r"
		if writers > 1 {
			prefix = fmt.Sprintf("w%02d-r", w)
		}
		wg.Go(func() { crashWriter(s, prefix) })
	}
	wg.Wait()
	os.Exit(3)
}

// crashWriter commits records with IDs starting with prefix, printing each acknowledged
// batch in one write so that lines of concurrent writers do not interleave.
func crashWriter(s store.Store, prefix string) {
	for i := 0; i < 1_000_000; i++ { // bounded, in case the parent is gone
		batch := []string{fmt.Sprintf("%s%06d", prefix, i)}
		if i%5 == 0 {
			batch = append(batch, fmt.Sprintf("%s%06d-b", prefix, i), fmt.Sprintf("%s%06d-c", prefix, i))
		}
		err := s.Update(ctx(), func(tx store.Tx) error {
			for _, id := range batch {
				if err := tx.Insert(&store.Record{Kind: "crash", ID: id, Data: []byte(id)}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "child: update:", err)
			os.Exit(2)
		}
		fmt.Printf("ack %s .\n", strings.Join(batch, " "))
	}
}

// runPattern is a -test.run pattern that matches exactly the test called name.
func runPattern(name string) string {
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}
