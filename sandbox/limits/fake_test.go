package limits

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// fakeKernel is a cgroup v2 tree in a temporary directory, with the kernel
// rules the package relies on modelled in its operations:
//
//   - mkdir creates the interface files: cgroup.procs, cgroup.controllers
//     (what the parent enabled), cgroup.subtree_control, cgroup.kill, and
//     memory.* / pids.max only for controllers the parent enabled;
//   - enabling a controller in cgroup.subtree_control needs it listed in
//     cgroup.controllers (ENOENT otherwise) and, below the root, a cgroup
//     without processes (EBUSY: "no internal processes");
//   - a process cannot move into a cgroup that has enabled controllers for
//     its children (EBUSY), and moving it removes it from its old cgroup;
//   - interface files are never created by a write (ENOENT);
//   - rmdir of a cgroup with processes or children fails with EBUSY;
//   - cgroup.kill and SIGKILL remove processes.
type fakeKernel struct {
	t    *testing.T
	root string

	noKill bool // no cgroup.kill (Linux < 5.14)
	noSwap bool // no memory.swap.max (no swap accounting)
	// immortal processes survive SIGKILL and cgroup.kill.
	immortal map[int]bool
	// failWrite makes writes to files with this base name fail.
	failWrite string

	mu     sync.Mutex
	where  map[int]string // pid → cgroup dir
	writes []string       // "rel/path=data", in order
	killed []int
}

func newFakeKernel(t *testing.T) *fakeKernel {
	k := &fakeKernel{t: t, root: t.TempDir(), where: map[int]string{}, immortal: map[int]bool{}}
	// The root cgroup grants memory and pids to its children.
	for name, data := range map[string]string{
		"cgroup.procs":           "",
		"cgroup.controllers":     "cpuset cpu io memory hugetlb pids rdma misc",
		"cgroup.subtree_control": "cpu memory pids",
	} {
		k.put(filepath.Join(k.root, name), data)
	}
	return k
}

func (k *fakeKernel) ops() ops {
	return ops{mkdir: k.mkdir, remove: k.remove, write: k.write, kill: k.kill}
}

// path maps a slash path relative to the fake root to a host path.
func (k *fakeKernel) path(rel string) string {
	return filepath.Join(k.root, filepath.FromSlash(rel))
}

func (k *fakeKernel) put(p, data string) {
	k.t.Helper()
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		k.t.Fatal(err)
	}
}

func (k *fakeKernel) get(p string) string {
	k.t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		k.t.Fatal(err)
	}
	return string(b)
}

// read returns the file at rel, or "<absent>".
func (k *fakeKernel) read(rel string) string {
	b, err := os.ReadFile(k.path(rel))
	if err != nil {
		return "<absent>"
	}
	return string(b)
}

// cgroup creates the cgroup at rel (and its parents) as a test fixture.
func (k *fakeKernel) cgroup(rel string) string {
	k.t.Helper()
	p := k.root
	for _, part := range strings.Split(strings.Trim(rel, "/"), "/") {
		p = filepath.Join(p, part)
		if _, err := os.Stat(p); err == nil {
			continue
		}
		if err := k.mkdir(p); err != nil {
			k.t.Fatal(err)
		}
	}
	return p
}

// enableFixture enables controllers in rel's subtree_control, as systemd
// does above a delegated unit.
func (k *fakeKernel) enableFixture(rel, controllers string) {
	k.t.Helper()
	k.put(filepath.Join(k.path(rel), "cgroup.subtree_control"), controllers)
}

// spawn puts pid into the cgroup at rel.
func (k *fakeKernel) spawn(pid int, rel string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.where[pid] = k.path(rel)
	k.syncProcs()
}

// syncProcs rewrites every cgroup.procs from where. Called with mu held.
func (k *fakeKernel) syncProcs() {
	byDir := map[string][]int{}
	for pid, dir := range k.where {
		byDir[dir] = append(byDir[dir], pid)
	}
	filepath.WalkDir(k.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		pids := byDir[p]
		slices.Sort(pids)
		var b strings.Builder
		for _, pid := range pids {
			fmt.Fprintf(&b, "%d\n", pid)
		}
		k.put(filepath.Join(p, "cgroup.procs"), b.String())
		return nil
	})
}

func (k *fakeKernel) hasProcs(dir string) bool {
	for _, d := range k.where {
		if d == dir {
			return true
		}
	}
	return false
}

func (k *fakeKernel) mkdir(p string) error {
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	granted := k.get(filepath.Join(filepath.Dir(p), "cgroup.subtree_control"))
	files := map[string]string{
		"cgroup.procs":           "",
		"cgroup.controllers":     granted,
		"cgroup.subtree_control": "",
		"cgroup.events":          "populated 0\nfrozen 0\n",
	}
	if !k.noKill {
		files["cgroup.kill"] = ""
	}
	on := parseControllers(granted)
	if on["memory"] {
		files["memory.max"] = "max\n"
		files["memory.oom.group"] = "0\n"
		if !k.noSwap {
			files["memory.swap.max"] = "max\n"
		}
	}
	if on["pids"] {
		files["pids.max"] = "max\n"
	}
	for name, data := range files {
		k.put(filepath.Join(p, name), data)
	}
	return nil
}

func (k *fakeKernel) remove(p string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, err := os.Stat(p); err != nil {
		return err
	}
	entries, _ := os.ReadDir(p)
	for _, e := range entries {
		if e.IsDir() {
			return &fs.PathError{Op: "remove", Path: p, Err: syscall.EBUSY}
		}
	}
	if k.hasProcs(p) {
		return &fs.PathError{Op: "remove", Path: p, Err: syscall.EBUSY}
	}
	return os.RemoveAll(p)
}

func (k *fakeKernel) write(p, data string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	rel, _ := filepath.Rel(k.root, p)
	k.writes = append(k.writes, filepath.ToSlash(rel)+"="+data)
	fail := func(err error) error { return &fs.PathError{Op: "write", Path: p, Err: err} }

	if _, err := os.Stat(p); err != nil {
		return fail(fs.ErrNotExist)
	}
	dir, base := filepath.Dir(p), filepath.Base(p)
	if base == k.failWrite {
		return fail(syscall.EINVAL)
	}
	switch base {
	case "cgroup.procs":
		pid, err := strconv.Atoi(data)
		if err != nil {
			return fail(syscall.EINVAL)
		}
		if _, ok := k.where[pid]; !ok {
			return fail(syscall.ESRCH)
		}
		if dir != k.root && strings.TrimSpace(k.get(filepath.Join(dir, "cgroup.subtree_control"))) != "" {
			return fail(syscall.EBUSY)
		}
		k.where[pid] = dir
		k.syncProcs()
		return nil

	case "cgroup.subtree_control":
		granted := parseControllers(k.get(filepath.Join(dir, "cgroup.controllers")))
		on := parseControllers(k.get(p))
		for _, f := range strings.Fields(data) {
			c := f[1:]
			switch {
			case !granted[c]:
				return fail(syscall.ENOENT)
			case f[0] == '+' && dir != k.root && k.hasProcs(dir):
				return fail(syscall.EBUSY)
			case f[0] == '+':
				on[c] = true
			case f[0] == '-':
				delete(on, c)
			default:
				return fail(syscall.EINVAL)
			}
		}
		var list []string
		for c := range on {
			list = append(list, c)
		}
		slices.Sort(list)
		k.put(p, strings.Join(list, " "))
		return nil

	case "cgroup.kill":
		if data != "1" {
			return fail(syscall.EINVAL)
		}
		for pid, d := range k.where {
			if (d == dir || strings.HasPrefix(d, dir+string(filepath.Separator))) && !k.immortal[pid] {
				delete(k.where, pid)
			}
		}
		k.syncProcs()
		return nil

	case "memory.max", "pids.max", "memory.swap.max":
		if _, err := strconv.ParseInt(data, 10, 64); err != nil && data != "max" {
			return fail(syscall.EINVAL)
		}
	}
	return writeFile(p, data)
}

func (k *fakeKernel) kill(pid int) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.where[pid]; !ok {
		return syscall.ESRCH
	}
	k.killed = append(k.killed, pid)
	if !k.immortal[pid] {
		delete(k.where, pid)
		k.syncProcs()
	}
	return nil
}
