package bwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// repoSearchDepth bounds how far below a workspace root repositories are
// looked for; repoSearchEntries bounds how many directory entries are read.
const (
	repoSearchDepth   = 3
	repoSearchEntries = 20000
)

// skipDirs are not descended into when looking for repositories.
var skipDirs = map[string]bool{
	".git": true, "node_modules": true, "vendor": true, ".cache": true,
	"target": true, "dist": true, "build": true, ".venv": true, "venv": true,
}

// HostSurvey is the result of looking at the host file system for one execution.
type HostSurvey struct {
	Mounts Mounts
	// Watch are write-deny paths, files and directories, that did not
	// exist: they cannot be mounted over without creating them, and
	// Gatehouse creates nothing in the workspace. While the command runs
	// the guard (guard_linux.go) moves aside what appears at them; after
	// it, Sweep does.
	Watch []string
	// rootDirs are the workspace roots, opened when the plan was made:
	// every later look and move inside them starts from these
	// descriptors and follows no link (beneath_unix.go).
	rootDirs []rootDir
	// parents identifies the directory of each Watch path as it was
	// when the plan was made (reached from its root without a link; zero
	// when it could not be), so that the guard and Sweep act only in
	// that very directory, never in one the command put in its place.
	parents map[string]fileStat
	// names are the write-deny names the plan was made for; git is what
	// the repositories in the roots held (gitsweep.go).
	names []string
	git   *gitState
}

// Discover classifies the deny-read paths and finds the write-deny paths
// inside roots: existing ones are bound read-only, missing ones are
// watched. It opens the roots and walks them for repositories (gitsweep.go)
// for Sweep; a workspace over the walk's bound is an error wrapping
// ErrSweepBound. It changes nothing on the host. Close the survey when
// done with it.
func Discover(roots, denyRead, writeDeny []string) (*HostSurvey, error) {
	return discover(roots, denyRead, writeDeny, true)
}

// discover is Discover; without sweep it makes the mount plan alone (a
// warm sandbox's, which is never swept) and opens nothing.
func discover(roots, denyRead, writeDeny []string, sweep bool) (*HostSurvey, error) {
	p := &HostSurvey{}
	for _, d := range denyRead {
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			continue // absent or dangling: nothing to hide
		case fi.IsDir():
			p.Mounts.HideDirs = append(p.Mounts.HideDirs, d)
		default:
			p.Mounts.HideFiles = append(p.Mounts.HideFiles, d)
		}
	}
	// A path inside a hidden directory is hidden with it, and could not be
	// mounted over: the empty tmpfs has no entry to mount on.
	dirs := slices.Clone(p.Mounts.HideDirs)
	under := func(x string) bool {
		return slices.ContainsFunc(dirs, func(d string) bool { return x != d && sandbox.Within(x, d) })
	}
	p.Mounts.HideDirs = slices.DeleteFunc(p.Mounts.HideDirs, under)
	p.Mounts.HideFiles = slices.DeleteFunc(p.Mounts.HideFiles, under)
	seen := map[string]bool{}
	bases := reposIn(roots)
	// An absolute write-deny path is protected where it is, once; a name
	// in every root and repository.
	var names []string
	for _, w := range writeDeny {
		if filepath.IsAbs(w) {
			if withinAny(w, roots) {
				p.protectPath(filepath.Clean(w), roots, seen)
			}
			continue
		}
		names = append(names, w)
	}
	writeDeny = names
	for _, base := range bases {
		p.protect(base, roots, writeDeny, seen)
	}
	p.names = writeDeny
	if !sweep {
		return p, nil
	}
	for _, r := range roots {
		fd, err := openRootDir(r)
		switch {
		case errors.Is(err, errors.ErrUnsupported):
			return p, nil // no sandbox runs here (beneath_other.go)
		case errors.Is(err, fs.ErrNotExist):
			continue // nothing there to sweep
		case err != nil:
			p.Close()
			return nil, fmt.Errorf("opening workspace root: %w", err)
		}
		p.rootDirs = append(p.rootDirs, rootDir{path: filepath.Clean(r), fd: fd})
	}
	p.parents = map[string]fileStat{}
	for _, path := range p.Watch {
		dir := filepath.Dir(path)
		if _, ok := p.parents[dir]; !ok {
			p.parents[dir] = p.identify(dir)
		}
	}
	p.git = snapshotGit(p.rootDirs)
	if p.git.bound != nil {
		err := p.git.bound
		p.Close()
		return nil, err
	}
	return p, nil
}

// identify returns what dir is, reached from its root without a link; the
// zero fileStat when it cannot be reached so.
func (p *HostSurvey) identify(dir string) fileStat {
	d, err := p.openDir(dir)
	if err != nil {
		return fileStat{}
	}
	defer d.close()
	st, err := statDir(d)
	if err != nil {
		return fileStat{}
	}
	return st
}

// openDir opens dir from its root's descriptor without following a link.
func (p *HostSurvey) openDir(dir string) (dirFD, error) {
	r, rel, ok := rootOf(p.rootDirs, dir)
	if !ok {
		return -1, errNotBeneath
	}
	return openBeneath(r.fd, rel)
}

// watchDir is a directory holding watched paths, opened for the guard.
type watchDir struct {
	path  string
	fd    dirFD // the guard's to close
	names []string
}

// watchDirs opens the directory of every Watch path that is still the one
// the plan was made for, reached from its root without a link.
func (p *HostSurvey) watchDirs() []watchDir {
	var out []watchDir
	at := map[string]int{}
	for _, path := range p.Watch {
		dir, name := filepath.Dir(path), filepath.Base(path)
		if i, ok := at[dir]; ok {
			out[i].names = append(out[i].names, name)
			continue
		}
		d, ok := p.sameDir(dir)
		if !ok {
			continue
		}
		at[dir] = len(out)
		out = append(out, watchDir{path: dir, fd: d, names: []string{name}})
	}
	return out
}

// sameDir opens dir when it is still the directory it was when the plan
// was made.
func (p *HostSurvey) sameDir(dir string) (dirFD, bool) {
	want := p.parents[dir]
	if want.ino == 0 {
		return -1, false
	}
	d, err := p.openDir(dir)
	if err != nil {
		return -1, false
	}
	st, err := statDir(d)
	if err != nil || st.dev != want.dev || st.ino != want.ino {
		d.close()
		return -1, false
	}
	return d, true
}

// Close lets go of the roots' descriptors. Sweep needs them: call Close
// after it. A nil survey, or one closed already, is fine.
func (p *HostSurvey) Close() {
	if p == nil {
		return
	}
	for _, r := range p.rootDirs {
		r.fd.close()
	}
	p.rootDirs = nil
	if p.git != nil {
		p.git.roots = nil
	}
}

func (p *HostSurvey) protect(base string, roots, names []string, seen map[string]bool) {
	gitDir := false
	if fi, err := os.Lstat(filepath.Join(base, ".git")); err == nil && fi.IsDir() {
		gitDir = true
		p.addOnce(&p.Mounts.Anchors, filepath.Join(base, ".git"), seen)
	}
	for _, name := range names {
		rel := filepath.Clean(name)
		if strings.HasPrefix(rel, ".git"+string(filepath.Separator)) && !gitDir {
			continue
		}
		p.protectPath(filepath.Join(base, rel), roots, seen)
	}
}

// protectPath keeps the write-deny path path read-only: bound when it
// exists, watched when it does not.
func (p *HostSurvey) protectPath(path string, roots []string, seen map[string]bool) {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// Protect what the link points at when that is writable in
		// the sandbox; a target outside the roots is read-only anyway.
		target, terr := filepath.EvalSymlinks(path)
		if terr != nil || !withinAny(target, roots) {
			return
		}
		path = target
		fi, err = os.Stat(path)
	}
	switch {
	case err == nil && fi.IsDir():
		p.addOnce(&p.Mounts.ProtectDirs, path, seen)
	case err == nil:
		p.addOnce(&p.Mounts.ProtectFiles, path, seen)
	case errors.Is(err, fs.ErrNotExist):
		// A directory or a file alike: nothing is created to mount
		// over, so the name stays absent in the sandbox and on the
		// host unless the command makes it.
		p.addOnce(&p.Watch, path, seen)
	}
}

func (p *HostSurvey) addOnce(list *[]string, path string, seen map[string]bool) {
	if seen[path] {
		return
	}
	seen[path] = true
	*list = append(*list, path)
}

// Sweep moves aside every watched write-deny path that the execution
// created (and the guard did not already move), and what it planted in
// repositories (sweepGit), so that nothing runs it later, and returns the
// new names. It runs once the sandbox is gone. The error says what part of
// the workspace it could not check (ErrSweepBound, a directory it could
// not read); what it saw is swept all the same.
func (p *HostSurvey) Sweep(suffix string) ([]string, error) {
	var moved []string
	// Only in the directory the plan watched: one the command put in its
	// place (a link, another directory) is not the workspace's.
	for _, w := range p.watchDirs() {
		for _, name := range w.names {
			if _, err := statAt(w.fd, name); err != nil {
				continue
			}
			if dst, err := renameAside(w.fd, name, suffix); err == nil {
				moved = append(moved, filepath.Join(w.path, dst))
			}
		}
		w.fd.close()
	}
	if p.git == nil || p.git.roots == nil {
		return moved, nil
	}
	m, err := sweepGit(p.git, p.names, suffix)
	return append(moved, m...), err
}

// rootOf returns the root path lies in and its directory relative to it.
func rootOf(roots []rootDir, path string) (rootDir, string, bool) {
	for _, r := range roots {
		if sandbox.Within(path, r.path) {
			rel, err := filepath.Rel(r.path, path)
			if err == nil {
				return r, filepath.ToSlash(rel), true
			}
		}
	}
	return rootDir{}, "", false
}

// moveAsideIn renames path aside in its own directory, which is reached
// from a root's descriptor without following a link; it returns the new
// path.
func moveAsideIn(roots []rootDir, path, suffix string) (string, error) {
	dir, name := filepath.Split(path)
	r, rel, ok := rootOf(roots, filepath.Clean(dir))
	if !ok {
		return "", errNotBeneath
	}
	d, err := openBeneath(r.fd, rel)
	if err != nil {
		return "", err
	}
	defer d.close()
	dst, err := renameAside(d, name, suffix)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, dst), nil
}

// readIn reads the file at path, reached as moveAsideIn reaches it.
func readIn(roots []rootDir, path string) ([]byte, error) {
	dir, name := filepath.Split(path)
	r, rel, ok := rootOf(roots, filepath.Clean(dir))
	if !ok {
		return nil, errNotBeneath
	}
	d, err := openBeneath(r.fd, rel)
	if err != nil {
		return nil, err
	}
	defer d.close()
	return readAt(d, name, gitFileMax)
}

// reposIn returns findRepos of every root: the repositories the mount
// plan protects. The sweep looks deeper (gitsweep.go).
func reposIn(roots []string) []string {
	var out []string
	for _, root := range roots {
		out = append(out, findRepos(root)...)
	}
	return out
}

// findRepos returns root and every directory below it (to a bounded depth)
// that holds a .git entry.
func findRepos(root string) []string {
	out := []string{root}
	entries := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > repoSearchDepth || entries > repoSearchEntries {
			return
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		entries += len(des)
		for _, de := range des {
			if !de.IsDir() || skipDirs[de.Name()] {
				continue
			}
			sub := filepath.Join(dir, de.Name())
			if _, err := os.Lstat(filepath.Join(sub, ".git")); err == nil {
				out = append(out, sub)
			}
			walk(sub, depth+1)
		}
	}
	walk(root, 1)
	sort.Strings(out[1:])
	return out
}

func withinAny(path string, roots []string) bool {
	for _, r := range roots {
		if sandbox.Within(path, r) {
			return true
		}
	}
	return false
}
