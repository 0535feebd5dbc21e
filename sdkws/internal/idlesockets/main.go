// Command idlesockets measures what idle SDK sockets cost the server: it serves a Hub on
// 127.0.0.1, starts itself again as a separate client process that opens -n sockets (each a
// distinct process ID, as real game servers would) and keeps them idle, then reports the
// server process's resident memory and the CPU it used during -idle. Run it with
//
//	go run ./sdkws/internal/idlesockets -n 1000 -idle 30s
//
// Only for measurements; nothing imports it.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/coder/websocket"

	"github.com/hoist-gg/hoist/sdkws"
	"github.com/hoist-gg/hoist/sdkws/sdkwstest"
)

func main() {
	n := flag.Int("n", 1000, "idle sockets to hold")
	idle := flag.Duration("idle", 30*time.Second, "how long to measure idle CPU")
	client := flag.String("client", "", "internal: dial this URL n times and wait")
	flag.Parse()
	if *client != "" {
		runClient(*client, *n)
		return
	}
	if err := runServer(*n, *idle); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func runServer(n int, idle time.Duration) error {
	hub := sdkws.New(sdkws.Config{Backend: &sdkwstest.Backend{}, Logger: slog.New(slog.DiscardHandler)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(ln, hub)
	baseRSS := rssKiB()
	cmd := exec.Command(os.Args[0], "-n", fmt.Sprint(n), "-client", "ws://"+ln.Addr().String()+"/sdk")
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		return err
	}
	defer cmd.Process.Kill()
	if line, _ := bufio.NewReader(out).ReadString('\n'); !strings.HasPrefix(line, "ready") {
		return fmt.Errorf("client: %q", line)
	}
	for deadline := time.Now().Add(10 * time.Second); hub.Sockets() < n && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond) // the last upgrades may still be finishing
	}
	if hub.Sockets() != n {
		return fmt.Errorf("server holds %d sockets, want %d", hub.Sockets(), n)
	}
	cpu0, t0 := cpuTime(), time.Now()
	time.Sleep(idle) // measuring idle cost over a wall-clock window is the point here
	cpu := cpuTime() - cpu0
	rss := rssKiB()
	fmt.Printf("sockets=%d rss=%.1fMiB (baseline %.1fMiB, %.1fKiB/socket) idle_cpu=%.3f%% of one core over %s\n",
		n, float64(rss)/1024, float64(baseRSS)/1024, float64(rss-baseRSS)/float64(n),
		100*cpu.Seconds()/time.Since(t0).Seconds(), idle)
	return nil
}

func runClient(u string, n int) {
	conns := make([]*websocket.Conn, 0, n)
	for i := range n {
		q := fmt.Sprintf("?Authorization=good&ComputeId=host-1&FleetId=fleet-1&pID=proc-%d", i)
		ws, _, err := websocket.Dial(context.Background(), u+q, nil)
		if err != nil {
			fmt.Printf("dial %d: %v\n", i, err)
			os.Exit(1)
		}
		conns = append(conns, ws)
	}
	fmt.Println("ready")
	select {}
}

func rssKiB() int64 {
	data, _ := os.ReadFile("/proc/self/status")
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), &kb)
			return kb
		}
	}
	return 0
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
