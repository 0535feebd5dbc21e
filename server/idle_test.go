package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"

	"github.com/hoist-gg/hoist/serversdk"
)

// TestMeasureIdleProcesses is a measurement, not a check: with HOIST_MEASURE_IDLE=N it starts
// `hoist server` as its own process, connects N server processes with Hoist's server SDK (each
// InitSDK with a compute auth token, ProcessReady, and the SDK's 60 s heartbeats), then reports
// the server's resident memory and the CPU it used over HOIST_MEASURE_SECONDS (default 60).
//
//	HOIST_MEASURE_IDLE=1000 go test ./server -run TestMeasureIdleProcesses -v -timeout 30m
func TestMeasureIdleProcesses(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("HOIST_MEASURE_IDLE"))
	if n <= 0 {
		t.Skip("set HOIST_MEASURE_IDLE=N to measure the server with N idle connected processes")
	}
	seconds, _ := strconv.Atoi(os.Getenv("HOIST_MEASURE_SECONDS"))
	if seconds <= 0 {
		seconds = 60
	}
	addr := freeAddr(t)
	proc := startHoist(t, buildHoist(t), addr, "--data", t.TempDir(), "--log-level", "warn")
	gl := client("http://"+addr, testKeyID, testSecret)
	fleet := createAnywhereFleet(t, gl, "custom-idle-lab")
	ctx := context.Background()
	reg, err := gl.RegisterCompute(ctx, &gamelift.RegisterComputeInput{FleetId: aws.String(fleet),
		ComputeName: aws.String("idle-host"), IpAddress: aws.String("127.0.0.1"), Location: aws.String("custom-idle-lab")})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gl.GetComputeAuthToken(ctx, &gamelift.GetComputeAuthTokenInput{FleetId: aws.String(fleet), ComputeName: aws.String("idle-host")})
	if err != nil {
		t.Fatal(err)
	}
	baseRSS := rssKiB(proc.Process.Pid)
	sdks := connectIdle(t, n, aws.ToString(reg.Compute.GameLiftServiceSdkEndpoint), fleet, aws.ToString(tok.AuthToken))
	defer func() {
		for _, s := range sdks {
			s.Destroy()
		}
	}()
	util, err := gl.DescribeFleetUtilization(ctx, &gamelift.DescribeFleetUtilizationInput{FleetIds: []string{fleet}})
	if err != nil || aws.ToInt32(util.FleetUtilization[0].ActiveServerProcessCount) != int32(n) {
		t.Fatalf("utilization after connecting: %v %+v", err, util)
	}
	cpu0, wall0 := cpuTicks(proc.Process.Pid), time.Now()
	<-time.After(time.Duration(seconds) * time.Second) // the measurement window itself
	cpu := float64(cpuTicks(proc.Process.Pid)-cpu0) / 100 / time.Since(wall0).Seconds()
	rss := rssKiB(proc.Process.Pid)
	t.Logf("%d idle processes: server RSS %.1f MiB (%.1f MiB before connecting, %.1f KiB per process), CPU %.2f%% of one core over %ds",
		n, float64(rss)/1024, float64(baseRSS)/1024, float64(rss-baseRSS)/float64(n), cpu*100, seconds)
}

// connectIdle connects n server processes and calls ProcessReady on each.
func connectIdle(t *testing.T, n int, url, fleet, token string) []*serversdk.SDK {
	sdks := make([]*serversdk.SDK, n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32)
	for i := range sdks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := serversdk.New(serversdk.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			sdks[i] = s
			p := serversdk.ServerParameters{WebSocketURL: url, ProcessID: fmt.Sprintf("idle-%05d", i),
				HostID: "idle-host", FleetID: fleet, AuthToken: token}
			if err := s.InitSDK(context.Background(), p); err != nil {
				errs <- err
				return
			}
			errs <- s.ProcessReady(context.Background(), serversdk.ProcessParameters{Port: 10000 + i%50000,
				OnHealthCheck: func() bool { return true }, OnProcessTerminate: func() {}})
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("connecting a process: %v", err)
		}
	}
	return sdks
}

// rssKiB reads a process's resident set size from /proc.
func rssKiB(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			v, _ := strconv.ParseInt(f[1], 10, 64)
			return v
		}
	}
	return 0
}

// cpuTicks reads a process's user+system CPU time in clock ticks (1/100 s) from /proc.
func cpuTicks(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+2:])
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return u + k
}
