package bwrap

// This file finds the repositories and git directories the mount plan
// protects (mounts.go), below the workspace roots and through the
// pointers git follows.

import (
	"os"
	"path/filepath"
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

// gitDirsOf returns the git directories git may use for the repository
// whose .git entry is dotGit and that lie inside roots: the .git directory
// or where a .git file (parsed as git parses it) or link points, each
// submodule's under modules/ (at any depth: a submodule's name may hold
// slashes, and submodules nest), each linked worktree's under worktrees/,
// and the directory each one's commondir names.
func gitDirsOf(dotGit string, roots []string) []string {
	var out []string
	seen := map[string]bool{}
	var add func(g string)
	add = func(g string) {
		r, err := filepath.EvalSymlinks(g)
		if err != nil || seen[r] || len(out) >= gitDirMax || !withinAny(r, roots) {
			return
		}
		if fi, err := os.Stat(r); err != nil || !fi.IsDir() {
			return
		}
		seen[r] = true
		out = append(out, r)
		if b, err := os.ReadFile(filepath.Join(r, "commondir")); err == nil && len(b) <= gitFileMax {
			if c := strings.TrimRight(string(b), "\r\n"); c != "" {
				if !filepath.IsAbs(c) {
					c = filepath.Join(r, c)
				}
				add(c)
			}
		}
		if des, err := os.ReadDir(filepath.Join(r, "worktrees")); err == nil {
			for _, de := range des {
				add(filepath.Join(r, "worktrees", de.Name()))
			}
		}
		var modules func(dir string, depth int)
		modules = func(dir string, depth int) {
			des, err := os.ReadDir(dir)
			if err != nil || depth > repoSearchDepth+4 {
				return
			}
			for _, de := range des {
				if !de.IsDir() {
					continue
				}
				sub := filepath.Join(dir, de.Name())
				if isGitDir(sub) {
					add(sub)
				} else {
					modules(sub, depth+1)
				}
			}
		}
		modules(filepath.Join(r, "modules"), 0)
	}
	fi, err := os.Lstat(dotGit)
	switch {
	case err != nil:
		return nil
	case fi.Mode().IsRegular():
		b, err := os.ReadFile(dotGit)
		if err != nil || len(b) > gitFileMax {
			return nil
		}
		t, ok := parseGitFile(b)
		if !ok {
			return nil
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(dotGit), t)
		}
		add(t)
	default:
		add(dotGit)
	}
	return out
}

// isGitDir reports whether dir looks like a git directory to git (HEAD,
// objects/, refs/).
func isGitDir(dir string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Lstat(filepath.Join(dir, n)); err != nil {
			return false
		}
	}
	return true
}

// reposIn returns findRepos of every root: the repositories the mount
// plan protects, and the write-deny names found in other directories. The
// sweep looks deeper (gitsweep.go).
func reposIn(roots, names []string) (repos, named []string) {
	want := plainNames(names)
	for _, root := range roots {
		r, n := findRepos(root, want)
		repos = append(repos, r...)
		named = append(named, n...)
	}
	return repos, named
}

// plainNames are the write-deny names of one component (".claude/",
// ".envrc"), which count in any directory, without their slash.
func plainNames(names []string) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSuffix(filepath.ToSlash(n), "/")
		if !filepath.IsAbs(n) && n != "" && !strings.Contains(n, "/") {
			out[n] = true
		}
	}
	return out
}

// findRepos returns root and every directory below it (to a bounded depth)
// that holds a .git entry, and the entries named in want of the other
// directories below root.
func findRepos(root string, want map[string]bool) (repos, named []string) {
	repos = []string{root}
	entries := 0
	var walk func(dir string, depth int, repo bool)
	walk = func(dir string, depth int, repo bool) {
		if depth > repoSearchDepth || entries > repoSearchEntries {
			return
		}
		des, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		entries += len(des)
		for _, de := range des {
			if !repo && want[de.Name()] {
				named = append(named, filepath.Join(dir, de.Name()))
			}
		}
		for _, de := range des {
			if !de.IsDir() || skipDirs[de.Name()] {
				continue
			}
			sub := filepath.Join(dir, de.Name())
			_, err := os.Lstat(filepath.Join(sub, ".git"))
			if err == nil {
				repos = append(repos, sub)
			}
			walk(sub, depth+1, err == nil)
		}
	}
	walk(root, 1, true)
	sort.Strings(repos[1:])
	sort.Strings(named)
	return repos, named
}

func withinAny(path string, roots []string) bool {
	for _, r := range roots {
		if sandbox.Within(path, r) {
			return true
		}
	}
	return false
}
