package bwrap

// This file catches code planted in a repository for the host to run
// later, which the mounts cannot stop because the repository did not exist
// when the sandbox started, or lies deeper than the mounts look: one the
// command created (git init, git clone) at any depth, moved into place, or
// pointed a .git file, a .git link, a worktree's commondir, a
// core.hooksPath or an include.path at. Before the execution the survey
// walks every workspace root to any depth (within sweepMaxEntries and
// sweepMaxDepth) and fingerprints every file git runs or obeys on the
// host; after it, the sweep walks and fingerprints again and moves aside
// what was created or changed:
//
//	hooks/*                       every hook but git's own *.sample files,
//	                              and hooks itself when it is not a
//	                              directory (a link, a file)
//	config, config.worktree,      when they set a key that runs a program
//	and every file they include   (core.hooksPath, filter.*, alias.*=!…,
//	                              include.path; see execKey)
//	the directory core.hooksPath  every name git runs as a hook, unless
//	names, or a hooks link        the configuration or the link is moved
//	that was there leads to
//	modules/*, worktrees/*,       the same, for submodules and worktrees
//	commondir's target
//
// in every git directory the walk finds: a .git directory; where a .git
// file (parsed as git parses it) or a .git link points; a directory that
// git would take as a bare repository (HEAD, objects/, refs/). A new or
// changed .git file or link whose git directory cannot be reached inside
// the workspace roots without following a link is moved aside itself. In
// a repository that is new, the write-deny names at its base that a host
// program runs or obeys on its own (editor and agent directories, .envrc,
// .mcp.json, shell rc files) are moved aside too. Names whose effect goes
// through git's configuration or hooks (.gitattributes, .gitmodules,
// .husky/), or that act only when the user runs that tool there (.npmrc,
// .yarnrc.yml), are left in a new repository (configDriven). In any
// directory at all, a write-deny name of one component that the command
// made (a .claude four levels down) is moved aside the same way.
//
// Every look and every move goes through a directory descriptor of a
// workspace root taken before the run, one name at a time, never
// following a link (beneath_unix.go): a command that replaces a directory
// on the way with a link makes the sweep skip it, never reach through it.
// Only what the sweep found created or changed is moved, and only by
// renaming it in its own directory.

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// gitFileMax bounds the files fingerprinted by content (a larger one is
// fingerprinted by size and time) and the .git files read: it is git's own
// limit for a .git file.
const gitFileMax = 1 << 20

// sweepMaxEntries bounds the directory entries one walk of the workspace
// roots reads, sweepMaxDepth how many directories deep it goes. Before
// the run, a workspace over either bound is refused (nothing runs); after
// it, the sweep moves aside what it saw and reports the rest unchecked.
const (
	sweepMaxEntries = 300_000
	sweepMaxDepth   = 64
)

// includeMaxDepth is how deep configuration includes are followed: git's
// own limit.
const includeMaxDepth = 10

// ErrSweepBound says a walk of the workspace stopped at its bound.
var ErrSweepBound = errors.New("workspace too large to check for planted git hooks")

// configDriven are write-deny names that act only through git's
// configuration or hooks, which the sweep checks itself, or only when the
// user runs that tool in that repository (like its package.json): in a new
// repository they are left in place.
var configDriven = map[string]bool{
	".gitattributes": true, ".gitmodules": true, ".gitconfig": true,
	".husky/": true, ".git/info/attributes": true, ".git/config.worktree": true,
	".git/hooks/": true, ".git/config": true,
	".pre-commit-config.yaml": true, "lefthook.yml": true, ".lefthook.yml": true,
	".yarnrc.yml": true, ".yarnrc": true, ".npmrc": true, ".pnpmfile.cjs": true,
}

// rootDir is a workspace root and its descriptor, opened before the run.
type rootDir struct {
	path string
	fd   dirFD
}

// gitState is what one walk of the workspace saw: the repositories and
// the fingerprint of each host-run file in them.
type gitState struct {
	roots []rootDir
	repos map[string]bool   // the base of every .git entry
	dots  map[string]string // base -> fingerprint of its .git entry
	files map[string]string // path -> fingerprint
	kinds map[string]gitKind
	// via names, for a hook found through core.hooksPath or a hooks
	// link, the configuration file or the link that led to it.
	via map[string]string
	// unverified are .git entries (by base) whose git directory could not
	// be reached inside the roots without following a link.
	unverified map[string]bool
	// unread are directories the walk could not open.
	unread map[string]bool
	looked map[string]bool // git directories looked at, with their base
	// want are the write-deny names of one component; named, where the
	// walk found one, in any directory.
	want    map[string]bool
	named   map[string]bool
	entries int
	bound   error // the walk stopped at sweepMaxEntries or sweepMaxDepth
	buf     []byte
}

type gitKind int

const (
	kindHook gitKind = iota
	kindConfig
)

// snapshotGit walks the roots for repositories and fingerprints them.
func snapshotGit(roots []rootDir, names []string) *gitState {
	s := &gitState{
		want: plainNames(names), named: map[string]bool{},
		roots: roots, repos: map[string]bool{}, dots: map[string]string{}, files: map[string]string{},
		kinds: map[string]gitKind{}, via: map[string]string{}, unverified: map[string]bool{}, unread: map[string]bool{},
		looked: map[string]bool{}, buf: make([]byte, 32<<10),
	}
	for _, r := range roots {
		d, err := dupDir(r.fd)
		if err != nil {
			s.unread[r.path] = true
			continue
		}
		s.walk(d, r.path, 0)
		d.close()
		if s.bound != nil {
			break
		}
	}
	return s
}

// count adds n directory entries read, and reports whether the walk may
// go on.
func (s *gitState) count(n int, path string) bool {
	s.entries += n
	if s.entries > sweepMaxEntries && s.bound == nil {
		s.bound = fmt.Errorf("%w: more than %d entries below the workspace roots (at %s)", ErrSweepBound, sweepMaxEntries, path)
	}
	return s.bound == nil
}

// walk looks for repositories in d (at path) and below it.
func (s *gitState) walk(d dirFD, path string, depth int) {
	ents, err := readNames(d, s.buf)
	if err != nil {
		s.unread[path] = true
		return
	}
	if !s.count(len(ents), path) {
		return
	}
	// A directory git takes as a git directory (is_git_directory) is
	// a bare repository when git is run in it, whatever its name.
	var head, objects, refs bool
	for _, e := range ents {
		switch e.name {
		case "HEAD":
			head = e.typ == 0 || e.typ == fs.ModeSymlink
		case "objects":
			objects = e.typ.IsDir()
		case "refs":
			refs = e.typ.IsDir()
		}
	}
	if head && objects && refs {
		// Looked into all the same: a directory made to look like one
		// must not hide what lies below it.
		s.addGitDir(d, path, path, 0)
	}
	for _, e := range ents {
		if s.want[e.name] {
			s.named[filepath.Join(path, e.name)] = true
		}
		if e.name == ".git" {
			s.addDotGit(d, path, e.typ)
			continue
		}
		if !e.typ.IsDir() {
			continue
		}
		sub := filepath.Join(path, e.name)
		if depth+1 > sweepMaxDepth {
			if s.bound == nil {
				s.bound = fmt.Errorf("%w: directories deeper than %d levels below a workspace root (%s)", ErrSweepBound, sweepMaxDepth, sub)
			}
			return
		}
		c, err := openDirAt(d, e.name)
		if err != nil {
			// Replaced by a link or a file since it was listed, or
			// unreadable.
			s.unread[sub] = true
			continue
		}
		s.walk(c, sub, depth+1)
		c.close()
		if s.bound != nil {
			return
		}
	}
}

// addDotGit looks at the .git entry of base (d): a directory, a .git file
// pointing at a git directory, or a link to one.
func (s *gitState) addDotGit(d dirFD, base string, typ fs.FileMode) {
	s.repos[base] = true
	s.dots[base] = fingerprint(d, ".git")
	var target string
	switch {
	case typ.IsDir():
		g, err := openDirAt(d, ".git")
		if err != nil {
			s.unverified[base] = true
			return
		}
		defer g.close()
		if !s.addGitDir(g, filepath.Join(base, ".git"), base, 0) {
			s.unverified[base] = true
		}
		return
	case typ == 0:
		b, err := readAt(d, ".git", gitFileMax)
		if err != nil {
			s.unverified[base] = true
			return
		}
		t, ok := parseGitFile(b)
		if !ok {
			// git refuses the repository ("invalid gitfile format"); a
			// new one is moved aside all the same.
			s.unverified[base] = true
			return
		}
		target = t
	case typ == fs.ModeSymlink:
		t, err := readlinkAt(d, ".git")
		if err != nil {
			s.unverified[base] = true
			return
		}
		target = t
	default:
		return // git takes no FIFO, socket or device as a repository
	}
	if !filepath.IsAbs(target) {
		target = base + "/" + target
	}
	g, path, st := s.openPath(target)
	switch st {
	case pathAbsent:
		return // git finds no repository there either
	case pathOutside, pathBlocked:
		// Outside the roots the sandbox could not write it, but a new
		// pointer there is not the workspace's to vouch for.
		s.unverified[base] = true
		return
	}
	defer g.close()
	if !s.addGitDir(g, path, base, 0) {
		s.unverified[base] = true
	}
}

// pathState is what openPath found.
type pathState int

const (
	pathOpen    pathState = iota // opened, inside a root
	pathAbsent                   // nothing there (or not a directory): git finds nothing either
	pathOutside                  // outside every workspace root
	pathBlocked                  // a link on the way, or unreadable: not looked at
)

// openPath opens the directory at path (absolute, not cleaned) when it
// lies inside a workspace root and is reached from the root's descriptor
// without following a link; every component is checked, including those
// a later ".." takes back (git resolves them physically). It returns the
// descriptor and the clean path when it is pathOpen.
func (s *gitState) openPath(path string) (dirFD, string, pathState) {
	d, clean, err := s.openPathErr(path)
	switch {
	case err == nil:
		return d, clean, pathOpen
	case errors.Is(err, errOutside):
		return -1, "", pathOutside
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ENOTDIR):
		return -1, "", pathAbsent
	}
	return -1, "", pathBlocked
}

var errOutside = errors.New("outside the workspace roots")

func (s *gitState) openPathErr(path string) (dirFD, string, error) {
	var stack []string
	var fds []dirFD // fds[0] is a root's; one more for each component below it
	closeAll := func() {
		for _, f := range fds {
			f.close()
		}
		fds = nil
	}
	enter := func() error {
		cur := "/" + strings.Join(stack, "/")
		for _, r := range s.roots {
			if r.path == cur {
				d, err := dupDir(r.fd)
				if err != nil {
					return err
				}
				fds = []dirFD{d}
				return nil
			}
		}
		return nil
	}
	if err := enter(); err != nil {
		return -1, "", err
	}
	for _, c := range strings.Split(path, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if len(fds) > 0 {
				fds[len(fds)-1].close()
				fds = fds[:len(fds)-1]
			}
		default:
			stack = append(stack, c)
			if len(fds) > 0 {
				next, err := openDirAt(fds[len(fds)-1], c)
				if err != nil {
					closeAll()
					return -1, "", err
				}
				fds = append(fds, next)
			}
		}
		if len(fds) == 0 {
			if err := enter(); err != nil {
				return -1, "", err
			}
		}
	}
	if len(fds) == 0 {
		return -1, "", errOutside
	}
	d := fds[len(fds)-1]
	for _, f := range fds[:len(fds)-1] {
		f.close()
	}
	return d, "/" + strings.Join(stack, "/"), nil
}

// addGitDir fingerprints the host-run files of the git directory g (at
// path), whose working tree is base, and of the submodule, worktree and
// common git directories it leads to. It reports false when some of them
// could not be reached without following a link.
func (s *gitState) addGitDir(g dirFD, path, base string, depth int) bool {
	key := path + "\x00" + base
	if s.looked[key] || depth > 4 {
		return true
	}
	s.looked[key] = true
	ok := true
	if st, err := statAt(g, "hooks"); err == nil {
		if st.isDir() {
			if h, err := openDirAt(g, "hooks"); err == nil {
				s.addHooks(h, filepath.Join(path, "hooks"), true)
				h.close()
			} else {
				s.add(g, path, "hooks", kindHook)
			}
		} else {
			// A link or a file where git looks for its hooks: never
			// followed; moved aside when new or changed.
			s.add(g, path, "hooks", kindHook)
			// A link that was there before (the person's own) leads
			// to hooks the command could change: its target is
			// resolved as a path, without following a link, and
			// looked at as a hooks directory.
			if t, err := readlinkAt(g, "hooks"); err == nil && st.isLink() {
				if !filepath.IsAbs(t) {
					t = path + "/" + t
				}
				switch h, hpath, pst := s.openPath(t); pst {
				case pathOpen:
					s.addHooksVia(h, hpath, filepath.Join(path, "hooks"))
					h.close()
				case pathBlocked:
					ok = false
				}
			}
		}
	}
	hooksBase := base
	for _, name := range []string{"config", "config.worktree"} {
		if !s.addConfig(g, path, name, hooksBase, path, 0) {
			ok = false
		}
	}
	// A worktree's git directory takes its hooks and configuration from
	// the common directory its commondir file names.
	if b, err := readAt(g, "commondir", gitFileMax); err == nil {
		c := string(bytes.TrimRight(b, "\r\n"))
		if !filepath.IsAbs(c) {
			c = path + "/" + c
		}
		switch cd, cpath, st := s.openPath(c); st {
		case pathOpen:
			if !s.addGitDir(cd, cpath, base, depth+1) {
				ok = false
			}
			cd.close()
		case pathOutside, pathBlocked:
			ok = false
		}
	} else if _, serr := statAt(g, "commondir"); serr == nil {
		ok = false // there, but not a file git reads as we do
	}
	for _, sub := range []string{"modules", "worktrees"} {
		d, err := openDirAt(g, sub)
		if err != nil {
			continue
		}
		ents, err := readNames(d, s.buf)
		if err == nil && s.count(len(ents), filepath.Join(path, sub)) {
			for _, e := range ents {
				if !e.typ.IsDir() {
					continue
				}
				if c, err := openDirAt(d, e.name); err == nil {
					// A submodule's working tree is where its .git file
					// is; that look gives hooksPath its base.
					s.addGitDir(c, filepath.Join(path, sub, e.name), "", depth+1)
					c.close()
				}
			}
		}
		d.close()
	}
	return ok
}

// sweepGit walks the workspace again, compares it with before and moves
// aside what the execution planted; it returns the new names, and an
// error when part of the workspace could not be checked (the walk's
// bound, a directory it could not open).
func sweepGit(before *gitState, names []string, suffix string) ([]string, error) {
	after := snapshotGit(before.roots, names)
	var moved []string
	aside := func(path string) {
		if dst, err := moveAsideIn(before.roots, path, suffix); err == nil {
			moved = append(moved, dst)
		}
	}
	// Configuration first, then hooks and hooks links, then the hooks
	// found through those: a hook that only a configuration or a link
	// moved aside led to (core.hooksPath, hooks -> dir) is an ordinary
	// file again, and stays where it is.
	gone := map[string]bool{}
	for _, p := range sortedKeys(after.files) {
		if before.files[p] == after.files[p] || after.kinds[p] != kindConfig {
			continue
		}
		// A configuration that cannot be read is moved aside: git would
		// read it.
		if b, err := readIn(before.roots, p); err != nil || len(execKeys(b)) > 0 {
			aside(p)
			gone[p] = true
		}
	}
	for _, viaPass := range []bool{false, true} {
		for _, p := range sortedKeys(after.files) {
			if before.files[p] == after.files[p] || after.kinds[p] != kindHook {
				continue
			}
			via, isVia := after.via[p]
			if isVia != viaPass || isVia && gone[via] {
				continue
			}
			aside(p)
			gone[p] = true
		}
	}
	// A .git file or link that is new or changed and leads where the
	// sweep cannot look is moved aside itself: git no longer finds a
	// repository there.
	for _, base := range sortedKeys(after.unverified) {
		if after.dots[base] != before.dots[base] {
			aside(filepath.Join(base, ".git"))
		}
	}
	for _, base := range sortedKeys(after.repos) {
		if before.repos[base] {
			continue
		}
		for _, name := range names {
			if configDriven[name] {
				continue
			}
			aside(filepath.Join(base, filepath.Clean(name)))
		}
	}
	// A write-deny name the command made in any directory (a
	// .claude/commands four levels down) is moved aside, but for those
	// that act only through git or the tool run there (configDriven).
	for _, p := range sortedKeys(after.named) {
		if before.named[p] {
			continue
		}
		name := filepath.Base(p)
		if configDriven[name] || configDriven[name+"/"] {
			continue
		}
		aside(p)
	}
	var unchecked []string
	for _, p := range sortedKeys(after.unread) {
		if !before.unread[p] {
			unchecked = append(unchecked, p)
		}
	}
	switch {
	case after.bound != nil:
		return moved, after.bound
	case len(unchecked) > 0:
		return moved, fmt.Errorf("could not check %s for planted git hooks: not readable", strings.Join(unchecked, ", "))
	}
	return moved, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
