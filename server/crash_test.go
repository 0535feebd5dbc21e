package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/hoist-gg/hoist/internal/testwait"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/gamelift"
	"github.com/aws/aws-sdk-go-v2/service/gamelift/types"

	"github.com/hoist-gg/hoist/server"
)

// buildHoist compiles cmd/hoist into a temporary directory.
func buildHoist(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hoist")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/hoist")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startHoist starts `hoist server` as its own process with the test key pair and waits until
// it answers.
func startHoist(t *testing.T, bin, addr string, args ...string) *exec.Cmd {
	t.Helper()
	args = append([]string{"server", "--listen", addr, "--tls-listen=127.0.0.1:0", "--s3-listen=127.0.0.1:0", "--access-key-id", testKeyID, "--secret-access-key", testSecret}, args...)
	return startHoistWith(t, bin, addr, args...)
}

// startHoistWith starts bin with args and waits until addr answers.
func startHoistWith(t *testing.T, bin, addr string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "HOIST_ACCESS_KEY_ID=", "HOIST_SECRET_ACCESS_KEY=")
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitHealthy(t, addr)
	return cmd
}

// waitHealthy polls addr's /healthz until it answers, for at most 30 seconds.
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	testwait.Until(t, 30*time.Second, 20*time.Millisecond, "hoist answering on "+addr, func() bool {
		resp, err := http.Get("http://" + addr + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil
	})
}

// TestKill9LosesNothingAcknowledged creates aliases against a real `hoist server` process,
// SIGKILLs it mid-stream, restarts it on the same data, and finds every alias whose CreateAlias
// was answered.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	testKill9(t)
}

func testKill9(t *testing.T, extra ...string) {
	bin := buildHoist(t)
	data := t.TempDir()
	addr := freeAddr(t)
	args := append([]string{"--data", data}, extra...)
	proc := startHoist(t, bin, addr, args...)
	gl := client("http://"+addr, testKeyID, testSecret)

	acked := make(chan string, 10000)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			out, err := gl.CreateAlias(context.Background(), &gamelift.CreateAliasInput{
				Name:            aws.String(fmt.Sprintf("crash-%d", i)),
				RoutingStrategy: &types.RoutingStrategy{Type: types.RoutingStrategyTypeTerminal, Message: aws.String("m")},
			})
			if err != nil {
				return
			}
			acked <- aws.ToString(out.Alias.AliasId)
		}
	}()
	testwait.Until(t, 60*time.Second, 5*time.Millisecond, "50 acknowledged aliases", func() bool { return len(acked) >= 50 })
	proc.Process.Signal(syscall.SIGKILL)
	proc.Wait()
	<-done
	close(acked)

	startHoist(t, bin, addr, args...)
	n := 0
	for id := range acked {
		n++
		if _, err := gl.DescribeAlias(context.Background(), &gamelift.DescribeAliasInput{AliasId: aws.String(id)}); err != nil {
			t.Errorf("alias %s acknowledged before kill -9 is lost: %v", id, err)
		}
	}
	t.Logf("%d acknowledged aliases all survived kill -9", n)
}

// TestFirstStartGeneratesCredentials checks that a server with no key pair configured makes
// one, prints it, keeps it in the data directory, and reuses it on the next start.
func TestFirstStartGeneratesCredentials(t *testing.T) {
	bin := buildHoist(t)
	data := t.TempDir()
	addr := freeAddr(t)
	cmd := exec.Command(bin, "server", "--listen", addr, "--tls-listen=127.0.0.1:0", "--s3-listen=127.0.0.1:0", "--data", data)
	cmd.Env = append(os.Environ(), "HOIST_ACCESS_KEY_ID=", "HOIST_SECRET_ACCESS_KEY=")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	sc := bufio.NewScanner(stderr)
	var keyLine string
	for sc.Scan() {
		if strings.Contains(sc.Text(), "AWS_ACCESS_KEY_ID=") {
			keyLine = sc.Text()
			break
		}
	}
	go func() {
		for sc.Scan() {
		}
	}()
	b, err := os.ReadFile(filepath.Join(data, "credentials.json"))
	if err != nil {
		t.Fatalf("no credentials file: %v", err)
	}
	if keyLine == "" || !strings.Contains(string(b), "AKIA") {
		t.Fatalf("credentials not printed or not stored: %q / %s", keyLine, b)
	}
	if fi, _ := os.Stat(filepath.Join(data, "credentials.json")); fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	var creds server.Credentials
	if err := json.Unmarshal(b, &creds); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(keyLine, creds.AccessKeyID) || !strings.Contains(keyLine, creds.SecretAccessKey) {
		t.Errorf("printed line %q does not carry the stored pair", keyLine)
	}
	waitHealthy(t, addr)
	gl := client("http://"+addr, creds.AccessKeyID, creds.SecretAccessKey)
	if _, err := gl.ListAliases(context.Background(), &gamelift.ListAliasesInput{}); err != nil {
		t.Errorf("the generated key pair does not sign valid requests: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()

	// A second start keeps the stored pair.
	startHoistWith(t, bin, addr, "server", "--listen", addr, "--tls-listen=127.0.0.1:0", "--s3-listen=127.0.0.1:0", "--data", data)
	if _, err := gl.ListAliases(context.Background(), &gamelift.ListAliasesInput{}); err != nil {
		t.Errorf("after a restart the generated key pair no longer works: %v", err)
	}
	if again, _ := os.ReadFile(filepath.Join(data, "credentials.json")); string(again) != string(b) {
		t.Error("a restart replaced the stored key pair")
	}
}
