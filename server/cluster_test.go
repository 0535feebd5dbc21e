package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/internal/pgtest"
	"github.com/hoist-gg/hoist/server"
)

// syncBuffer is a bytes.Buffer safe for a process's stderr and the test to share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// clusterNode is one `hoist server` process of a cluster on one PostgreSQL.
type clusterNode struct {
	addr, data string
	cmd        *exec.Cmd
	log        *syncBuffer
}

// startClusterNode starts `hoist server` as its own process on the store dsn, with its own
// data directory and a debug log the test reads.
func startClusterNode(t *testing.T, bin, dsn string) *clusterNode {
	t.Helper()
	return startClusterNodeAt(t, bin, dsn, freeAddr(t), t.TempDir())
}

// startClusterNodeAt is startClusterNode on a given address and data directory (a node that
// comes back).
func startClusterNodeAt(t *testing.T, bin, dsn, addr, data string) *clusterNode {
	t.Helper()
	n := &clusterNode{addr: addr, data: data, log: &syncBuffer{}}
	n.cmd = exec.Command(bin, "server", "--listen", n.addr, "--tls-listen=", "--s3-listen=", "--data", data,
		"--store", dsn, "--log-level", "debug", "--access-key-id", testKeyID, "--secret-access-key", testSecret)
	n.cmd.Stderr = n.log
	if err := n.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.cmd.Process.Kill()
		n.cmd.Wait()
		if t.Failed() && testing.Verbose() {
			os.Stderr.WriteString("--- log of node " + n.addr + "\n" + n.log.String())
		}
	})
	waitHealthy(t, n.addr)
	return n
}

// kill ends the node with SIGKILL and waits for it.
func (n *clusterNode) kill() {
	n.cmd.Process.Signal(syscall.SIGKILL)
	n.cmd.Wait()
}

func (n *clusterNode) url() string { return "http://" + n.addr }

// leads asks the node whether it leads (LeaderPath).
func (n *clusterNode) leads() bool {
	resp, err := http.Get("http://" + n.addr + server.LeaderPath)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// leader waits up to d for exactly one of nodes to lead and returns it.
func leader(t *testing.T, nodes []*clusterNode, d time.Duration) *clusterNode {
	t.Helper()
	var who *clusterNode
	eventually(t, d, "exactly one leader", func() bool {
		n := 0
		for _, c := range nodes {
			if c.leads() {
				n, who = n+1, c
			}
		}
		return n == 1
	})
	return who
}

// TestLeaderMovesWhenItIsKilled runs three `hoist server` processes on one PostgreSQL: one
// leads; kill -9 of the leader moves leadership to another within 10 s; a placement the dead
// leader was waiting on times out on the new leader, once, with one PlacementTimedOut event in
// the whole cluster.
func TestLeaderMovesWhenItIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three server processes")
	}
	dsn := pgtest.DSN(t)
	bin := buildHoist(t)
	var nodes []*clusterNode
	for range 3 {
		nodes = append(nodes, startClusterNode(t, bin, dsn))
	}
	first := leader(t, nodes, 10*time.Second)
	var rest []*clusterNode
	for _, n := range nodes {
		if n != first {
			rest = append(rest, n)
		}
	}
	gl := client("http://"+rest[0].addr, testKeyID, testSecret)
	ctx := context.Background()
	fleet := createAnywhereFleet(t, gl, "custom-cluster")
	if _, err := gl.CreateGameSessionQueue(ctx, &gamelift.CreateGameSessionQueueInput{Name: aws.String("cluster"), TimeoutInSeconds: aws.Int32(10),
		Destinations: []types.GameSessionQueueDestination{{DestinationArn: aws.String("arn:aws:gamelift:us-west-2::fleet/" + fleet)}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := gl.StartGameSessionPlacement(ctx, &gamelift.StartGameSessionPlacementInput{PlacementId: aws.String("waits-for-nothing"),
		GameSessionQueueName: aws.String("cluster"), MaximumPlayerSessionCount: aws.Int32(2)}); err != nil {
		t.Fatal(err)
	}

	first.kill()
	killed := time.Now()
	second := leader(t, rest, 10*time.Second)
	t.Logf("leadership moved to %s %v after the leader was killed", second.addr, time.Since(killed).Round(10*time.Millisecond))

	eventually(t, 20*time.Second, "the placement TIMED_OUT", func() bool {
		out, err := gl.DescribeGameSessionPlacement(ctx, &gamelift.DescribeGameSessionPlacementInput{PlacementId: aws.String("waits-for-nothing")})
		return err == nil && out.GameSessionPlacement.Status == types.GameSessionPlacementStateTimedOut
	})
	count := func() int {
		n := 0
		for _, c := range nodes {
			n += strings.Count(c.log.String(), `\"type\":\"PlacementTimedOut\",\"placementId\":\"waits-for-nothing\"`)
		}
		return n
	}
	eventually(t, 10*time.Second, "the PlacementTimedOut event taken", func() bool { return count() >= 1 })
	quiet := time.Now().Add(3 * time.Second) // longer than a delivery sweep
	eventually(t, 5*time.Second, "3 s without a second PlacementTimedOut", func() bool {
		if n := count(); n != 1 {
			t.Fatalf("PlacementTimedOut taken %d times in the cluster", n)
		}
		return time.Now().After(quiet)
	})
}

// TestEmbeddedNodeLeads: a server on the embedded store is a cluster of one and leads.
func TestEmbeddedNodeLeads(t *testing.T) {
	srv := startServer(t, server.Config{})
	n := &clusterNode{addr: srv.Addr()}
	eventually(t, 5*time.Second, "the embedded node leading", n.leads)
	if !srv.Leading() || !strings.HasPrefix(srv.NodeID(), "node-") {
		t.Errorf("Leading %v, NodeID %q", srv.Leading(), srv.NodeID())
	}
}

// TestNodesShareOneCA: two nodes on one PostgreSQL serve TLS certificates from one CA, so a
// client that trusts the first node's ca.crt trusts the second.
func TestNodesShareOneCA(t *testing.T) {
	dsn := pgtest.DSN(t)
	dataA := t.TempDir()
	a := startServer(t, server.Config{Store: dsn, DataDir: dataA, TLSListen: "127.0.0.1:0"})
	b := startServer(t, server.Config{Store: dsn, TLSListen: "127.0.0.1:0"})
	caPEM, err := os.ReadFile(filepath.Join(dataA, "tls", "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("node a's ca.crt holds no certificate")
	}
	for _, srv := range []*server.Server{a, b} {
		c, err := tls.Dial("tcp", srv.TLSAddr(), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			t.Errorf("TLS to %s with node a's CA: %v", srv.TLSAddr(), err)
			continue
		}
		c.Close()
	}
}
