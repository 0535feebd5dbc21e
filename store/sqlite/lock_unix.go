//go:build unix

package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockDir takes an exclusive, non-blocking lock on dir/hoist.lock so that two stores (in one
// process or two) never share a directory: each keeps its own in-memory copy of the data. The
// kernel drops the lock when the process dies.
func lockDir(dir string) (unlock func() error, err error) {
	f, err := os.OpenFile(filepath.Join(dir, "hoist.lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite store: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("sqlite store: %s is in use by another store", dir)
		}
		return nil, fmt.Errorf("sqlite store: lock %s: %w", dir, err)
	}
	return f.Close, nil
}
