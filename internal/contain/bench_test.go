package contain

import (
	"os/exec"
	"testing"
)

// BenchmarkStart compares starting /bin/true contained with starting it plainly (the
// baseline, in the same run).
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
	b.Run("contained", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("/bin/true")
			if err := (Spec{UID: testUID, GID: testUID, Root: root}).Wrap(cmd); err != nil {
				b.Fatal(err)
			}
			if err := cmd.Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
