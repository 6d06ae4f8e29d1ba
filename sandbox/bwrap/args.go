// Package bwrap turns a sandbox.Spec into a bubblewrap invocation.
//
// Generating the argument list is portable and golden-tested on every OS;
// running it is Linux-only (run_linux.go).
package bwrap

import (
	"path/filepath"
	"slices"
	"sort"
	"strconv"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

// Paths inside the sandbox that Gatehouse owns. /run is an empty tmpfs in
// the sandbox, so nothing of the host's /run (the user's bus and service
// sockets among it) is visible there.
const (
	RunDir   = sandbox.RunDir
	InitPath = sandbox.InitInSandbox
	// EgressDir is where the directory of the egress proxy's socket is
	// bound: a warm sandbox binds it before the proxy listens there.
	EgressDir = sandbox.EgressDirInSandbox
	// ProxySocket is the egress proxy's socket, named ProxySocketName in
	// its directory.
	ProxySocket     = EgressDir + "/" + ProxySocketName
	ProxySocketName = sandbox.ProxySocketName
	// BridgeAddr is where the init's network bridge listens, in the
	// sandbox's own network namespace; the proxy variables point at it.
	BridgeAddr = "127.0.0.1:3128"
)

// Mounts is what the host file system looks like, as far as Args needs to
// know: which deny-read paths exist and whether as directories, and which
// write-deny paths exist. The runner fills it in from the real file system;
// tests fill it in by hand.
type Mounts struct {
	// HideDirs and HideFiles are the existing deny-read paths.
	HideDirs, HideFiles []string
	// ProtectDirs are directories bound read-only; ProtectFiles are files
	// bound read-only. Both lie inside workspace roots.
	ProtectDirs, ProtectFiles []string
	// Anchors are directories bound over themselves (writable) so that they
	// cannot be renamed or removed from inside (EBUSY): a repository's
	// .git, whose hooks and config are protected, the directories between
	// a workspace root and a nested repository or a deny-read path in it.
	Anchors []string
	// Covers hide what will appear at absent deny-read paths: each is an
	// existing directory replaced by an empty tmpfs with its entries bound
	// back read-only and an empty read-only directory at each absent name,
	// so that a credential store made on the host while the command runs
	// is hidden too.
	Covers []Cover
}

// A Cover is an existing directory outside the workspace roots that holds
// absent deny-read paths.
type Cover struct {
	Dir string
	// Entries are what Dir held when the plan was made.
	Entries []CoverEntry
	// Placeholders are the names of the absent paths (their first missing
	// component).
	Placeholders []string
}

// A CoverEntry is one entry of a covered directory: bound back from the
// host, or made again as the link it was (a link's target is read when
// something follows it, so it cannot be bound).
type CoverEntry struct {
	Name string
	Link string // the target, when the entry is a link
}

// Options are facts about the bwrap binary that change the arguments.
type Options struct {
	// DisableUserns adds --disable-userns (bubblewrap 0.8.0 and later).
	DisableUserns bool
}

// RunOptions tune one run beyond its Spec.
type RunOptions struct {
	Options
	// CgroupFD, when non-negative, is an open cgroup v2 directory the
	// sandbox is started in (CLONE_INTO_CGROUP); Memory and Pids say which
	// of its limits are set.
	CgroupFD     int
	Memory, Pids bool
	// BlockedSuffix names files moved aside by the write-deny sweep.
	BlockedSuffix string
}

// Args returns the bubblewrap options (without the program name) for spec.
// The runner passes them through --args, so that they appear in no command
// line; the command itself, InitCommand, follows on bwrap's own command
// line (bwrap takes no command from --args).
func Args(spec *sandbox.Spec, m *Mounts, opt Options) []string {
	a := []string{
		"--unshare-all", "--unshare-user",
		"--die-with-parent", "--new-session", "--as-pid-1",
		// bwrap keeps capabilities inside the user namespace when run by
		// root; a command never needs them.
		"--cap-drop", "ALL",
	}
	if spec.Network != nil {
		// The session's network namespace, joined before bwrap starts
		// (run_linux.go); every other namespace is the command's own.
		a = append(a, "--share-net")
	}
	if opt.DisableUserns {
		a = append(a, "--disable-userns")
	}
	a = append(a,
		"--ro-bind", "/", "/",
		"--dev", "/dev",
		"--proc", "/proc",
		"--perms", "1777",
	)
	if spec.TmpfsSize > 0 {
		a = append(a, "--size", strconv.FormatInt(spec.TmpfsSize, 10))
	}
	a = append(a, "--tmpfs", "/tmp",
		"--tmpfs", "/run",
		"--ro-bind", spec.InitPath, InitPath,
	)
	// Covers come before everything that may lie below them (the
	// workspace roots, the read posture's hidden directories). One the
	// read posture hides whole needs none.
	covers := slices.DeleteFunc(slices.Clone(m.Covers), func(c Cover) bool {
		return spec.Read == sandbox.ReadWorkspace && withinAny(c.Dir, spec.ReadHide) && !withinAny(c.Dir, spec.ReadAllow)
	})
	for _, c := range covers {
		a = append(a, "--perms", "0755", "--tmpfs", c.Dir)
		for _, e := range c.Entries {
			p := filepath.Join(c.Dir, e.Name)
			if e.Link != "" {
				a = append(a, "--symlink", e.Link, p)
			} else {
				// An entry gone since the plan was made (a lock
				// file) is left out rather than failing the run.
				a = append(a, "--ro-bind-try", p, p)
			}
		}
		for _, n := range c.Placeholders {
			a = append(a, "--perms", "0700", "--dir", filepath.Join(c.Dir, n))
		}
	}
	// The read posture workspace hides the user's data under empty
	// directories, then brings back what commands may read; the
	// workspace binds and everything after them come back on their own.
	// A directory inside a root or a read_allow entry is not hidden: it is
	// bound back whole, and a remount of it would hit that bind.
	var hide []string
	for _, d := range spec.ReadHide {
		if !withinAny(d, spec.WorkspaceRoots) && !withinAny(d, spec.ReadAllow) {
			hide = append(hide, d)
		}
	}
	workspace := spec.Read == sandbox.ReadWorkspace && len(hide) > 0
	if workspace {
		for _, d := range hide {
			a = append(a, "--perms", "0755", "--tmpfs", d)
		}
		allow := slices.Clone(spec.ReadAllow)
		sort.Strings(allow) // parents first
		for _, p := range allow {
			if !withinAny(p, spec.WorkspaceRoots) {
				a = append(a, "--ro-bind", p, p)
			}
		}
	}
	for _, root := range spec.WorkspaceRoots {
		a = append(a, "--bind", root, root)
	}
	// Anchors come before the read-only binds: a bind over a directory
	// takes what is below it from the host, so it must not cover them.
	for _, d := range anchors(m.Anchors, PinAnchors(spec.Pins, spec.WorkspaceRoots)) {
		a = append(a, "--bind", d, d)
	}
	for _, d := range m.ProtectDirs {
		a = append(a, "--ro-bind", d, d)
	}
	for _, f := range m.ProtectFiles {
		a = append(a, "--ro-bind", f, f)
	}
	// Deny-read comes after the workspace binds, so a secret inside a
	// workspace root is hidden too.
	// Under the workspace posture a deny-read path that nothing brought
	// back is hidden already.
	shown := func(p string) bool {
		return !workspace || !withinAny(p, hide) ||
			withinAny(p, spec.WorkspaceRoots) || withinAny(p, spec.ReadAllow) ||
			spec.ToolCache != nil && sandbox.Within(p, spec.ToolCache.Dir)
	}
	for _, d := range m.HideDirs {
		if shown(d) {
			a = append(a, "--perms", "0700", "--tmpfs", d, "--remount-ro", d)
		}
	}
	for _, f := range m.HideFiles {
		if shown(f) {
			a = append(a, "--ro-bind", "/dev/null", f)
		}
	}
	for _, p := range spec.Pins {
		a = append(a, "--ro-bind", p.Source, p.Path)
	}
	if tc := spec.ToolCache; tc != nil {
		// The other agents' caches are hidden under a private tmpfs,
		// made read-only once the agent's own is bound into it.
		a = append(a, "--perms", "0700", "--tmpfs", tc.Root,
			"--bind", tc.Dir, tc.Dir, "--remount-ro", tc.Root)
	}
	if spec.RuntimeDir != "" {
		a = append(a, "--perms", "0700", "--dir", spec.RuntimeDir)
	}
	for _, b := range spec.ExtraBinds {
		if b.Writable {
			a = append(a, "--bind", b.Source, b.Target)
		} else {
			a = append(a, "--ro-bind", b.Source, b.Target)
		}
	}
	if eg := spec.Egress; eg != nil {
		a = append(a, "--ro-bind", filepath.Dir(eg.Socket), EgressDir)
		if eg.ResolvConf != "" && eg.ResolvConfTarget != "" {
			a = append(a, "--ro-bind", eg.ResolvConf, eg.ResolvConfTarget)
		}
	}
	// Read-only once every mount point in them is made (bwrap's
	// --remount-ro does not reach the mounts below).
	for _, c := range covers {
		a = append(a, "--remount-ro", c.Dir)
	}
	if workspace {
		for _, d := range hide {
			a = append(a, "--remount-ro", d)
		}
	}
	// The working directory is the plan's (sandboxinit.Stage1Spec.Dir):
	// a warm sandbox is started before it is known.
	return append(a, "--chdir", "/")
}

// Bridge returns the network bridge the init starts for spec, or nil when
// spec has no egress proxy.
func Bridge(spec *sandbox.Spec) *sandboxinit.Bridge {
	if spec.Egress == nil {
		return nil
	}
	if n := spec.Network; n != nil && n.Bridge != "" {
		// The session's executions share the loopback: each bridge
		// listens on a port of its own.
		return &sandboxinit.Bridge{Listen: []string{n.Bridge}, Socket: ProxySocket}
	}
	return &sandboxinit.Bridge{Listen: []string{BridgeAddr}, Socket: ProxySocket}
}

// PinAnchors returns the directories between each pinned path and the
// workspace root it lies in (the root excluded). Bound over themselves they
// are mount points, which cannot be renamed or removed (EBUSY): a command
// cannot move a pinned script's directory aside and put other bytes at its
// path. Pins outside the workspace roots are read-only already.
func PinAnchors(pins []sandbox.Pin, roots []string) []string {
	var out []string
	for _, p := range pins {
		path := filepath.Clean(p.Path)
		for _, root := range roots {
			root = filepath.Clean(root)
			if path == root || !sandbox.Within(path, root) {
				continue
			}
			for d := filepath.Dir(path); d != root && sandbox.Within(d, root); d = filepath.Dir(d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// anchors merges lists of directories to bind over themselves, parents
// before children (a later bind of a parent would hide a child's).
func anchors(lists ...[]string) []string {
	var all []string
	for _, l := range lists {
		all = append(all, l...)
	}
	sort.Strings(all)
	return slices.Compact(all)
}

// InitCommand is the command bwrap runs: Gatehouse's init, bound in at
// InitPath.
var InitCommand = []string{"--", InitPath, "sandbox-init"}
