package main

import (
	"os"
	"testing"

	"github.com/hoist-gg/hoist/internal/contain"
)

// TestMain installs contain.Main: the dev tests run local instances contained, with the test
// binary as their init.
func TestMain(m *testing.M) {
	contain.Main()
	os.Exit(m.Run())
}
