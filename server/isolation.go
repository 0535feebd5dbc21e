package server

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hoist-gg/hoist/hostd"
	"github.com/hoist-gg/hoist/internal/contain"
)

// Isolation modes of local instances (Config.Isolation; docs/isolation.md).
const (
	// IsolationAuto isolates instances when the host supports it, and warns when not.
	IsolationAuto = "auto"
	// IsolationOn isolates instances, and refuses to start when the host cannot.
	IsolationOn = "on"
	// IsolationOff runs instances as Hoist's own user, as before isolation existed.
	IsolationOff = "off"
)

// maxUID is the largest usable user ID (4294967295 is "no user").
const maxUID = 1<<32 - 2

// isolation decides whether local instances run contained; when they do not, it says so
// once in the log (and each instance adds a fleet event, hostd).
func (s *Server) isolation() (contain.Support, error) {
	var sup contain.Support
	if b := s.cfg.InstanceUIDBase; b != 0 && (b < 1000 || b > maxUID-hostd.UIDRange) {
		return sup, fmt.Errorf("instance UID base %d: want 1000 to %d (system users below, the largest user ID above)", b, maxUID-hostd.UIDRange)
	}
	switch s.cfg.Isolation {
	case "", IsolationAuto:
		sup = contain.Probe()
	case IsolationOn:
		if sup = contain.Probe(); !sup.Available {
			return sup, fmt.Errorf("isolation is on but this host cannot isolate instances: %s", sup.Reason)
		}
	case IsolationOff:
		sup = contain.Support{Reason: "isolation is off (--isolation off)"}
	default:
		return sup, fmt.Errorf("isolation %q: want auto, on or off", s.cfg.Isolation)
	}
	if !sup.Available {
		s.log.Warn("local instances are NOT isolated: build install scripts and game servers run as Hoist's own user and can read its data directory (docs/isolation.md)",
			"reason", sup.Reason)
	}
	return sup, nil
}

// checkDataDir refuses a data directory other users can write to (they could swap the
// store or the keys) and makes it readable by Hoist alone: the directory 0700, every file
// and directory in it that others could read tightened, with one warning when warn is set.
// Instance sandboxes are left alone: their files belong to the instances' users.
func (s *Server) checkDataDir(warn bool) error {
	dir := s.cfg.DataDir
	info, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("data directory %s is writable by other users (mode %04o): run chmod 700 on it", dir, info.Mode().Perm())
	}
	var fixed []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == filepath.Join(dir, "instances") {
			return fs.SkipDir
		}
		fi, err := d.Info()
		if err != nil || fi.Mode()&fs.ModeSymlink != 0 || fi.Mode().Perm()&0o077 == 0 {
			return err
		}
		fixed = append(fixed, p)
		return os.Chmod(p, fi.Mode().Perm()&^0o077)
	})
	if warn && len(fixed) > 0 {
		s.log.Warn("files in the data directory were readable by other users; now they are not", "count", len(fixed), "first", fixed[0])
	}
	return err
}
