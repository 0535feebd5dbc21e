package notify_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDomainImports keeps notify a domain package: no HTTP, no SQL, no wire codec.
func TestDomainImports(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p == "net/http" || strings.HasPrefix(p, "net/http/") || p == "database/sql" || p == "encoding/xml" ||
			strings.HasPrefix(p, "github.com/hoist-gg/hoist/") && p != "github.com/hoist-gg/hoist/notify" &&
				p != "github.com/hoist-gg/hoist/store" && p != "github.com/hoist-gg/hoist/internal/clock" {
			t.Errorf("notify depends on %s", p)
		}
	}
}
