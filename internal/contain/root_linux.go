package contain

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Where the init builds the new root: a tmpfs mounted over /tmp (in the private namespace
// only) becomes a scratch root holding the new root and the old one; see buildRoot.
const (
	scratch = "/tmp"
	newRoot = "/newroot"
	oldRoot = "/oldroot"
)

// buildRoot replaces this mount namespace's view with the contained one: first the scratch
// tmpfs becomes the root with the host's tree under /oldroot, so that every host path
// (including one under /tmp) stays reachable while /newroot is filled; then the old tree is
// detached, /newroot becomes the root, and it is made read-only.
func buildRoot(s Spec) error {
	steps := []struct {
		what string
		do   func() error
	}{
		{"private mounts", func() error { return mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, "") }},
		{"scratch root", enterScratch},
		{"new root", func() error { return fillRoot(s) }},
		{"detaching the host's tree", func() error { return syscall.Unmount(oldRoot, syscall.MNT_DETACH) }},
		{"pivot", pivotInto},
		{"read-only root", func() error {
			return mount("", "/", "", syscall.MS_REMOUNT|syscall.MS_BIND|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, "")
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			return fmt.Errorf("%s: %w", st.what, err)
		}
	}
	return nil
}

// enterScratch mounts a small tmpfs over /tmp and pivots into it, the host's tree moving to
// /oldroot.
func enterScratch() error {
	if err := mount("tmpfs", scratch, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=64k,mode=0700"); err != nil {
		return err
	}
	for _, d := range []string{newRoot, oldRoot} {
		if err := os.Mkdir(scratch+d, 0o755); err != nil {
			return err
		}
	}
	if err := syscall.PivotRoot(scratch, scratch+oldRoot); err != nil {
		return err
	}
	return os.Chdir("/")
}

// pivotInto makes /newroot the root and drops the scratch root stacked under it.
func pivotInto() error {
	if err := os.Chdir(newRoot); err != nil {
		return err
	}
	if err := syscall.PivotRoot(".", "."); err != nil {
		return err
	}
	if err := syscall.Unmount(".", syscall.MNT_DETACH); err != nil {
		return err
	}
	return os.Chdir("/")
}

// fillRoot mounts the new root's tmpfs and everything in it.
func fillRoot(s Spec) error {
	if err := mount("tmpfs", newRoot, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, "size=64k,mode=0755"); err != nil {
		return err
	}
	for _, d := range base {
		if err := bindBase(d); err != nil {
			return fmt.Errorf("/%s: %w", d, err)
		}
	}
	if err := bindLocal(s); err != nil {
		return fmt.Errorf("/local: %w", err)
	}
	if err := mountProc(); err != nil {
		return fmt.Errorf("/proc: %w", err)
	}
	if err := makeDev(s); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	size := tmpBytes(s)
	return mountTmpfs(newRoot+"/tmp", fmt.Sprintf("size=%d,mode=1777", size))
}

func tmpBytes(s Spec) int64 {
	if s.TmpBytes > 0 {
		return s.TmpBytes
	}
	return DefaultTmpBytes
}

// bindBase binds the host's /d read-only (or recreates it as the link it is).
func bindBase(d string) error {
	src, dst := oldRoot+"/"+d, newRoot+"/"+d
	info, err := os.Lstat(src)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return err
	case info.Mode()&os.ModeSymlink != 0:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	case !info.IsDir():
		return nil
	}
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	return bind(src, dst, syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV)
}

// bindLocal binds the sandbox's local directory read-write at /local.
func bindLocal(s Spec) error {
	src := oldRoot + filepath.Clean(s.Root) + "/local"
	if info, err := os.Stat(src); err != nil || !info.IsDir() {
		return fmt.Errorf("sandbox %s has no local directory", s.Root)
	}
	dst := newRoot + "/local"
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	return bind(src, dst, syscall.MS_NOSUID|syscall.MS_NODEV)
}

// mountProc mounts a proc file system, hiding other users' processes where the kernel
// supports that option per mount (5.8+; before, it would change the host's /proc too).
func mountProc() error {
	dst := newRoot + "/proc"
	if err := os.Mkdir(dst, 0o555); err != nil {
		return err
	}
	flags := uintptr(syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_NOEXEC)
	if privateProcOptions() {
		return mount("proc", dst, "proc", flags, "hidepid=invisible")
	}
	return mount("proc", dst, "proc", flags, "")
}

// makeDev builds a minimal /dev: a few device nodes bound from the host, the usual links and
// a private /dev/shm.
func makeDev(s Spec) error {
	dev := newRoot + "/dev"
	if err := os.Mkdir(dev, 0o755); err != nil {
		return err
	}
	if err := mount("tmpfs", dev, "tmpfs", syscall.MS_NOSUID|syscall.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return err
	}
	for _, d := range devices {
		if err := os.WriteFile(dev+"/"+d, nil, 0o644); err != nil {
			return err
		}
		if err := bind(oldRoot+"/dev/"+d, dev+"/"+d, syscall.MS_NOSUID|syscall.MS_NOEXEC); err != nil {
			return fmt.Errorf("%s: %w", d, err)
		}
	}
	links := map[string]string{"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, target := range links {
		if err := os.Symlink(target, dev+"/"+name); err != nil {
			return err
		}
	}
	return mountTmpfs(dev+"/shm", fmt.Sprintf("size=%d,mode=1777", tmpBytes(s)))
}

// mountTmpfs creates dir and mounts a tmpfs with opts on it.
func mountTmpfs(dir, opts string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	return mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts)
}

// bind bind-mounts src on dst, then applies flags (read-only, nosuid...) to the new mount.
func bind(src, dst string, flags uintptr) error {
	if err := mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		return err
	}
	if flags == 0 {
		return nil
	}
	return mount("", dst, "", syscall.MS_REMOUNT|syscall.MS_BIND|flags, "")
}

func mount(src, dst, fstype string, flags uintptr, data string) error {
	if err := syscall.Mount(src, dst, fstype, flags, data); err != nil {
		return fmt.Errorf("mount %s: %w", strings.TrimPrefix(dst, newRoot), err)
	}
	return nil
}

// privateProcOptions reports whether proc mount options apply to one mount only (Linux 5.8+).
func privateProcOptions() bool {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return false
	}
	var b []byte
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	var major, minor int
	if _, err := fmt.Sscanf(string(b), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 5 || major == 5 && minor >= 8
}
