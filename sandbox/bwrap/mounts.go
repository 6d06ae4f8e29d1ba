package bwrap

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
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
	// parents maps the directory of each Watch path to where it led when
	// the plan was made (symlinks resolved), so that Sweep never follows
	// a directory the command replaced with a link.
	parents map[string]string
	// roots and names are the workspace roots and write-deny names the
	// plan was made for; git is what the repositories in them held
	// (gitsweep.go).
	roots, names []string
	git          *gitState
}

// Discover classifies the deny-read paths and finds the write-deny paths
// inside roots: existing ones are bound read-only, missing ones are
// watched. It changes nothing on the host.
func Discover(roots, denyRead, writeDeny []string) (*HostSurvey, error) {
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
	p.parents = map[string]string{}
	for _, path := range p.Watch {
		dir := filepath.Dir(path)
		if _, ok := p.parents[dir]; !ok {
			real, err := filepath.EvalSymlinks(dir)
			if err != nil {
				real = ""
			}
			p.parents[dir] = real
		}
	}
	p.roots, p.names = roots, writeDeny
	p.git = snapshotGit(roots, bases)
	return p, nil
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
// new names. It runs once the sandbox is gone.
func (p *HostSurvey) Sweep(suffix string) []string {
	var moved []string
	for _, path := range p.Watch {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		// A directory on the way that now leads elsewhere was replaced by
		// the command: what it leads to is not the workspace's.
		dir := filepath.Dir(path)
		if want, ok := p.parents[dir]; ok {
			if real, err := filepath.EvalSymlinks(dir); err != nil || real != want {
				continue
			}
		}
		if dst, err := moveAside(path, suffix); err == nil {
			moved = append(moved, dst)
		}
	}
	if p.git != nil {
		moved = append(moved, sweepGit(p.git, p.roots, p.names, suffix)...)
	}
	return moved
}

// asideTries bounds the names tried for one path moved aside.
const asideTries = 1000

// aside renames name to name.gatehouse-blocked-suffix, or to the same with
// -2, -3, … when that is taken, and returns the new name. rename must
// fail with an error matching fs.ErrExist rather than replace what is
// there.
func aside(name, suffix string, rename func(oldname, newname string) error) (string, error) {
	base := name + ".gatehouse-blocked-" + suffix
	for n := 1; n <= asideTries; n++ {
		dst := base
		if n > 1 {
			dst += "-" + strconv.Itoa(n)
		}
		err := rename(name, dst)
		if err == nil {
			return dst, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("moving %s aside: %d names taken", name, asideTries)
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
