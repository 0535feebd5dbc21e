package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
)

// mainPackage matches a Go file's package clause for a command.
var mainPackage = regexp.MustCompile(`(?m)^package main\s*$`)

// buildGoSource makes `hoist dev ./cmd/mygame` work on a Go command's source directory: when
// target is a directory of a main package that names no launch path (no --launch-path, no
// spec file), it is built with `go build` into work and the binary becomes the target. Any
// other target is returned as it is. --watch then watches the built binary, which does not
// change: rebuild the binary yourself to redeploy.
func buildGoSource(o *devOptions, work string) error {
	if o.spec.LaunchPath != "" || !isMainPackage(o.target) {
		return nil
	}
	for _, name := range specFiles {
		if _, err := os.Stat(filepath.Join(o.target, name)); err == nil {
			return nil
		}
	}
	abs, err := filepath.Abs(o.target)
	if err != nil {
		return err
	}
	bin := filepath.Join(work, "go-build", filepath.Base(abs))
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = abs
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s: %v: %s", o.target, err, bytes.TrimSpace(out.Bytes()))
	}
	o.target = bin
	return nil
}

// isMainPackage reports whether dir holds Go files of package main.
func isMainPackage(dir string) bool {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && mainPackage.Match(b) {
			return true
		}
	}
	return false
}
