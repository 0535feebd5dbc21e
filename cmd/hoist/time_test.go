package main

import (
	"testing"
	"time"

	"github.com/hoist-gg/hoist/server"
)

func TestTimeRequest(t *testing.T) {
	for _, c := range []struct {
		args   []string
		target string
		ok     bool
	}{
		{nil, server.GetTimeTarget, true},
		{[]string{"advance", "90s"}, server.AdvanceTimeTarget, true},
		{[]string{"advance", "61"}, server.AdvanceTimeTarget, true},
		{[]string{"advance", "soon"}, "", false},
		{[]string{"set", "2026-12-01T10:00:00Z"}, server.SetTimeTarget, true},
		{[]string{"set", "tomorrow"}, "", false},
		{[]string{"rewind"}, "", false},
	} {
		target, _, err := timeRequest(c.args)
		if (err == nil) != c.ok || target != c.target {
			t.Errorf("timeRequest(%q) = %q, %v", c.args, target, err)
		}
	}
	if d, err := parseAdvance("1.5"); err != nil || d != 1500*time.Millisecond {
		t.Errorf("parseAdvance(1.5) = %v, %v", d, err)
	}
}
