package bwrap

// This file catches code planted in a repository for the host to run
// later, which the mounts cannot stop because the repository did not exist
// when the sandbox started: one the command created (git init, git clone),
// moved into place, or pointed a .git file at. Before the execution the
// plan fingerprints every file of every repository in the workspace roots
// that git runs or obeys on the host; after it, the sweep fingerprints
// again and moves aside what was created or changed:
//
//	hooks/*                       every hook but git's own *.sample files
//	config, config.worktree,      when they set a key that runs a program
//	modules/*/config, …           (core.hooksPath, filter.*, alias.*=!…;
//	                              see execKey)
//	modules/*/hooks/*,            the same, for submodules and worktrees
//	worktrees/*/config.worktree
//
// and, in a repository that is new, the write-deny names at its base that
// a host program runs or obeys on its own (editor and agent directories,
// .envrc, .mcp.json, shell rc files). Names whose effect goes through git's
// configuration or hooks (.gitattributes, .gitmodules, .husky/), or that
// act only when the user runs that tool there (.npmrc, .yarnrc.yml), are
// left in a new repository (configDriven).

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// gitFileMax bounds the files fingerprinted by content; a larger one is
// fingerprinted by size and time.
const gitFileMax = 1 << 20

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

// gitState is what one look at the workspace saw: the repositories and
// the fingerprint of each host-run file in them.
type gitState struct {
	repos map[string]bool
	files map[string]string // path -> fingerprint
	kinds map[string]gitKind
}

type gitKind int

const (
	kindHook gitKind = iota
	kindConfig
)

// snapshotGit looks at the repositories at bases (findRepos of each root).
func snapshotGit(roots, bases []string) *gitState {
	s := &gitState{repos: map[string]bool{}, files: map[string]string{}, kinds: map[string]gitKind{}}
	for _, base := range bases {
		gitDir := resolveGitDir(base, roots)
		if gitDir == "" {
			continue
		}
		s.repos[base] = true
		s.addGitDir(gitDir, 0)
	}
	return s
}

// reposIn returns findRepos of every root.
func reposIn(roots []string) []string {
	var out []string
	for _, root := range roots {
		out = append(out, findRepos(root)...)
	}
	return out
}

// resolveGitDir returns base's git directory: base/.git, or where a .git
// file points, when that lies inside the roots (a git directory outside
// them is read-only in the sandbox, so nothing in it changed). "" when
// base has none.
func resolveGitDir(base string, roots []string) string {
	dot := filepath.Join(base, ".git")
	fi, err := os.Lstat(dot)
	switch {
	case err != nil:
		return ""
	case fi.IsDir():
		return dot
	case !fi.Mode().IsRegular() || fi.Size() > 4096:
		return ""
	}
	b, err := os.ReadFile(dot)
	if err != nil {
		return ""
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	target = strings.TrimSpace(target)
	if !filepath.IsAbs(target) {
		target = filepath.Join(base, target)
	}
	if real, err := filepath.EvalSymlinks(target); err == nil {
		target = real
	}
	if !withinAny(target, roots) {
		return ""
	}
	return target
}

// addGitDir fingerprints the host-run files of one git directory, and of
// the submodule and worktree git directories inside it.
func (s *gitState) addGitDir(dir string, depth int) {
	if depth > 2 {
		return
	}
	if des, err := os.ReadDir(filepath.Join(dir, "hooks")); err == nil {
		for _, de := range des {
			if !strings.HasSuffix(de.Name(), ".sample") {
				s.add(filepath.Join(dir, "hooks", de.Name()), kindHook)
			}
		}
	}
	for _, name := range []string{"config", "config.worktree"} {
		s.add(filepath.Join(dir, name), kindConfig)
	}
	for _, sub := range []string{"modules", "worktrees"} {
		des, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			continue
		}
		for _, de := range des {
			if de.IsDir() {
				s.addGitDir(filepath.Join(dir, sub, de.Name()), depth+1)
			}
		}
	}
}

func (s *gitState) add(path string, k gitKind) {
	if fp := fingerprint(path); fp != "" {
		s.files[path] = fp
		s.kinds[path] = k
	}
}

// fingerprint identifies a file's content (a symlink by its target); ""
// when there is nothing there.
func fingerprint(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return ""
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		t, _ := os.Readlink(path)
		return "link:" + t
	case fi.IsDir():
		return "dir"
	case !fi.Mode().IsRegular() || fi.Size() > gitFileMax:
		return fmt.Sprintf("stat:%v:%v:%d", fi.Mode(), fi.ModTime().UnixNano(), fi.Size())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "unreadable"
	}
	sum := sha256.Sum256(b)
	return fi.Mode().Perm().String() + ":" + string(sum[:])
}

// sweepGit compares the workspace with before and moves aside what the
// execution planted; it returns the new names.
func sweepGit(before *gitState, roots, names []string, suffix string) []string {
	after := snapshotGit(roots, reposIn(roots))
	var moved []string
	aside := func(path string) {
		if dst, err := moveAside(path, suffix); err == nil {
			moved = append(moved, dst)
		}
	}
	paths := make([]string, 0, len(after.files))
	for p := range after.files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if before.files[p] == after.files[p] {
			continue
		}
		switch after.kinds[p] {
		case kindHook:
			aside(p)
		case kindConfig:
			if b, err := os.ReadFile(p); err == nil && len(execKeys(b)) > 0 {
				aside(p)
			}
		}
	}
	var bases []string
	for base := range after.repos {
		if !before.repos[base] {
			bases = append(bases, base)
		}
	}
	slices.Sort(bases)
	for _, base := range bases {
		for _, name := range names {
			if configDriven[name] {
				continue
			}
			p := filepath.Join(base, filepath.Clean(name))
			if _, err := os.Lstat(p); err == nil {
				aside(p)
			}
		}
	}
	return moved
}

// execKeys returns the keys of a git configuration file that make git run
// a program, or redirect it to configuration or hooks elsewhere.
func execKeys(conf []byte) []string {
	var keys []string
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(conf))
	sc.Buffer(nil, gitFileMax)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = gitSection(line[1:end])
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		name, value, _ := strings.Cut(line, "=")
		key := section + "." + strings.ToLower(strings.TrimSpace(name))
		if execKey(key, strings.Trim(strings.TrimSpace(value), `"`)) {
			keys = append(keys, key)
		}
	}
	return keys
}

// gitSection turns `core`, `filter "lfs"` or `remote.origin` into the
// lower-case section prefix of its keys ("filter.lfs"); a subsection keeps
// its case, as git's does, but execKey ignores it.
func gitSection(s string) string {
	name, sub, ok := strings.Cut(strings.TrimSpace(s), " ")
	if !ok {
		return strings.ToLower(s)
	}
	return strings.ToLower(name) + "." + strings.Trim(strings.TrimSpace(sub), `"`)
}

// execKey reports whether the configuration key (section.[sub.]name) with
// value makes git run a program or read configuration from elsewhere.
func execKey(key, value string) bool {
	section, rest, _ := strings.Cut(key, ".")
	name := rest
	if i := strings.LastIndexByte(rest, '.'); i >= 0 {
		name = rest[i+1:]
	}
	switch section {
	case "core":
		switch name {
		case "hookspath", "sshcommand", "pager", "editor", "askpass", "gitproxy", "worktree":
			return true
		case "fsmonitor":
			v := strings.ToLower(value)
			return v != "true" && v != "false" && v != "" && v != "0" && v != "1"
		}
	case "alias":
		return strings.HasPrefix(value, "!")
	case "filter":
		return name == "clean" || name == "smudge" || name == "process"
	case "diff":
		return name == "external" || name == "command" || name == "textconv"
	case "merge", "mergetool", "difftool":
		return name == "driver" || name == "cmd"
	case "include", "includeif":
		return name == "path"
	case "pager":
		v := strings.ToLower(value)
		return v != "true" && v != "false" && v != "" && v != "0" && v != "1" && v != "yes" && v != "no" && v != "on" && v != "off"
	case "credential", "gpg", "sequence", "interactive", "web", "browser", "man", "uploadpack":
		switch name {
		case "helper", "program", "editor", "difffilter", "browser", "cmd", "path", "packobjectshook":
			return true
		}
	case "remote":
		return name == "uploadpack" || name == "receivepack" || name == "url" && strings.HasPrefix(value, "ext::") ||
			name == "proxy" && strings.HasPrefix(value, "ext::")
	case "url":
		return strings.HasPrefix(rest, "ext::")
	}
	return false
}
