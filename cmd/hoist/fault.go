package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/hoist-gg/hoist/server"
)

const faultUsage = `Usage:
  hoist fault crash --fleet FLEET --process PROCESS [flags]   kill a server process as a crash would
  hoist fault crash --game-session GAMESESSION [flags]        the same, for the process hosting it
  hoist fault instance-loss --fleet FLEET --instance INSTANCE  lose a managed fleet's instance
  hoist fault spot-interruption --fleet FLEET --instance INSTANCE
                                   the 2-minute spot notice; the instance is lost when it runs out
  hoist fault spot-interruption --game-server-group GROUP --instance INSTANCE
                                   the same for a FleetIQ instance: SPOT_TERMINATING, then reclaimed
  hoist fault spot-interruption --fleet FLEET --compute COMPUTE
                                   the same for a hoist agent's compute: deregistered when it runs out
  hoist fault partition --fleet FLEET --compute COMPUTE --for 30s
                                   cut a compute's websockets and refuse them for a while
  hoist fault slow-store --delay 200ms --for 30s
                                   add latency to every store write for a while
  hoist fault failing-store --for 30s [--fraction 0.5]
                                   fail store writes (all, or a fraction) for a while

crash and spot-interruption reach managed fleets' local instances and computes run by a hoist
agent (spot-interruption also FleetIQ instances); instance-loss reaches managed fleets' local
instances; partition reaches any compute connected to this server. The server must
run with --dev (docs/dev.md). Flags:
`

// runFault is `hoist fault`: it injects a fault into a dev-mode server.
func runFault(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c adminClient
	var f faultFlags
	fs := flag.NewFlagSet("hoist fault", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(fs.Output(), faultUsage); fs.PrintDefaults() }
	c.flags(fs)
	f.register(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	in := f.input()
	if in.Kind, err = faultKind(pos); err != nil {
		return err
	}
	var out server.InjectFaultOutput
	if err := c.call(ctx, server.InjectFaultTarget, in, &out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s injected:%s%s%s%s%s%s\n", out.Kind, labelled(" fleet ", out.FleetId),
		labelled(" game server group ", out.GameServerGroupName), labelled(" process ", out.ProcessId),
		labelled(" instance ", out.InstanceId), labelled(" compute ", out.ComputeName), labelled(" until ", out.Until))
	return nil
}

// faultFlags are `hoist fault`'s flags that say what to hit and how.
type faultFlags struct {
	in          server.InjectFaultInput
	span, delay time.Duration
}

// register adds the flags to fs.
func (f *faultFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.in.FleetId, "fleet", "", "fleet ID")
	fs.StringVar(&f.in.ProcessId, "process", "", "server process ID (crash)")
	fs.StringVar(&f.in.GameSessionId, "game-session", "", "game session ID whose process to crash (crash)")
	fs.StringVar(&f.in.InstanceId, "instance", "", "instance ID (instance-loss, spot-interruption)")
	fs.StringVar(&f.in.GameServerGroupName, "game-server-group", "", "FleetIQ game server group name or ARN of --instance (spot-interruption)")
	fs.StringVar(&f.in.ComputeName, "compute", "", "compute name (partition, spot-interruption)")
	fs.DurationVar(&f.span, "for", 0, "how long the fault lasts on the server's clock (partition, slow-store, failing-store)")
	fs.DurationVar(&f.delay, "delay", 0, "latency added to each store write (slow-store)")
	fs.Float64Var(&f.in.Fraction, "fraction", 0, "share of store writes that fail, 0 to 1; 0 means all (failing-store)")
}

// input is Hoist.InjectFault's input, without its Kind.
func (f *faultFlags) input() server.InjectFaultInput {
	in := f.in
	in.Seconds, in.Millis = f.span.Seconds(), f.delay.Milliseconds()
	return in
}

// faultKind maps `hoist fault`'s subcommand to Hoist.InjectFault's Kind.
func faultKind(pos []string) (string, error) {
	if len(pos) == 1 {
		switch pos[0] {
		case "crash":
			return server.FaultProcessCrash, nil
		case "instance-loss":
			return server.FaultInstanceLoss, nil
		case "spot-interruption":
			return server.FaultSpotInterruption, nil
		case "partition":
			return server.FaultComputePartition, nil
		case "slow-store":
			return server.FaultSlowStore, nil
		case "failing-store":
			return server.FaultFailingStore, nil
		}
	}
	return "", errors.New("usage: hoist fault crash|instance-loss|spot-interruption|partition|slow-store|failing-store [flags] (hoist fault -h)")
}

func labelled(label, v string) string {
	if v == "" {
		return ""
	}
	return label + v
}
