package limits

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

const unit = "/user.slice/user-1000.slice/user@1000.service/app.slice/gatehouse.service"

// delegatedTree lays out the cgroups above and at unit the way systemd
// does for a user unit with Delegate=yes: every ancestor enables granted
// for its children. It returns the unit's directory.
func delegatedTree(k *fakeKernel, granted string) string {
	k.t.Helper()
	rel := ""
	for _, part := range strings.Split(strings.Trim(unit, "/"), "/") {
		k.enableFixture(rel, granted)
		rel += "/" + part
		k.cgroup(rel)
	}
	return k.path(unit)
}

func TestParseProcCgroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want, err string
	}{
		{name: "unified", in: "0::" + unit + "\n", want: unit},
		{name: "no newline", in: "0::/a", want: "/a"},
		{name: "root", in: "0::/\n", want: "/"},
		{
			name: "hybrid",
			in:   "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/975efeec\n1:cpu:/\n0::/\n",
			want: "/",
		},
		{
			name: "hybrid in a user unit",
			in:   "12:pids:/user.slice/user-1000.slice/user@1000.service\n1:name=systemd:" + unit + "\n0::" + unit + "\n",
			want: unit,
		},
		// Only the hierarchy id 0 with an empty controller list is v2.
		{name: "named v1 hierarchy is not v2", in: "1:name=systemd:/x\n", err: "no cgroup v2 entry (0::) in /proc/self/cgroup"},
		{name: "v1 only", in: "4:memory:/a\n3:pids:/a\n", err: "no cgroup v2 entry (0::) in /proc/self/cgroup"},
		{name: "empty", in: "", err: "no cgroup v2 entry (0::) in /proc/self/cgroup"},
		{name: "colon in path", in: "0::/a:b/c\n", want: "/a:b/c"},
		{name: "spaces in path", in: "0::/app.slice/my app.scope\n", want: "/app.slice/my app.scope"},
		{name: "deleted", in: "0::/app.slice/gone.scope (deleted)\n", err: "cgroup /app.slice/gone.scope was removed"},
		{name: "relative", in: "0::a/b\n", err: `cgroup v2 path "a/b" is not absolute`},
		{name: "namespaced escape is cleaned", in: "0::/../../a\n", want: "/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := parseProcCgroup(tt.in)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tt.err {
				t.Fatalf("error: got %q, want %q", gotErr, tt.err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseControllers(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"cpuset cpu io memory hugetlb pids rdma misc\n", "cpu cpuset hugetlb io memory misc pids rdma"},
		{"", ""},
		{"\n", ""},
		{"memory", "memory"},
		// "memory" must be a whole word.
		{"memory_recursiveprot pids", "memory_recursiveprot pids"},
	}
	for _, tt := range tests {
		set := parseControllers(tt.in)
		var names []string
		for c := range set {
			names = append(names, c)
		}
		slices.Sort(names)
		if got := strings.Join(names, " "); got != tt.want {
			t.Errorf("parseControllers(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParsePids(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want, err string }{
		{"", "[]", ""},
		{"1\n42\n", "[1 42]", ""},
		{"7", "[7]", ""},
		{"1\nx\n", "", `malformed pid "x"`},
		{"0\n", "", `malformed pid "0"`},
	}
	for _, tt := range tests {
		pids, err := parsePids(tt.in)
		got, gotErr := fmt.Sprint(pids), ""
		if err != nil {
			got, gotErr = "", err.Error()
		}
		if got != tt.want || gotErr != tt.err {
			t.Errorf("parsePids(%q) = %q, error %q; want %q, error %q", tt.in, got, gotErr, tt.want, tt.err)
		}
	}
}

func TestParseStatPPID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
		err  bool
	}{
		{"1234 (bash) S 1000 1234 1234 34816 ...", 1000, false},
		// The command name may hold spaces and parentheses.
		{"77 (a) b (c) R 76 77 ...", 76, false},
		{"5 (x)", 0, true},
		{"garbage", 0, true},
	}
	for _, tt := range tests {
		got, err := parseStatPPID(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("parseStatPPID(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestDetect(t *testing.T) {
	t.Parallel()
	const self = 100
	parents := map[int]int{101: self, 102: 101, 200: 1, 300: 200}
	parent := func(pid int) (int, error) {
		if pp, ok := parents[pid]; ok {
			return pp, nil
		}
		return 0, fs.ErrNotExist
	}

	tests := []struct {
		name  string
		setup func(k *fakeKernel) (h host)
		want  Delegation // paths relative to the fake root, as if it were /sys/fs/cgroup
	}{
		{
			name: "delegated user unit",
			setup: func(k *fakeKernel) host {
				delegatedTree(k, "memory pids")
				k.spawn(self, unit)
				k.spawn(101, unit) // our child
				k.spawn(102, unit) // our grandchild
				return host{procSelfCgroup: "0::" + unit + "\n"}
			},
			want: Delegation{Path: "/sys/fs/cgroup" + unit, Memory: true, Pids: true},
		},
		{
			// After NewGroup the service runs in its leaf; the delegation
			// is the leaf's parent.
			name: "already in the service leaf",
			setup: func(k *fakeKernel) host {
				delegatedTree(k, "memory pids")
				k.cgroup(unit + "/gatehouse-service")
				k.spawn(self, unit+"/gatehouse-service")
				return host{procSelfCgroup: "0::" + unit + "/gatehouse-service\n"}
			},
			want: Delegation{Path: "/sys/fs/cgroup" + unit, Memory: true, Pids: true},
		},
		{
			name: "hybrid",
			setup: func(k *fakeKernel) host {
				return host{
					procSelfCgroup: "4:memory:/x\n0::/\n",
					isCgroup2:      func(p string) (bool, error) { return filepath.Base(p) == "unified", nil },
				}
			},
			want: Delegation{Reason: "cgroup v2 not mounted at /sys/fs/cgroup (hybrid hierarchy: memory and pids are cgroup v1 controllers on this host)"},
		},
		{
			name: "legacy",
			setup: func(k *fakeKernel) host {
				return host{
					procSelfCgroup: "4:memory:/x\n",
					isCgroup2:      func(string) (bool, error) { return false, nil },
				}
			},
			want: Delegation{Reason: "cgroup v2 not mounted at /sys/fs/cgroup (legacy cgroup v1 hierarchy)"},
		},
		{
			name: "statfs fails",
			setup: func(k *fakeKernel) host {
				return host{isCgroup2: func(string) (bool, error) { return false, syscall.EACCES }}
			},
			want: Delegation{Reason: "cannot inspect /sys/fs/cgroup: " + syscall.EACCES.Error()},
		},
		{
			name: "no v2 line",
			setup: func(k *fakeKernel) host {
				return host{procSelfCgroup: "1:name=systemd:/\n"}
			},
			want: Delegation{Reason: "reading /proc/self/cgroup: no cgroup v2 entry (0::) in /proc/self/cgroup"},
		},
		{
			name: "root cgroup",
			setup: func(k *fakeKernel) host {
				return host{procSelfCgroup: "0::/\n"}
			},
			want: Delegation{Reason: "Gatehouse runs in the root cgroup, which is never delegated; run it as its systemd user unit (Delegate=yes)"},
		},
		{
			name: "session scope owned by root",
			setup: func(k *fakeKernel) host {
				k.cgroup("/user.slice/user-1000.slice/session-2.scope")
				k.spawn(self, "/user.slice/user-1000.slice/session-2.scope")
				return host{
					procSelfCgroup: "0::/user.slice/user-1000.slice/session-2.scope\n",
					writable:       func(string) bool { return false },
				}
			},
			want: Delegation{
				Path:   "/sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope",
				Reason: "cgroup not delegated: /sys/fs/cgroup/user.slice/user-1000.slice/session-2.scope is not writable by uid 1000; run Gatehouse as its systemd user unit (Delegate=yes)",
			},
		},
		{
			name: "subtree_control not writable",
			setup: func(k *fakeKernel) host {
				delegatedTree(k, "memory pids")
				k.spawn(self, unit)
				return host{
					procSelfCgroup: "0::" + unit + "\n",
					writable:       func(p string) bool { return filepath.Base(p) != "cgroup.subtree_control" },
				}
			},
			want: Delegation{
				Path:   "/sys/fs/cgroup" + unit,
				Reason: "cgroup not delegated: /sys/fs/cgroup" + unit + "/cgroup.subtree_control is not writable by uid 1000; run Gatehouse as its systemd user unit (Delegate=yes)",
			},
		},
		{
			// A terminal's scope in the user manager is writable by the
			// user, but it holds the shell that started us.
			name: "terminal scope",
			setup: func(k *fakeKernel) host {
				scope := "/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope"
				delegatedTree(k, "memory pids")
				k.cgroup(scope)
				k.spawn(200, scope) // the shell, our parent
				k.spawn(self, scope)
				return host{procSelfCgroup: "0::" + scope + "\n"}
			},
			want: Delegation{
				Path:   "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope",
				Reason: "cgroup /sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/vte-spawn-1.scope is shared with pid 200, which Gatehouse did not start; run Gatehouse as its systemd user unit (Delegate=yes)",
			},
		},
		{
			name: "memory not delegated",
			setup: func(k *fakeKernel) host {
				delegatedTree(k, "cpu pids")
				k.spawn(self, unit)
				return host{procSelfCgroup: "0::" + unit + "\n"}
			},
			want: Delegation{
				Path: "/sys/fs/cgroup" + unit, Pids: true,
				Reason: "memory controller not delegated: /sys/fs/cgroup" + unit + "/cgroup.controllers lists cpu pids; set Delegate=yes (or Delegate=memory pids) on the unit",
			},
		},
		{
			name: "nothing delegated",
			setup: func(k *fakeKernel) host {
				delegatedTree(k, "")
				k.spawn(self, unit)
				return host{procSelfCgroup: "0::" + unit + "\n"}
			},
			want: Delegation{
				Path:   "/sys/fs/cgroup" + unit,
				Reason: "memory and pids controllers not delegated: /sys/fs/cgroup" + unit + "/cgroup.controllers lists none; set Delegate=yes (or Delegate=memory pids) on the unit",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newFakeKernel(t)
			h := tt.setup(k)
			h.root, h.pid, h.uid, h.parent = k.root, self, 1000, parent
			if h.isCgroup2 == nil {
				h.isCgroup2 = func(p string) (bool, error) { return p == k.root, nil }
			}
			if h.writable == nil {
				h.writable = func(string) bool { return true }
			}
			got := detect(h)
			// Report paths as on a real host.
			fix := func(s string) string {
				return strings.ReplaceAll(filepath.ToSlash(s), filepath.ToSlash(k.root), "/sys/fs/cgroup")
			}
			got.Path, got.Reason = fix(got.Path), fix(got.Reason)
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
			if !got.Memory || !got.Pids {
				if got.Reason == "" {
					t.Error("a false without a Reason")
				}
			}
		})
	}
}

// delegation is what Detect finds for a fake delegated unit holding pids.
func delegation(k *fakeKernel, pids ...int) Delegation {
	k.t.Helper()
	dir := delegatedTree(k, "memory pids")
	for _, p := range pids {
		k.spawn(p, unit)
	}
	return Delegation{Path: dir, Memory: true, Pids: true}
}

func TestNewGroup(t *testing.T) {
	t.Parallel()
	k := newFakeKernel(t)
	d := delegation(k, 100, 101)

	g, err := d.newGroup(k.ops(), "exec-1", 1<<30, 512)
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, k, map[string]string{
		// Our processes moved down into the service leaf…
		unit + "/cgroup.procs":                   "",
		unit + "/gatehouse-service/cgroup.procs": "100\n101\n",
		// …so the unit's cgroup could enable controllers for its children.
		unit + "/cgroup.subtree_control":            "memory pids",
		unit + "/gatehouse/cgroup.subtree_control":  "memory pids",
		unit + "/gatehouse/cgroup.procs":            "",
		unit + "/gatehouse/exec-1/memory.max":       "1073741824",
		unit + "/gatehouse/exec-1/memory.swap.max":  "0",
		unit + "/gatehouse/exec-1/memory.oom.group": "1",
		unit + "/gatehouse/exec-1/pids.max":         "512",
	})
	if got, want := filepath.ToSlash(g.Path()), filepath.ToSlash(k.path(unit+"/gatehouse/exec-1")); got != want {
		t.Errorf("Path: got %q, want %q", got, want)
	}
	if mem, pids := g.Enforced(); !mem || !pids {
		t.Errorf("Enforced() = %v, %v; want true, true", mem, pids)
	}

	// A second execution reuses the tree: nothing to move or enable.
	k.writes = nil
	g2, err := d.newGroup(k.ops(), "exec-2", 1<<20, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(k.writes, "\n"), strings.Join([]string{
		strings.TrimPrefix(unit, "/") + "/gatehouse/exec-2/memory.max=1048576",
		strings.TrimPrefix(unit, "/") + "/gatehouse/exec-2/memory.swap.max=0",
		strings.TrimPrefix(unit, "/") + "/gatehouse/exec-2/memory.oom.group=1",
	}, "\n"); got != want {
		t.Errorf("writes for a second group:\ngot  %q\nwant %q", got, want)
	}
	if mem, pids := g2.Enforced(); !mem || pids {
		t.Errorf("Enforced() = %v, %v; want true, false (pids 0 means no limit)", mem, pids)
	}
	if got := k.read(unit + "/gatehouse/exec-2/pids.max"); got != "max\n" {
		t.Errorf("pids.max: got %q, want untouched %q", got, "max\n")
	}

	// The same name twice is an error, not a shared cgroup.
	if _, err := d.newGroup(k.ops(), "exec-1", 1, 1); !errors.Is(err, fs.ErrExist) {
		t.Errorf("duplicate name: got %v, want an error wrapping fs.ErrExist", err)
	}

	for _, g := range []*Group{g, g2} {
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if got := k.read(filepath.ToSlash(mustRel(t, k.root, g.Path())) + "/cgroup.procs"); got != "<absent>" {
			t.Errorf("%s still exists after Close", g.Path())
		}
	}
}

func mustRel(t *testing.T, base, p string) string {
	t.Helper()
	rel, err := filepath.Rel(base, p)
	if err != nil {
		t.Fatal(err)
	}
	return "/" + rel
}

func checkFiles(t *testing.T, k *fakeKernel, want map[string]string) {
	t.Helper()
	for rel, w := range want {
		if got := k.read(rel); got != w {
			t.Errorf("%s: got %q, want %q", rel, got, w)
		}
	}
}

func TestNewGroupPartial(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		granted    string
		d          func(d Delegation) Delegation
		noSwap     bool
		memoryMax  int64
		pidsMax    int64
		wantMemory bool
		wantPids   bool
		want       map[string]string
	}{
		{
			name: "pids only", granted: "pids",
			d:         func(d Delegation) Delegation { d.Memory = false; return d },
			memoryMax: 1 << 30, pidsMax: 64, wantPids: true,
			want: map[string]string{
				unit + "/cgroup.subtree_control":           "pids",
				unit + "/gatehouse/exec/memory.max":        "<absent>",
				unit + "/gatehouse/exec/pids.max":          "64",
				unit + "/gatehouse/cgroup.subtree_control": "pids",
			},
		},
		{
			name: "memory only", granted: "memory",
			d:         func(d Delegation) Delegation { d.Pids = false; return d },
			memoryMax: 4096, pidsMax: 64, wantMemory: true,
			want: map[string]string{
				unit + "/gatehouse/exec/memory.max": "4096",
				unit + "/gatehouse/exec/pids.max":   "<absent>",
			},
		},
		{
			// Without swap accounting the kernel has no memory.swap.max; a
			// write must not create it.
			name: "no swap accounting", granted: "memory pids", noSwap: true,
			memoryMax: 4096, pidsMax: 64, wantMemory: true, wantPids: true,
			want: map[string]string{
				unit + "/gatehouse/exec/memory.max":      "4096",
				unit + "/gatehouse/exec/memory.swap.max": "<absent>",
			},
		},
		{
			name: "no limits asked", granted: "memory pids",
			want: map[string]string{
				unit + "/gatehouse/exec/memory.max": "max\n",
				unit + "/gatehouse/exec/pids.max":   "max\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			k := newFakeKernel(t)
			k.noSwap = tt.noSwap
			dir := delegatedTree(k, tt.granted)
			k.spawn(100, unit)
			d := Delegation{Path: dir, Memory: true, Pids: true}
			if tt.d != nil {
				d = tt.d(d)
			}
			g, err := d.newGroup(k.ops(), "exec", tt.memoryMax, tt.pidsMax)
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			if mem, pids := g.Enforced(); mem != tt.wantMemory || pids != tt.wantPids {
				t.Errorf("Enforced() = %v, %v; want %v, %v", mem, pids, tt.wantMemory, tt.wantPids)
			}
			checkFiles(t, k, tt.want)
		})
	}
}

func TestNewGroupErrors(t *testing.T) {
	t.Parallel()

	t.Run("nothing delegated", func(t *testing.T) {
		t.Parallel()
		d := Delegation{Reason: "cgroup v2 not mounted at /sys/fs/cgroup (hybrid hierarchy: memory and pids are cgroup v1 controllers on this host)"}
		_, err := d.newGroup(newFakeKernel(t).ops(), "exec", 1, 1)
		if !errors.Is(err, sandbox.ErrUnavailable) {
			t.Fatalf("got %v, want an error wrapping sandbox.ErrUnavailable", err)
		}
		if got, want := err.Error(), "sandbox unavailable: "+d.Reason; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	t.Run("negative", func(t *testing.T) {
		t.Parallel()
		k := newFakeKernel(t)
		_, err := delegation(k, 100).newGroup(k.ops(), "exec", -1, 1)
		if got, want := fmt.Sprint(err), "negative cgroup limit (memory -1, pids 1)"; got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	})

	for _, name := range []string{"", ".", "..", "a/b", "../x", "a\\b", "memory.max", "cgroup.procs", "a b", "a\nb", strings.Repeat("x", 129)} {
		t.Run("name "+fmt.Sprintf("%q", name), func(t *testing.T) {
			t.Parallel()
			k := newFakeKernel(t)
			_, err := delegation(k, 100).newGroup(k.ops(), name, 1, 1)
			if err == nil || !strings.Contains(err.Error(), "invalid cgroup name") {
				t.Errorf("got %v, want an invalid cgroup name error", err)
			}
			if len(k.writes) != 0 {
				t.Errorf("wrote %q before rejecting the name", k.writes)
			}
		})
	}

	t.Run("limit write fails", func(t *testing.T) {
		t.Parallel()
		k := newFakeKernel(t)
		k.failWrite = "pids.max"
		_, err := delegation(k, 100).newGroup(k.ops(), "exec", 1<<20, 8)
		if got, want := fmt.Sprint(err), "setting cgroup pids.max to 8: write "+k.path(unit+"/gatehouse/exec/pids.max")+": "+syscall.EINVAL.Error(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
		if got := k.read(unit + "/gatehouse/exec/cgroup.procs"); got != "<absent>" {
			t.Error("the half-made cgroup was left behind")
		}
	})

	t.Run("process left in the unit", func(t *testing.T) {
		// Without the move, the kernel refuses to enable controllers.
		t.Parallel()
		k := newFakeKernel(t)
		d := delegation(k, 100)
		o := k.ops()
		o.write = func(p, data string) error {
			if filepath.Base(p) == "cgroup.procs" {
				return nil // pretend to move, leave it where it is
			}
			return k.write(p, data)
		}
		_, err := d.newGroup(o, "exec", 1, 1)
		if err == nil || !strings.Contains(err.Error(), "processes keep appearing") {
			t.Errorf("got %v, want a failure to empty the unit", err)
		}
	})
}

func TestNewGroupConcurrent(t *testing.T) {
	t.Parallel()
	k := newFakeKernel(t)
	d := delegation(k, 100)
	var wg sync.WaitGroup
	groups := make([]*Group, 8)
	errs := make([]error, 8)
	for i := range groups {
		wg.Go(func() {
			groups[i], errs[i] = d.newGroup(k.ops(), fmt.Sprintf("exec-%d", i), 1<<20, 16)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
		if err := groups[i].Close(); err != nil {
			t.Fatalf("group %d: %v", i, err)
		}
	}
}

func TestKillAndClose(t *testing.T) {
	t.Parallel()

	t.Run("cgroup.kill", func(t *testing.T) {
		t.Parallel()
		k := newFakeKernel(t)
		g, err := delegation(k, 100).newGroup(k.ops(), "exec", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		k.spawn(500, unit+"/gatehouse/exec")
		k.spawn(501, unit+"/gatehouse/exec")
		if err := g.Kill(); err != nil {
			t.Fatal(err)
		}
		if got := k.read(unit + "/gatehouse/exec/cgroup.procs"); got != "" {
			t.Errorf("cgroup.procs after Kill: got %q, want empty", got)
		}
		if len(k.killed) != 0 {
			t.Errorf("signalled %v; want cgroup.kill alone", k.killed)
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if err := g.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := g.Kill(); err != nil {
			t.Errorf("Kill after Close: %v", err)
		}
	})

	t.Run("SIGKILL without cgroup.kill", func(t *testing.T) {
		t.Parallel()
		k := newFakeKernel(t)
		k.noKill = true
		g, err := delegation(k, 100).newGroup(k.ops(), "exec", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		k.spawn(500, unit+"/gatehouse/exec")
		k.spawn(501, unit+"/gatehouse/exec")
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := fmt.Sprint(k.killed), "[500 501]"; got != want {
			t.Errorf("killed: got %q, want %q", got, want)
		}
		if got := k.read(unit + "/gatehouse/exec/cgroup.procs"); got != "<absent>" {
			t.Error("cgroup left behind")
		}
		// The service itself was never signalled.
		if got := k.read(unit + "/gatehouse-service/cgroup.procs"); got != "100\n" {
			t.Errorf("service leaf: got %q, want %q", got, "100\n")
		}
	})

	t.Run("a process that will not die", func(t *testing.T) {
		t.Parallel()
		k := newFakeKernel(t)
		g, err := delegation(k, 100).newGroup(k.ops(), "exec", 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		g.closeWait = 50 * time.Millisecond
		k.immortal[500] = true
		k.spawn(500, unit+"/gatehouse/exec")
		err = g.Close()
		if !errors.Is(err, syscall.EBUSY) {
			t.Errorf("got %v, want an error wrapping EBUSY", err)
		}
	})
}
