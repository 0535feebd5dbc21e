// Command gameserver is a small real game built on Hoist's server SDK (serversdk): a TCP
// "guess the number" game. It is an example for game developers and a real OS process for
// Hoist's end-to-end tests.
//
// It reads its connection from the GAMELIFT_SDK_* environment (InitSDK), listens on -port,
// calls ProcessReady, and activates each game session it receives by picking a secret number
// from 1 to 100. A player connects over TCP and sends its player session ID as the first
// line; the server accepts it with AcceptPlayerSession (or answers "ERR ..." and hangs up),
// then answers each guess with "higher", "lower" or "correct". When the player leaves, the
// server calls RemovePlayerSession. On TerminateProcess it calls ProcessEnding and exits 0.
//
// It logs to stderr and to gameserver.log in its working directory (its LogPaths).
//
// Test hooks: -unhealthy (or HOIST_EXAMPLE_UNHEALTHY=1) reports unhealthy in every health
// check; -skip-ready (or HOIST_EXAMPLE_SKIP_READY=1) never calls ProcessReady.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/hoist-gg/hoist/serversdk"
)

// logFile is the game's log, in its working directory; ProcessReady names it in LogPaths, so
// the host uploads it as the game session's log when the process ends.
const logFile = "gameserver.log"

func main() {
	port := flag.Int("port", 7777, "TCP port players connect to (0: any free port)")
	unhealthy := flag.Bool("unhealthy", os.Getenv("HOIST_EXAMPLE_UNHEALTHY") == "1", "report unhealthy in every health check")
	skipReady := flag.Bool("skip-ready", os.Getenv("HOIST_EXAMPLE_SKIP_READY") == "1", "never call ProcessReady")
	flag.Parse()
	out := io.Writer(os.Stderr)
	if f, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err == nil {
		out = io.MultiWriter(os.Stderr, f) // the file named in ProcessReady's LogPaths
	}
	log := slog.New(slog.NewTextHandler(out, nil))
	if err := run(log, *port, *unhealthy, *skipReady); err != nil {
		log.Error("gameserver failed", "err", err)
		os.Exit(1)
	}
}

// game is the state of the process: at most one game session at a time, as the SDK tracks.
type game struct {
	log    *slog.Logger
	sdk    *serversdk.SDK
	mu     sync.Mutex
	secret int // 0 until a game session is active
	done   chan int
	ending sync.Once // TerminateProcess and SIGTERM may both arrive: end once
}

func run(log *slog.Logger, port int, unhealthy, skipReady bool) error {
	ctx := context.Background()
	g := &game{log: log, done: make(chan int, 1)}
	g.sdk = serversdk.New(serversdk.Options{Logger: log})
	if err := g.sdk.InitSDK(ctx, serversdk.ServerParameters{}); err != nil {
		return fmt.Errorf("InitSDK: %w", err)
	}
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", port))
	if err != nil {
		return err
	}
	port = ln.Addr().(*net.TCPAddr).Port // -port 0 picks a free port, as processes sharing a host need
	go g.serve(ln)
	if !skipReady {
		err := g.sdk.ProcessReady(ctx, serversdk.ProcessParameters{
			Port:               port,
			LogParameters:      serversdk.LogParameters{LogPaths: []string{logFile}},
			OnStartGameSession: g.onStart,
			OnProcessTerminate: g.onTerminate,
			OnHealthCheck:      func() bool { return !unhealthy },
		})
		if err != nil {
			return fmt.Errorf("ProcessReady: %w", err)
		}
		log.Info("gameserver ready", "port", port)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case code := <-g.done:
		ln.Close()
		os.Exit(code)
	case <-sig:
		g.onTerminate()
		ln.Close()
		os.Exit(<-g.done)
	}
	return nil
}

func (g *game) onStart(gs serversdk.GameSession) {
	g.mu.Lock()
	g.secret = 1 + rand.IntN(100)
	g.mu.Unlock()
	if err := g.sdk.ActivateGameSession(context.Background()); err != nil {
		g.log.Error("ActivateGameSession failed", "err", err)
		return
	}
	g.log.Info("game session active", "id", gs.GameSessionID)
}

func (g *game) onTerminate() { g.ending.Do(g.end) }

// end reports ProcessEnding, closes the SDK and hands the exit code to run.
func (g *game) end() {
	code := 0
	if err := g.sdk.ProcessEnding(context.Background()); err != nil {
		g.log.Error("ProcessEnding failed", "err", err)
		code = 1
	}
	g.sdk.Destroy()
	g.done <- code
}

func (g *game) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go g.play(c)
	}
}

// play runs one player's connection.
func (g *game) play(c net.Conn) {
	defer c.Close()
	ctx := context.Background()
	in := bufio.NewScanner(c)
	if !in.Scan() {
		return
	}
	psid := strings.TrimSpace(in.Text())
	if err := g.sdk.AcceptPlayerSession(ctx, psid); err != nil {
		fmt.Fprintf(c, "ERR %v\n", err)
		return
	}
	defer func() {
		if err := g.sdk.RemovePlayerSession(ctx, psid); err != nil {
			g.log.Error("RemovePlayerSession failed", "err", err)
		}
	}()
	fmt.Fprintln(c, "WELCOME guess a number from 1 to 100")
	for in.Scan() {
		fmt.Fprintln(c, g.judge(strings.TrimSpace(in.Text())))
	}
}

func (g *game) judge(line string) string {
	n, err := strconv.Atoi(line)
	if err != nil {
		return "ERR not a number"
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case n < g.secret:
		return "higher"
	case n > g.secret:
		return "lower"
	default:
		g.secret = 1 + rand.IntN(100)
		return "correct"
	}
}
