package contain

import (
	"os/exec"
	"testing"
)

// BenchmarkStart compares starting /bin/true contained (without control groups, in an
// instance's groups, and in them where clone3 cannot start a process in a group) with starting
// it plainly (the baseline, in the same run).
func BenchmarkStart(b *testing.B) {
	if !Probe().Available {
		b.Skip("cannot contain here: " + Probe().Reason)
	}
	root := sandbox(b, testUID)
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if err := exec.Command("/bin/true").Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	s := Spec{UID: testUID, GID: testUID, Root: root}
	b.Run("contained", func(b *testing.B) { benchContained(b, s) })
	s.Cgroups = cgroups(testGroup(b))
	b.Run("contained-in-cgroups", func(b *testing.B) { benchContained(b, s) })
	b.Run("contained-in-cgroups-without-clone3", func(b *testing.B) {
		defer cloneState.Store(cloneState.Swap(cloneRefused)) // as where clone3 cannot
		benchContained(b, s)
	})
}

// benchContained starts /bin/true contained as s says, b.N times.
func benchContained(b *testing.B, s Spec) {
	for b.Loop() {
		cmd := exec.Command("/bin/true")
		if err := s.Wrap(cmd); err != nil {
			b.Fatal(err)
		}
		err := cmd.Run()
		Started(cmd)
		if err != nil {
			b.Fatal(err)
		}
	}
}
