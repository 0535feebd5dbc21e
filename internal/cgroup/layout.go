package cgroup

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

var errBusy = syscall.EBUSY

// mount is one mounted cgroup hierarchy.
type mount struct {
	point string   // where it is mounted
	root  string   // the cgroup path the mount shows at point
	v2    bool     // cgroup2
	ctrls []string // v1: the controllers bound to it
}

// layout is what /proc/self/mountinfo and /proc/self/cgroup say.
type layout struct {
	mounts []mount
	// own maps a v1 controller (or "" for cgroup2) to this process's cgroup path in it.
	own map[string]string
}

// readLayout reads the host's cgroup mounts and this process's place in them.
func readLayout(mountinfo, self string) (*layout, error) {
	mi, err := os.ReadFile(mountinfo)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	sc, err := os.ReadFile(self)
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return parseLayout(string(mi), string(sc)), nil
}

// parseLayout parses the text of /proc/self/mountinfo and /proc/self/cgroup.
func parseLayout(mountinfo, self string) *layout {
	l := &layout{own: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	for sc.Scan() {
		if m, ok := parseMount(sc.Text()); ok {
			l.mounts = append(l.mounts, m)
		}
	}
	for _, line := range strings.Split(self, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			l.own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			l.own[c] = parts[2]
		}
	}
	return l
}

// parseMount parses one mountinfo line: "id parent major:minor root point options
// [optional...] - fstype source superoptions".
func parseMount(line string) (mount, bool) {
	pre, post, ok := strings.Cut(line, " - ")
	if !ok {
		return mount{}, false
	}
	f, g := strings.Fields(pre), strings.Fields(post)
	if len(f) < 5 || len(g) < 3 {
		return mount{}, false
	}
	m := mount{root: unescape(f[3]), point: unescape(f[4])}
	switch g[0] {
	case "cgroup2":
		m.v2 = true
	case "cgroup":
		for _, o := range strings.Split(g[2], ",") {
			if slices.Contains(controllers, o) {
				m.ctrls = append(m.ctrls, o)
			}
		}
	default:
		return mount{}, false
	}
	return m, true
}

// unescape undoes mountinfo's octal escapes of space, tab, newline and backslash.
func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

// dirOf is the directory, under mount m, of this process's cgroup path p.
func (m mount) dirOf(p string) string {
	rel := strings.TrimPrefix(p, m.root)
	if m.root == "/" {
		rel = p
	}
	return filepath.Join(m.point, rel)
}

// plan picks a hierarchy for every controller (a v1 mount carrying it, else cgroup2) and
// names the parent group's directory in each, below this process's own cgroup.
func (l *layout) plan(parent string) ([]hierarchy, error) {
	var hiers []hierarchy
	var v2 *mount
	for i := range l.mounts {
		if l.mounts[i].v2 && v2 == nil {
			v2 = &l.mounts[i]
		}
	}
	var onV2 []string
	for _, c := range controllers {
		if m := l.v1Mount(c); m != nil {
			hiers = addCtrl(hiers, m.dirOf(l.own[c]), parent, c)
			continue
		}
		if v2 == nil || !v2Offers(v2.dirOf(l.own[""]), c) {
			return nil, fmt.Errorf("cgroup: the %s controller is available neither on a cgroup v1 hierarchy nor on cgroup2", c)
		}
		onV2 = append(onV2, c)
	}
	if v2 != nil {
		hiers = append(hiers, hierarchy{parent: filepath.Join(v2.dirOf(l.own[""]), parent), v2: true, ctrls: onV2})
	}
	return hiers, nil
}

func (l *layout) v1Mount(ctrl string) *mount {
	for i, m := range l.mounts {
		if !m.v2 && slices.Contains(m.ctrls, ctrl) {
			return &l.mounts[i]
		}
	}
	return nil
}

// addCtrl adds ctrl to the v1 hierarchy whose own directory is own (cpu and cpuacct, say,
// may share one), or a new hierarchy.
func addCtrl(hiers []hierarchy, own, parent, ctrl string) []hierarchy {
	dir := filepath.Join(own, parent)
	for i := range hiers {
		if hiers[i].parent == dir {
			hiers[i].ctrls = append(hiers[i].ctrls, ctrl)
			return hiers
		}
	}
	return append(hiers, hierarchy{parent: dir, ctrls: []string{ctrl}})
}

// v2Offers reports whether cgroup2 offers ctrl at dir (its cgroup.controllers lists it).
func v2Offers(dir, ctrl string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	return err == nil && slices.Contains(strings.Fields(string(b)), ctrl)
}
