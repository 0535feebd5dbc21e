package main

import (
	"testing"

	"github.com/hoist-gg/hoist/server"
)

func TestFaultKind(t *testing.T) {
	for args, want := range map[string]string{"crash": server.FaultProcessCrash, "instance-loss": server.FaultInstanceLoss,
		"failing-store": server.FaultFailingStore, "boom": ""} {
		got, err := faultKind([]string{args})
		if got != want || (err == nil) != (want != "") {
			t.Errorf("faultKind(%q) = %q, %v", args, got, err)
		}
	}
	if _, err := faultKind(nil); err == nil {
		t.Error("faultKind() without a subcommand succeeded")
	}
}
