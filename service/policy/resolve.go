package policy

// This file gives configured paths their meaning: the place a path names
// is where its symlinks lead, not its text. Narrowing (narrow.go) compares
// resolved paths, and the workspace roots are judged by where they
// resolve:
//
//	a workspace root (or exec.default_cwd when it is the only root) may
//	not resolve to "/", to the home directory or a directory above it,
//	into a deny-read path, or over a mandatory deny-read path (a root
//	that contains ~/.ssh, ~/.config/gcloud...)
//
//	an exec.sandbox.read_allow entry may not resolve into a deny-read
//	path
//
// A root over a configured exec.sandbox.deny_read entry is allowed: that
// is how a secret file inside a project is hidden, and the sandbox hides
// it inside the root too. A path is resolved when the configuration is
// loaded; a symlink can be planted later, so the executor resolves the
// roots and the working directory again at each execution and refuses a
// root that these rules, or the managed bounds (Config.Managed), refuse
// then (service/pipeline).

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/fspath"
	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// MandatoryDenyRead are the home-relative paths no command may read,
// whatever the configuration says.
var MandatoryDenyRead = sandbox.SecretStores

// MandatoryDenyReadFor returns MandatoryDenyRead under home.
func MandatoryDenyReadFor(home string) []string {
	out := make([]string, len(MandatoryDenyRead))
	for i, p := range MandatoryDenyRead {
		out[i] = path.Join(home, p)
	}
	return out
}

// ManagedPaths are the managed file's bounds on paths, kept with the
// effective configuration so that they can be checked again when a path
// may have changed since it was loaded (a symlink planted in a workspace).
type ManagedPaths struct {
	// WorkspaceRoots bound the effective workspace roots: each must
	// resolve inside one of them. They are the managed
	// policy.workspace_roots, or the managed exec.default_cwd when the
	// managed file sets that and no roots. Empty means no bound.
	WorkspaceRoots []string
	// Field names the managed field WorkspaceRoots come from, for messages.
	Field string
}

// Resolve returns the absolute path p with its symlinks evaluated, by
// fspath.Resolve's rule: the kernel's, ".." after a symlink leaving where
// it leads; of a path that does not exist yet, the part that exists is
// resolved and the rest appended. A relative p is returned cleaned,
// unresolved.
func Resolve(p string) string { return newResolver().resolve(p) }

// A resolver is Resolve over many paths at one moment: it remembers what
// each directory on the way resolved to (or that it does not exist), so
// that the many paths below one directory (the deny-read set under the
// home directory) walk it once, and what each lstat it made found, so
// that a caller asking about the same paths at the same moment (the
// sandbox's deny-read set: sandbox.DenyReadBy) does not ask the kernel
// again.
type resolver struct {
	real  map[string]*string
	stats map[string]lstatResult
}

type lstatResult struct {
	fi  fs.FileInfo
	err error
}

func newResolver() resolver {
	return resolver{real: map[string]*string{}, stats: map[string]lstatResult{}}
}

// lstat is os.Lstat of name, remembered.
func (c resolver) lstat(name string) (fs.FileInfo, error) {
	if r, ok := c.stats[name]; ok {
		return r.fi, r.err
	}
	fi, err := os.Lstat(name)
	c.stats[name] = lstatResult{fi, err}
	return fi, err
}

func (c resolver) resolve(p string) string {
	if !path.IsAbs(p) || slices.Contains(strings.Split(p, "/"), "..") {
		return fspath.Resolve(p)
	}
	// Without "..", cleaning first changes nothing fspath.Resolve would
	// find: walking up from the path, remembering each directory, gives
	// its answer with one lookup per directory shared by many paths.
	p = path.Clean(p)
	rest := ""
	for dir := p; ; dir = path.Dir(dir) {
		if r := c.eval(dir); r != nil {
			return path.Join(*r, rest)
		}
		if dir == "/" {
			return p
		}
		rest = path.Join(path.Base(dir), rest)
	}
}

// eval is filepath.EvalSymlinks of dir, remembered; nil when it fails.
func (c resolver) eval(dir string) *string {
	if r, ok := c.real[dir]; ok {
		return r
	}
	var res *string
	// Most paths asked about do not exist (credential stores of tools
	// not installed): one lstat says so, where EvalSymlinks would walk
	// every component first.
	fi, err := c.lstat(filepath.FromSlash(dir))
	if err != nil {
		c.real[dir] = nil
		return nil
	}
	// One that is not a symlink is where its directory resolves (which
	// is remembered), under its own name: EvalSymlinks would walk every
	// component of it again, for each of the paths under one directory.
	if parent := path.Dir(dir); fi.Mode()&fs.ModeSymlink == 0 && parent != dir && path.IsAbs(parent) {
		if r := c.eval(parent); r != nil {
			s := path.Join(*r, path.Base(dir))
			c.real[dir] = &s
			return &s
		}
	}
	if r, err := filepath.EvalSymlinks(filepath.FromSlash(dir)); err == nil {
		s := filepath.ToSlash(r)
		res = &s
	}
	c.real[dir] = res
	return res
}

// RootProblem says why the resolved workspace root real may not be one,
// as a phrase that follows "is" ("the home directory"), or returns ""
// when it may. home is the resolved home directory ("" skips the home
// checks); denyRead are resolved deny-read paths a root may not lie in,
// and mandatory those it may not lie above either.
func RootProblem(real, home string, denyRead, mandatory []string) string {
	switch {
	case real == "/":
		return "the whole filesystem"
	case home != "" && real == home:
		return "the home directory"
	case home != "" && sandbox.Within(home, real):
		return "above the home directory"
	}
	if i := slices.IndexFunc(denyRead, func(d string) bool { return sandbox.Within(real, d) }); i >= 0 {
		return fmt.Sprintf("inside the deny-read path %q", denyRead[i])
	}
	if i := slices.IndexFunc(mandatory, func(d string) bool { return sandbox.Within(d, real) }); i >= 0 {
		return fmt.Sprintf("above the deny-read path %q", mandatory[i])
	}
	return ""
}

// checkRoots judges the effective workspace roots of l by where they
// resolve (see the head of this file) and returns an error for each one
// refused, naming the field and where it was set.
func checkRoots(l *Loaded, home string) []error {
	c := &l.Config
	// One resolver for the whole check: the paths it judges are looked at
	// at one moment, each directory once.
	res := newResolver()
	resolvedHome := ""
	if path.IsAbs(home) {
		resolvedHome = res.resolve(home)
	}
	var deny, mandatory, autorun []string
	if resolvedHome != "" {
		autorun = autorunFor(res, home)
		// Gatehouse's own directories, where they are by default: the
		// executor knows where they really are and checks again.
		own := []string{ConfigDir(runtime.GOOS, home, ""), StateDir(runtime.GOOS, home, "")}
		mandatory = res.each(append(MandatoryDenyReadFor(home), own...))
	}
	deny = append(deny, mandatory...)
	for _, d := range c.Exec.Sandbox.DenyRead {
		if path.IsAbs(d) {
			deny = append(deny, res.resolve(d))
		}
	}
	check := func(root, field string, src Source) []error {
		if !path.IsAbs(root) {
			return nil // validation reports it
		}
		real := res.resolve(root)
		problem := RootProblem(real, resolvedHome, deny, mandatory)
		if problem == "" {
			problem = AutorunProblem(real, autorun)
		}
		if problem == "" {
			return nil
		}
		what := fmt.Sprintf("%q is %s", root, problem)
		if real != path.Clean(root) {
			what = fmt.Sprintf("%q resolves to %q, %s", root, real, problem)
		}
		return []error{errAt(src, field, "%s; a workspace root is writable by every command, so want a project directory like ~/src/app", what)}
	}
	// A read_allow entry may not lie in a deny-read path: the deny set
	// holds whatever the posture.
	const ra = "exec.sandbox.read_allow"
	var errs []error
	for i, a := range c.Exec.Sandbox.ReadAllow {
		if !path.IsAbs(a) {
			continue // validation reports it
		}
		real := res.resolve(a)
		if j := slices.IndexFunc(deny, func(d string) bool { return sandbox.Within(real, d) }); j >= 0 {
			errs = append(errs, errAt(l.itemSource(ra, i), fmt.Sprintf("%s[%d]", ra, i),
				"%s is inside the deny-read path %q; the deny-read set is never readable", showPath(a), deny[j]))
		}
	}
	const roots = "policy.workspace_roots"
	if len(c.Policy.WorkspaceRoots) == 0 {
		return append(errs, check(c.Exec.DefaultCWD, "exec.default_cwd", l.source("exec.default_cwd"))...)
	}
	for i, r := range c.Policy.WorkspaceRoots {
		errs = append(errs, check(r, fmt.Sprintf("%s[%d]", roots, i), l.itemSource(roots, i))...)
	}
	return errs
}

// ResolveWorkspaceRoots resolves the effective workspace roots now, with
// filepath.EvalSymlinks, and returns them; roots that do not exist are
// left out (there is nothing to bind). It refuses, with an error naming
// the root, a root that resolves where no root may be (RootProblem) or
// outside the managed bound (Config.Managed). private are Gatehouse's own
// paths: a root may lie in none of them, nor above a private directory.
// Load judged the same paths; this judges them again, as they are now: a
// symlink may have been planted since.
func (c *Config) ResolveWorkspaceRoots(home string, private []string) ([]string, error) {
	return c.RootJudge(home, private).Roots()
}

// A RootJudge is what ResolveWorkspaceRoots judges roots against, resolved
// once: the home directory, the deny-read set and the managed bound as
// they resolved when it was made. Roots resolves the roots themselves
// anew at each call, so one judge serves the checks of one execution (a
// root moved by a symlink between them is still seen) without resolving
// the whole deny-read set at each.
type RootJudge struct {
	c *Config
	// res is the moment the judge was made: what each directory on the
	// way resolved to then (ResolveEach).
	res             resolver
	resolvedHome    string
	deny, mandatory []string
	autorun         []string
	bound           []string
}

// RootJudge resolves what the workspace roots are judged against now
// (ResolveWorkspaceRoots).
func (c *Config) RootJudge(home string, private []string) *RootJudge {
	j := &RootJudge{c: c, res: newResolver()}
	if home != "" {
		j.resolvedHome = j.res.resolve(filepath.ToSlash(home))
		j.autorun = autorunFor(j.res, filepath.ToSlash(home))
	}
	// A private file (a user file named with --config) is hidden where it
	// is, read-only, so a root may hold it; a private directory may be
	// missing, and then a root above it could create it.
	var privateFiles, privateDirs []string
	for _, p := range private {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			privateFiles = append(privateFiles, p)
		} else {
			privateDirs = append(privateDirs, p)
		}
	}
	j.mandatory = j.ResolveEach(append(MandatoryDenyReadFor(home), privateDirs...))
	j.deny = append(slices.Clone(j.mandatory), j.ResolveEach(append(privateFiles, c.Exec.Sandbox.DenyRead...))...)
	if c.Managed != nil {
		j.bound = j.ResolveEach(c.Managed.WorkspaceRoots)
	}
	return j
}

// ResolveEach is policy.ResolveEach at the moment the judge was made: a
// directory it resolved then (the home directory, the deny-read set's) is
// not looked up again, and one it did not is looked up now. The step of an
// execution that made the judge resolves its other paths (the sandbox's
// deny-read set) through it, so that one step resolves the same
// directories once; the next step makes a judge of its own. It is not
// safe for concurrent use.
func (j *RootJudge) ResolveEach(paths []string) []string { return j.res.each(paths) }

// Lstat is os.Lstat at the moment the judge was made, as ResolveEach is
// policy.ResolveEach: a path the judge looked at then is not looked at
// again. It is not safe for concurrent use.
func (j *RootJudge) Lstat(name string) (fs.FileInfo, error) { return j.res.lstat(name) }

// Roots resolves the effective workspace roots now and judges them
// (ResolveWorkspaceRoots).
func (j *RootJudge) Roots() ([]string, error) {
	c := j.c
	var out []string
	for _, r := range c.WorkspaceRootsEffective() {
		real := fspath.Resolve(filepath.ToSlash(r))
		if _, err := os.Stat(filepath.FromSlash(real)); err != nil {
			continue
		}
		problem := RootProblem(real, j.resolvedHome, j.deny, j.mandatory)
		if problem == "" {
			problem = AutorunProblem(real, j.autorun)
		}
		if problem != "" {
			return nil, fmt.Errorf("workspace root %q now resolves to %q, %s; remove the symlink or change policy.workspace_roots", r, real, problem)
		}
		if j.bound != nil && !slices.ContainsFunc(j.bound, func(b string) bool { return sandbox.Within(real, b) }) {
			return nil, fmt.Errorf("workspace root %q now resolves to %q, outside the managed %s %s; remove the symlink or change policy.workspace_roots",
				r, real, c.Managed.Field, quoteList(c.Managed.WorkspaceRoots))
		}
		if !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	return out, nil
}

// managedPaths returns the managed file's bounds on paths, or nil when it
// sets none.
func managedPaths(managed *layer) *ManagedPaths {
	if managed == nil {
		return nil
	}
	roots, field, _ := managedRootBound(managed)
	if len(roots) == 0 {
		return nil
	}
	return &ManagedPaths{WorkspaceRoots: slices.Clone(roots), Field: field}
}

// managedRootBound returns the directories the managed file lets
// workspace roots lie in: its policy.workspace_roots when not empty, else
// its exec.default_cwd (with no roots, the default working directory is
// the only workspace root, so a user root elsewhere would widen it).
func managedRootBound(managed *layer) (roots []string, field string, src Source) {
	const p = "policy.workspace_roots"
	if managed.has(p) && len(managed.vals.Policy.WorkspaceRoots) > 0 {
		return managed.vals.Policy.WorkspaceRoots, p, managed.source(p)
	}
	if managed.has("exec.default_cwd") {
		return []string{managed.vals.Exec.DefaultCWD}, "exec.default_cwd", managed.source("exec.default_cwd")
	}
	return nil, "", Source{}
}

// ResolveEach is Resolve of each of paths, at one moment: a directory
// they share is resolved once.
func ResolveEach(paths []string) []string { return newResolver().each(paths) }

// each is ResolveEach through c.
func (c resolver) each(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = c.resolve(filepath.ToSlash(p))
	}
	return out
}
