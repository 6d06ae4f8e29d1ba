// Package limits caps one execution's memory and process count with a
// delegated cgroup v2.
//
// Gatehouse's systemd user unit sets Delegate=yes, so the service owns the
// cgroup it runs in and may build a sub-tree below it:
//
//	<delegated>/                     the unit's cgroup; subtree_control +memory +pids
//	<delegated>/gatehouse-service/   the service's own processes (a leaf)
//	<delegated>/gatehouse/           subtree_control +memory +pids, no processes
//	<delegated>/gatehouse/<name>/    one execution: memory.max, memory.swap.max, pids.max
//
// An execution is started straight into its leaf with CLONE_INTO_CGROUP
// (Group.FD), so no process of the command ever runs outside its limits.
//
// Where there is no such delegation (cgroup v1 or hybrid hosts, a process
// started from a terminal, controllers not delegated) Detect says false and
// why, and the execution's limits_enforced reports memory and pids false.
//
// # What is verified where
//
// The logic that builds the tree is portable and tested on every OS against
// a fake cgroup tree that models the kernel rules it depends on (the "no
// internal processes" rule, controllers having to be granted by the parent,
// interface files appearing only for enabled controllers). The project's
// Linux machines have a hybrid hierarchy without delegated memory or pids
// controllers, so writing memory.max / memory.swap.max / pids.max and
// enabling controllers in cgroup.subtree_control have NOT been run against
// a real kernel there. Creating and removing cgroups, CLONE_INTO_CGROUP
// through FD, cgroup.kill and the per-process SIGKILL fallback are
// exercised on a real cgroup2 mount by TestRealCgroup2 when
// GATEHOUSE_TEST_CGROUP2 names a writable cgroup2 directory (run there as
// root against /sys/fs/cgroup/unified, which grants no controllers). On a
// host with a real delegation the same test also writes the limits.
package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Names of the cgroups Gatehouse creates below the delegated one.
const (
	// ServiceLeaf holds the service's own processes. cgroup v2 lets a
	// cgroup enable controllers for its children only while it has no
	// processes of its own ("no internal processes"), so the service moves
	// itself down into this leaf before enabling memory and pids.
	ServiceLeaf = "gatehouse-service"
	// Subtree is the parent of every execution's cgroup.
	Subtree = "gatehouse"
)

// Delegation describes the cgroup Gatehouse may manage.
type Delegation struct {
	// Path is the delegated cgroup directory, e.g.
	// /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/gatehouse.service.
	// It is empty when no cgroup v2 directory of ours was found.
	Path string
	// Memory and Pids report whether each controller can be enabled for
	// executions below Path.
	Memory, Pids bool
	// Reason explains every false above; empty when both are true.
	Reason string
}

// host is everything detect needs from the system, so that the decision
// can run against a fake tree.
type host struct {
	root           string // where cgroup v2 should be mounted: /sys/fs/cgroup
	procSelfCgroup string // contents of /proc/self/cgroup
	pid, uid       int
	isCgroup2      func(path string) (bool, error)
	writable       func(path string) bool
	parent         func(pid int) (int, error)
}

// detect decides whether we have a delegated cgroup with memory and pids.
func detect(h host) Delegation {
	if ok, err := h.isCgroup2(h.root); err != nil {
		return Delegation{Reason: fmt.Sprintf("cannot inspect %s: %v", h.root, err)}
	} else if !ok {
		if unified, _ := h.isCgroup2(filepath.Join(h.root, "unified")); unified {
			return Delegation{Reason: fmt.Sprintf("cgroup v2 not mounted at %s (hybrid hierarchy: memory and pids are cgroup v1 controllers on this host)", h.root)}
		}
		return Delegation{Reason: fmt.Sprintf("cgroup v2 not mounted at %s (legacy cgroup v1 hierarchy)", h.root)}
	}

	rel, err := parseProcCgroup(h.procSelfCgroup)
	if err != nil {
		return Delegation{Reason: "reading /proc/self/cgroup: " + err.Error()}
	}
	// After NewGroup the service lives in its own leaf; the delegated
	// cgroup is the leaf's parent.
	if path.Base(rel) == ServiceLeaf {
		rel = path.Dir(rel)
	}
	if rel == "/" {
		return Delegation{Reason: "Gatehouse runs in the root cgroup, which is never delegated; run it as its systemd user unit (Delegate=yes)"}
	}

	d := Delegation{Path: filepath.Join(h.root, filepath.FromSlash(rel))}
	for _, p := range []string{d.Path, filepath.Join(d.Path, "cgroup.procs"), filepath.Join(d.Path, "cgroup.subtree_control")} {
		if !h.writable(p) {
			d.Reason = fmt.Sprintf("cgroup not delegated: %s is not writable by uid %d; run Gatehouse as its systemd user unit (Delegate=yes)", p, h.uid)
			return d
		}
	}

	// Writable is not enough: every process of a user's session is in a
	// cgroup that user owns. Gatehouse moves all processes of the cgroup
	// into its service leaf, so it takes only a cgroup holding nothing but
	// itself and its descendants, never, say, the terminal it was started
	// from.
	procsFile := filepath.Join(d.Path, "cgroup.procs")
	procs, err := readPids(procsFile)
	if err != nil {
		d.Reason = err.Error()
		return d
	}
	for _, p := range procs {
		if p != h.pid && !descends(p, h.pid, h.parent) {
			d.Reason = fmt.Sprintf("cgroup %s is shared with pid %d, which Gatehouse did not start; run Gatehouse as its systemd user unit (Delegate=yes)", d.Path, p)
			return d
		}
	}

	controllersFile := filepath.Join(d.Path, "cgroup.controllers")
	data, err := os.ReadFile(controllersFile)
	if err != nil {
		d.Reason = fmt.Sprintf("reading %s: %v", controllersFile, err)
		return d
	}
	have := parseControllers(string(data))
	d.Memory, d.Pids = have["memory"], have["pids"]
	var missing []string
	if !d.Memory {
		missing = append(missing, "memory")
	}
	if !d.Pids {
		missing = append(missing, "pids")
	}
	if len(missing) > 0 {
		listed := strings.Join(strings.Fields(string(data)), " ")
		if listed == "" {
			listed = "none"
		}
		noun := "controller"
		if len(missing) > 1 {
			noun = "controllers"
		}
		d.Reason = fmt.Sprintf("%s %s not delegated: %s lists %s; set Delegate=yes (or Delegate=memory pids) on the unit",
			strings.Join(missing, " and "), noun, controllersFile, listed)
	}
	return d
}

// parseProcCgroup returns the cgroup v2 path from the contents of
// /proc/<pid>/cgroup: the path field of the "0::<path>" line.
func parseProcCgroup(s string) (string, error) {
	for line := range strings.Lines(s) {
		line = strings.TrimRight(line, "\n")
		id, rest, ok := strings.Cut(line, ":")
		if !ok || id != "0" {
			continue
		}
		controllers, p, ok := strings.Cut(rest, ":")
		if !ok || controllers != "" {
			continue
		}
		switch {
		case strings.HasSuffix(p, " (deleted)"):
			return "", fmt.Errorf("cgroup %s was removed", strings.TrimSuffix(p, " (deleted)"))
		case !strings.HasPrefix(p, "/"):
			return "", fmt.Errorf("cgroup v2 path %q is not absolute", p)
		}
		return path.Clean(p), nil
	}
	return "", errors.New("no cgroup v2 entry (0::) in /proc/self/cgroup")
}

// parseControllers parses a cgroup.controllers or cgroup.subtree_control
// file: controller names separated by spaces.
func parseControllers(s string) map[string]bool {
	set := make(map[string]bool)
	for _, c := range strings.Fields(s) {
		set[c] = true
	}
	return set
}

// parsePids parses a cgroup.procs file: one pid per line.
func parsePids(s string) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(s) {
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("malformed pid %q", f)
		}
		pids = append(pids, n)
	}
	return pids, nil
}

func readPids(file string) ([]int, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pids, err := parsePids(string(data))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	return pids, nil
}

// parseStatPPID returns the parent pid from the contents of /proc/<pid>/stat.
// The command name (field 2) is in parentheses and may itself hold spaces
// and parentheses, so fields are counted from the last ')'.
func parseStatPPID(s string) (int, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	f := strings.Fields(s[i+1:]) // state, ppid, …
	if len(f) < 2 {
		return 0, errors.New("malformed /proc/<pid>/stat")
	}
	return strconv.Atoi(f[1])
}

// descends reports whether pid is a descendant of ancestor.
func descends(pid, ancestor int, parent func(int) (int, error)) bool {
	for range 64 {
		pp, err := parent(pid)
		if err != nil || pp <= 1 {
			return false
		}
		if pp == ancestor {
			return true
		}
		pid = pp
	}
	return false
}

// A Group is the cgroup of one execution. Its methods are safe for
// concurrent use; Close may be called more than once.
type Group struct {
	path         string
	memory, pids bool
	fs           ops
	closeWait    time.Duration

	mu     sync.Mutex
	dir    *os.File // O_PATH handle behind FD; nil until asked for
	closed bool
}

// Path is the cgroup directory of the execution.
func (g *Group) Path() string { return g.path }

// Enforced reports which limits NewGroup wrote: a limit of zero (none
// asked for) or an undelegated controller reports false.
func (g *Group) Enforced() (memory, pids bool) { return g.memory, g.pids }

// ops are the filesystem and process operations a Group performs, so that
// tests can run them against a fake tree.
type ops struct {
	mkdir  func(path string) error
	remove func(path string) error // rmdir
	write  func(path, data string) error
	kill   func(pid int) error // SIGKILL
}

// writeFile writes data to an existing cgroup interface file in a single
// write(2), as the kernel expects. It never creates the file, so a missing
// interface file (memory.swap.max without swap accounting, cgroup.kill
// before Linux 5.14) reports fs.ErrNotExist.
func writeFile(path, data string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// setupMu serialises changes to the shared part of the tree (the service
// leaf, the sub-tree and their subtree_control), which concurrent
// executions would otherwise race on.
var setupMu sync.Mutex

// closeWait bounds how long Close waits for killed processes to leave.
const closeWait = 2 * time.Second

// newGroup is NewGroup with its operations as a parameter.
func (d Delegation) newGroup(o ops, name string, memoryMax, pidsMax int64) (*Group, error) {
	if !d.Memory && !d.Pids {
		reason := d.Reason
		if reason == "" {
			reason = "no delegated cgroup"
		}
		return nil, fmt.Errorf("%w: %s", sandbox.ErrUnavailable, reason)
	}
	if memoryMax < 0 || pidsMax < 0 {
		return nil, fmt.Errorf("negative cgroup limit (memory %d, pids %d)", memoryMax, pidsMax)
	}
	return d.create(o, name, memoryMax, pidsMax)
}

// create builds the tree described in the package doc and the execution's
// leaf, then writes its limits. It enables only the controllers d grants.
func (d Delegation) create(o ops, name string, memoryMax, pidsMax int64) (*Group, error) {
	if err := validName(name); err != nil {
		return nil, err
	}
	var controllers []string
	if d.Memory {
		controllers = append(controllers, "memory")
	}
	if d.Pids {
		controllers = append(controllers, "pids")
	}

	setupMu.Lock()
	defer setupMu.Unlock()

	// 1. Move every process out of the delegated cgroup into the service
	// leaf, so that it may enable controllers for its children. Detect has
	// checked they are all ours. Once controllers are enabled the kernel
	// keeps the cgroup empty, so later calls find nothing to move.
	service := filepath.Join(d.Path, ServiceLeaf)
	if err := mkdirExisting(o, service); err != nil {
		return nil, err
	}
	if err := moveAll(o, d.Path, service); err != nil {
		return nil, err
	}
	// 2. Enable the controllers for the children of the delegated cgroup
	// and again for the children of the sub-tree.
	if err := enable(o, d.Path, controllers); err != nil {
		return nil, err
	}
	sub := filepath.Join(d.Path, Subtree)
	if err := mkdirExisting(o, sub); err != nil {
		return nil, err
	}
	if err := enable(o, sub, controllers); err != nil {
		return nil, err
	}

	// 3. The execution's own leaf.
	leaf := filepath.Join(sub, name)
	if err := o.mkdir(leaf); err != nil {
		return nil, fmt.Errorf("creating cgroup: %w", err)
	}
	g := &Group{path: leaf, fs: o, closeWait: closeWait}
	if err := g.setLimits(d, memoryMax, pidsMax); err != nil {
		o.remove(leaf)
		return nil, err
	}
	return g, nil
}

// setLimits writes the execution's limits into its leaf.
func (g *Group) setLimits(d Delegation, memoryMax, pidsMax int64) error {
	if d.Memory && memoryMax > 0 {
		if err := g.set("memory.max", strconv.FormatInt(memoryMax, 10)); err != nil {
			return err
		}
		// Without this the command could overflow into swap and memory.max
		// would limit only its resident part. The file is absent when the
		// kernel does no swap accounting (no swap to escape into).
		if err := g.set("memory.swap.max", "0"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		// On OOM kill the whole execution rather than its largest process,
		// so the command ends (and is reported) as killed instead of
		// carrying on with a piece missing.
		if err := g.set("memory.oom.group", "1"); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		g.memory = true
	}
	if d.Pids && pidsMax > 0 {
		if err := g.set("pids.max", strconv.FormatInt(pidsMax, 10)); err != nil {
			return err
		}
		g.pids = true
	}
	return nil
}

func (g *Group) set(file, value string) error {
	if err := g.fs.write(filepath.Join(g.path, file), value); err != nil {
		return fmt.Errorf("setting cgroup %s to %s: %w", file, value, err)
	}
	return nil
}

// validName accepts the names of execution cgroups: letters, digits, '-'
// and '_'. Without '.' or '/' a name can neither leave the sub-tree nor
// collide with an interface file such as memory.max.
func validName(name string) error {
	if name == "" || len(name) > 128 {
		return fmt.Errorf("invalid cgroup name %q; want 1 to 128 letters, digits, '-' or '_'", name)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return fmt.Errorf("invalid cgroup name %q; want 1 to 128 letters, digits, '-' or '_'", name)
		}
	}
	return nil
}

func mkdirExisting(o ops, dir string) error {
	if err := o.mkdir(dir); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("creating cgroup: %w", err)
	}
	return nil
}

// moveAll moves every process of cgroup from into cgroup to. A process
// may fork while we move it, so repeat until from is empty.
func moveAll(o ops, from, to string) error {
	procs := filepath.Join(from, "cgroup.procs")
	for range 10 {
		pids, err := readPids(procs)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			err := o.write(filepath.Join(to, "cgroup.procs"), strconv.Itoa(p))
			if err != nil && !errors.Is(err, syscall.ESRCH) { // ESRCH: it exited
				return fmt.Errorf("moving pid %d to %s: %w", p, to, err)
			}
		}
	}
	return fmt.Errorf("cannot empty %s: processes keep appearing", procs)
}

// enable turns on controllers in dir's cgroup.subtree_control, writing
// only those not already on.
func enable(o ops, dir string, controllers []string) error {
	file := filepath.Join(dir, "cgroup.subtree_control")
	data, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	on := parseControllers(string(data))
	var want []string
	for _, c := range controllers {
		if !on[c] {
			want = append(want, "+"+c)
		}
	}
	if len(want) == 0 {
		return nil
	}
	if err := o.write(file, strings.Join(want, " ")); err != nil {
		return fmt.Errorf("enabling %s: %w", strings.Join(want, " "), err)
	}
	return nil
}

// Kill kills every process in the group: through cgroup.kill where the
// kernel has it (Linux 5.14+), which also catches processes forking at that
// moment; otherwise by sending SIGKILL to each listed process, a few
// rounds, which pids.max keeps bounded.
func (g *Group) Kill() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	return g.kill()
}

func (g *Group) kill() error {
	err := g.fs.write(filepath.Join(g.path, "cgroup.kill"), "1")
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	procs := filepath.Join(g.path, "cgroup.procs")
	for range 10 {
		pids, err := readPids(procs)
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			return nil
		}
		for _, p := range pids {
			if err := g.fs.kill(p); err != nil && !errors.Is(err, syscall.ESRCH) {
				return fmt.Errorf("killing pid %d: %w", p, err)
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("processes remain in %s after SIGKILL", g.path)
}

// Close kills what remains in the group, closes the FD handle and removes
// the cgroup, waiting briefly for killed processes to leave it.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true

	var errs []error
	if g.dir != nil {
		errs = append(errs, g.dir.Close())
		g.dir = nil
	}
	if err := g.kill(); err != nil {
		errs = append(errs, err)
	}
	// rmdir reports EBUSY until the last process has left the cgroup.
	deadline := time.Now().Add(g.closeWait)
	for {
		err := g.fs.remove(g.path)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			break
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			errs = append(errs, fmt.Errorf("removing cgroup: %w", err))
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return errors.Join(errs...)
}
