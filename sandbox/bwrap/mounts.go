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
	// ancestors identifies, for a Watch path's directory that did not
	// exist, its nearest existing ancestor (as parents does): the sweep
	// goes down from it through directories the command made, never
	// through a link.
	ancestors map[string]ancestor
	// links are write-deny names that were links when the plan was made
	// (what the link was): the sweep moves aside whatever the command put
	// in a link's place.
	links map[string]linkState
}

// linkState is what a link was: an inode number alone may be reused by
// what the command puts in its place.
type linkState struct {
	st     fileStat
	target string
}

// ancestor is the nearest existing directory of a path, as it was.
type ancestor struct {
	path string
	st   fileStat
}

// ErrUnresolvedLink says a write-deny name is a link that leads nowhere
// (dangling, or a loop): a command could make what it leads to.
var ErrUnresolvedLink = errors.New("is a link that leads nowhere (dangling, or a loop)")

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
	p := &HostSurvey{links: map[string]linkState{}}
	cv := coverLookups{covers: map[string]*Cover{}, exists: map[string]bool{}}
	for _, d := range denyRead {
		d = filepath.Clean(d)
		fi, err := os.Stat(d)
		switch {
		case err != nil:
			// Absent or dangling: what is made there later on the
			// host is hidden all the same.
			cv.cover(d, roots)
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
	for _, dir := range sortedKeys(cv.covers) {
		if c := cv.covers[dir]; c != nil && !slices.ContainsFunc(dirs, func(d string) bool { return sandbox.Within(c.Dir, d) }) {
			p.Mounts.Covers = append(p.Mounts.Covers, *c)
		}
	}
	// The directories between a root and a deny-read path in it are
	// pinned: a command that renamed one would take the path's mount
	// with it and leave the secret readable at the new name.
	for _, h := range slices.Concat(p.Mounts.HideDirs, p.Mounts.HideFiles) {
		p.Mounts.Anchors = append(p.Mounts.Anchors, between(h, roots, false)...)
	}
	seen := map[string]bool{}
	bases, named := reposIn(roots, writeDeny)
	// An absolute write-deny path is protected where it is, once; a name
	// in every root and repository.
	var names []string
	for _, w := range writeDeny {
		if filepath.IsAbs(w) {
			if withinAny(w, roots) {
				if err := p.protectPath(filepath.Clean(w), roots, seen); err != nil {
					return nil, err
				}
			}
			continue
		}
		names = append(names, w)
	}
	writeDeny = names
	for _, base := range bases {
		if err := p.protect(base, roots, writeDeny, seen); err != nil {
			return nil, err
		}
		// A nested repository's parents are pinned: renaming one would
		// take the repository's protection with it.
		p.Mounts.Anchors = append(p.Mounts.Anchors, between(base, roots, true)...)
	}
	// Write-deny names found in plain directories below a root.
	for _, path := range named {
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink == 0 {
			if err := p.protectPath(path, roots, seen); err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(p.Mounts.Anchors)
	p.Mounts.Anchors = slices.Compact(p.Mounts.Anchors)
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
	p.ancestors = map[string]ancestor{}
	for _, path := range p.Watch {
		dir := filepath.Dir(path)
		if _, ok := p.parents[dir]; ok {
			continue
		}
		p.parents[dir] = p.identify(dir)
		if p.parents[dir].ino != 0 {
			continue
		}
		// The directory does not exist (yet): remember the nearest one
		// that does, which the sweep goes down from.
		for a := filepath.Dir(dir); withinAny(a, roots); a = filepath.Dir(a) {
			if st := p.identify(a); st.ino != 0 {
				p.ancestors[dir] = ancestor{path: a, st: st}
				break
			}
			if a == filepath.Dir(a) {
				break
			}
		}
	}
	for path := range p.links {
		if l, ok := p.identifyLink(path); ok {
			p.links[path] = l
			if dir := filepath.Dir(path); p.parents[dir].ino == 0 {
				p.parents[dir] = p.identify(dir)
			}
		} else {
			delete(p.links, path)
		}
	}
	p.git = snapshotGit(p.rootDirs, writeDeny)
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

// identifyLink returns what the link path is, its directory reached from
// its root without a link.
func (p *HostSurvey) identifyLink(path string) (linkState, bool) {
	d, err := p.openDir(filepath.Dir(path))
	if err != nil {
		return linkState{}, false
	}
	defer d.close()
	return linkAt(d, filepath.Base(path))
}

// linkAt describes the link name in d; false when it is not a link.
func linkAt(d dirFD, name string) (linkState, bool) {
	st, err := statAt(d, name)
	if err != nil || !st.isLink() {
		return linkState{}, false
	}
	t, err := readlinkAt(d, name)
	if err != nil {
		return linkState{}, false
	}
	return linkState{st: st, target: t}, true
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
		d, ok := p.reach(dir)
		if !ok {
			continue
		}
		at[dir] = len(out)
		out = append(out, watchDir{path: dir, fd: d, names: []string{name}})
	}
	return out
}

// reach opens dir when it is still the directory it was when the plan was
// made, or, when it did not exist then, when it is a directory the command
// made below the nearest one that did, reached through directories alone.
func (p *HostSurvey) reach(dir string) (dirFD, bool) {
	if p.parents[dir].ino != 0 {
		return p.sameDir(dir, p.parents[dir])
	}
	anc, ok := p.ancestors[dir]
	if !ok {
		return -1, false
	}
	d, ok := p.sameDir(anc.path, anc.st)
	if !ok {
		return -1, false
	}
	rel, err := filepath.Rel(anc.path, dir)
	if err != nil {
		d.close()
		return -1, false
	}
	for _, name := range strings.Split(rel, string(filepath.Separator)) {
		c, err := openDirAt(d, name)
		d.close()
		if err != nil {
			return -1, false
		}
		d = c
	}
	return d, true
}

// sameDir opens dir when it is still the directory want.
func (p *HostSurvey) sameDir(dir string, want fileStat) (dirFD, bool) {
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

func (p *HostSurvey) protect(base string, roots, names []string, seen map[string]bool) error {
	gitDir := false
	dotGit := filepath.Join(base, ".git")
	fi, err := os.Lstat(dotGit)
	switch {
	case err == nil && fi.IsDir():
		gitDir = true
		p.addOnce(&p.Mounts.Anchors, dotGit, seen)
	case err == nil && fi.Mode().IsRegular():
		// A .git file is the pointer git follows: it stays where it
		// points.
		p.addOnce(&p.Mounts.ProtectFiles, dotGit, seen)
	}
	for _, name := range names {
		rel := filepath.Clean(name)
		if strings.HasPrefix(rel, ".git"+string(filepath.Separator)) && !gitDir {
			continue
		}
		if err := p.protectPath(filepath.Join(base, rel), roots, seen); err != nil {
			return err
		}
	}
	for _, g := range gitDirsOf(dotGit, roots) {
		for _, name := range sandbox.GitDirWriteDeny {
			if err := p.protectPath(filepath.Join(g, filepath.Clean(name)), roots, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// gitDirMax bounds the git directories looked at for one repository
// (submodules, worktrees and the directories they name).
const gitDirMax = 1000

// between returns the directories between the root path lies in and path
// (the root and path excluded; path included when self is set).
func between(path string, roots []string, self bool) []string {
	var out []string
	for _, root := range roots {
		root = filepath.Clean(root)
		if path == root || !sandbox.Within(path, root) {
			continue
		}
		d := filepath.Dir(path)
		if self {
			d = path
		}
		for ; d != root && sandbox.Within(d, root); d = filepath.Dir(d) {
			out = append(out, d)
		}
	}
	return out
}

// coverLookups are one survey's covers and what it found of the
// directories on the way: the absent deny-read paths are mostly in a few
// directories (the home directory, ~/.config), each looked at and listed
// once per survey rather than once per path.
type coverLookups struct {
	// covers are the covers by directory; nil for a directory looked at
	// and left uncovered (not a directory, not listable, too large).
	covers map[string]*Cover
	// exists says whether os.Lstat of a directory on the way succeeded.
	exists map[string]bool
}

// lstatOK is whether os.Lstat of dir succeeds, asked once per survey.
func (cv coverLookups) lstatOK(dir string) bool {
	ok, seen := cv.exists[dir]
	if !seen {
		_, err := os.Lstat(dir)
		ok = err == nil
		cv.exists[dir] = ok
	}
	return ok
}

// cover adds the absent deny-read path d to the cover of its nearest
// existing directory. A path inside a workspace root is left: the roots
// are the command's own to write, and nothing is made there.
func (cv coverLookups) cover(d string, roots []string) {
	name := filepath.Base(d)
	dir := filepath.Dir(d)
	for !cv.lstatOK(dir) {
		if dir == filepath.Dir(dir) {
			return
		}
		name, dir = filepath.Base(dir), filepath.Dir(dir)
	}
	if dir == "/" || withinAny(dir, roots) {
		return
	}
	c, seen := cv.covers[dir]
	if !seen {
		cv.covers[dir] = nil // until it is known to be coverable
		fi, err := os.Stat(dir)
		if err != nil || !fi.IsDir() {
			return
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			// Not this user's to list (nor to read below): nothing a
			// command could read appears there.
			return
		}
		if len(des) > coverMaxEntries {
			// Each entry is a bind, and bubblewrap rereads the whole
			// mount table for each: a larger directory is left
			// uncovered (docs/executor.md says so).
			return
		}
		c = &Cover{Dir: dir}
		for _, de := range des {
			e := CoverEntry{Name: de.Name()}
			if de.Type()&fs.ModeSymlink != 0 {
				t, err := os.Readlink(filepath.Join(dir, de.Name()))
				if err != nil {
					continue
				}
				e.Link = t
			}
			c.Entries = append(c.Entries, e)
		}
		cv.covers[dir] = c
	}
	if c == nil {
		return
	}
	if !slices.Contains(c.Placeholders, name) {
		c.Placeholders = append(c.Placeholders, name)
		sort.Strings(c.Placeholders)
		// A dangling link at the name is replaced by the placeholder.
		c.Entries = slices.DeleteFunc(c.Entries, func(e CoverEntry) bool { return e.Name == name })
	}
}

// coverMaxEntries bounds the entries of a directory covered for an absent
// deny-read path: bubblewrap 0.8 spends about a millisecond on each bind
// back.
const coverMaxEntries = 256

// protectPath keeps the write-deny path path read-only: bound when it
// exists, watched when it does not. A link is recorded, so that the sweep
// moves aside what the command puts in its place, and what it leads to
// is bound when that is writable in the sandbox; a link that leads
// nowhere is an error wrapping ErrUnresolvedLink: nothing runs.
func (p *HostSurvey) protectPath(path string, roots []string, seen map[string]bool) error {
	fi, err := os.Lstat(path)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		p.links[path] = linkState{}
		target, terr := filepath.EvalSymlinks(path)
		if terr != nil {
			return fmt.Errorf("write-deny path %s %w; nothing ran: remove the link or make what it names", path, ErrUnresolvedLink)
		}
		if !withinAny(target, roots) {
			return nil // read-only in the sandbox already
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
	return nil
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
	// A write-deny link the command replaced (a file, a directory,
	// another link) is moved aside.
	for _, path := range sortedKeys(p.links) {
		want := p.links[path]
		d, ok := p.reach(filepath.Dir(path))
		if !ok {
			continue
		}
		name := filepath.Base(path)
		_, err := statAt(d, name)
		if now, _ := linkAt(d, name); err == nil && now != want {
			if dst, err := renameAside(d, name, suffix); err == nil {
				moved = append(moved, filepath.Join(filepath.Dir(path), dst))
			}
		}
		d.close()
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
