package agent

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// --run-as nobody: the agent's processes run as nobody with nobody's group only; root and
// unknown users are refused.
func TestRunAs(t *testing.T) {
	if os.Geteuid() != 0 {
		if _, err := lookupRunAs("nobody"); err == nil {
			t.Fatal("--run-as accepted without root")
		}
		t.Skip("switching users needs root")
	}
	for _, bad := range []string{"root", "0", "no-such-user-hoist"} {
		if _, err := lookupRunAs(bad); err == nil {
			t.Errorf("--run-as %s accepted", bad)
		}
	}
	r, err := lookupRunAs("nobody")
	if err != nil {
		t.Skip(err)
	}
	cmd := exec.Command("/bin/sh", "-c", "id -u; id -g; id -G")
	if err := r.hook(nil)(nil, cmd); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(out))
	uid, gid := itoa(r.uid), itoa(r.gid)
	if len(lines) != 3 || lines[0] != uid || lines[1] != gid || lines[2] != gid {
		t.Fatalf("id: %q, want uid %s and group %s only", out, uid, gid)
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }
