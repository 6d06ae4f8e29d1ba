package trust

// This file says what may never be trusted as a workspace, whatever is
// asked and whoever asks. Every path is judged where its symlinks lead:
//
//   - "/", the home directory, and any directory above the home directory;
//   - the system directories themselves (/etc, /usr, /var, /opt, /tmp,
//     /home, /System, /Library, /private/var, …), and anything inside the
//     read-only system trees (/etc, /usr, /boot, /proc, /sys, /dev, /bin,
//     /sbin, /lib*, /System, /private/etc, /nix/store);
//   - Gatehouse's own configuration, state and runtime directories,
//     anything inside them and anything above them;
//   - the places whose files run later on the host (policy.AutorunHome,
//     policy.AutorunSystem: autostart, $PATH directories, shell start-up
//     directories, unit directories, cron, launchd, Gatehouse's own
//     caches), anything inside them and anything above them;
//   - anything inside a deny-read path, and anything above a mandatory
//     one (the credential stores, what they lead to, the keys
//     ~/.ssh/config names). A configured exec.sandbox.deny_read entry may
//     lie inside a workspace, as it may inside policy.workspace_roots: that
//     is how a secret in a project is hidden;
//   - with a managed file that bounds the roots, anything outside those
//     bounds.

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// systemDirs are directories that are never a workspace themselves
// (a project may lie inside one, as /srv/app or /opt/app).
var systemDirs = []string{
	"/etc", "/usr", "/var", "/var/tmp", "/opt", "/boot", "/bin", "/sbin",
	"/lib", "/lib32", "/lib64", "/libx32", "/proc", "/sys", "/dev", "/run",
	"/srv", "/tmp", "/mnt", "/media", "/home", "/root", "/nix", "/snap",
	"/System", "/Library", "/Applications", "/Users", "/Volumes", "/Network",
	"/cores", "/private", "/private/etc", "/private/var", "/private/tmp",
}

// systemTrees are the read-only system trees: nothing inside one is a
// workspace. A top-level directory named lib… is one too.
var systemTrees = []string{
	"/etc", "/usr", "/boot", "/proc", "/sys", "/dev", "/bin", "/sbin",
	"/System", "/private/etc", "/nix/store",
}

// Guard says what may never be trusted. Its paths are absolute and
// resolved (GuardFor resolves them); the zero Guard refuses only "/", the
// system directories and the system trees. It is plain data: Problem
// only reads it, so one Guard may serve many goroutines.
type Guard struct {
	// Home is the home directory, resolved; "" skips the home checks.
	Home string
	// DenyRead are the deny-read paths a workspace may not lie in.
	DenyRead []string
	// Mandatory are the deny-read paths a workspace may not lie above
	// either: the credential stores, what they lead to, the keys
	// ~/.ssh/config names.
	Mandatory []string
	// Private are Gatehouse's own directories (configuration, state,
	// runtime): a workspace may be none of them, lie in none and hold
	// none.
	Private []string
	// Autorun are the places whose files run later on the host
	// (policy.AutorunFor): a workspace may be none of them, lie in none
	// and hold none.
	Autorun []string
	// ManagedBound are the managed workspace roots: a workspace must lie
	// in one of them. Nil for no bound.
	ManagedBound []string
}

// GuardFor returns the Guard of the configuration cfg (nil: the defaults)
// for the user whose home is home. private are Gatehouse's own paths: its
// configuration, state and runtime directories, and a user file named
// outside them. A private directory is refused as a workspace, inside
// and above; a private file is only hidden, as any deny-read path is. The
// service and the CLI build their Guard here, so both refuse the same
// directories.
func GuardFor(cfg *policy.Config, home string, private []string) Guard {
	var g Guard
	var files, dirs []string
	for _, p := range private {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	var extra []string
	if cfg != nil {
		extra = cfg.Exec.Sandbox.DenyRead
	}
	if filepath.IsAbs(home) {
		g.Home = policy.Resolve(filepath.ToSlash(home))
		g.Autorun = policy.AutorunFor(filepath.ToSlash(home))
		g.Mandatory = uniq(policy.ResolveEach(sandbox.DenyRead(home, nil)))
		g.DenyRead = uniq(policy.ResolveEach(sandbox.DenyRead(home, slices.Concat(files, dirs, extra))))
	} else {
		g.DenyRead = uniq(policy.ResolveEach(slices.Concat(files, dirs, extra)))
	}
	g.Private = uniq(policy.ResolveEach(dirs))
	if cfg != nil && cfg.Managed != nil && len(cfg.Managed.WorkspaceRoots) > 0 {
		g.ManagedBound = uniq(policy.ResolveEach(cfg.Managed.WorkspaceRoots))
	}
	return g
}

// Problem returns why the resolved directory real may not be trusted, as
// a phrase that follows "is" ("the home directory", "a system
// directory"), or "" when it may.
func (g Guard) Problem(real string) string {
	if !filepath.IsAbs(real) {
		return "not an absolute path"
	}
	real = filepath.Clean(real)
	if p := policy.RootProblem(real, g.Home, nil, nil); p != "" {
		return p
	}
	if slices.Contains(systemDirs, real) {
		return "a system directory"
	}
	if t := systemTree(real); t != "" {
		return fmt.Sprintf("inside the read-only system directory %q", t)
	}
	for _, p := range g.Private {
		switch {
		case real == p:
			return "one of Gatehouse's own directories"
		case sandbox.Within(real, p):
			return fmt.Sprintf("inside Gatehouse's own directory %q", p)
		case sandbox.Within(p, real):
			return fmt.Sprintf("above Gatehouse's own directory %q", p)
		}
	}
	if p := policy.AutorunProblem(real, g.Autorun); p != "" {
		return p
	}
	if p := policy.RootProblem(real, g.Home, g.DenyRead, g.Mandatory); p != "" {
		return p
	}
	if g.ManagedBound != nil && !slices.ContainsFunc(g.ManagedBound, func(b string) bool { return sandbox.Within(real, b) }) {
		return "outside the managed workspace roots " + quoteList(g.ManagedBound)
	}
	return ""
}

// NotInForce says why the trusted root p is not in force now, or returns
// "": it must still resolve to itself, and g must not refuse it.
func (g Guard) NotInForce(p string) string {
	real := filepath.FromSlash(fspath.Resolve(filepath.ToSlash(p)))
	_, err := os.Stat(real)
	switch {
	case err != nil:
		return "does not exist"
	case real != p:
		return fmt.Sprintf("now resolves to %q; remove it and trust the directory again", real)
	}
	if problem := g.Problem(real); problem != "" {
		return "is " + problem
	}
	return ""
}

// systemTree returns the read-only system tree real lies in, or "".
func systemTree(real string) string {
	if i := slices.IndexFunc(systemTrees, func(t string) bool { return sandbox.Within(real, t) }); i >= 0 {
		return systemTrees[i]
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(real, "/"), "/")
	if strings.HasPrefix(top, "lib") {
		return "/" + top
	}
	return ""
}

// Top returns the top of the git repository dir lies in: the nearest
// directory, from dir up, that holds a .git entry (a directory, or the
// file of a worktree or submodule). The walk stops below home and below
// "/", neither of which is a project; dir is returned when it finds none.
// dir and home are absolute and resolved.
func Top(dir, home string) string {
	for d := filepath.Clean(dir); d != home && d != "/"; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return dir
}

func quoteList(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = fmt.Sprintf("%q", p)
	}
	return "[" + strings.Join(q, " ") + "]"
}

// uniq returns ps without repeats, in order.
func uniq(ps []string) []string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}
