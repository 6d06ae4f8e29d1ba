package bwrap

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// DefaultWriteDeny are the names, relative to each workspace root and each
// repository found in one, that commands may not write: places where a write
// becomes code that runs later outside any sandbox. A trailing slash marks a
// directory. Names under ".git/" apply only where .git is a directory.
var DefaultWriteDeny = []string{
	".git/hooks/",
	".git/config",
	".vscode/",
	".idea/",
	".claude/",
	".git/config.worktree",
	".git/info/attributes",
	".mcp.json",
	".envrc",
	".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile",
	".zshrc", ".zshenv", ".zprofile", ".zlogin",
	// Git obeys these through its configuration: filter and diff drivers,
	// submodules, hooks under core.hooksPath.
	".gitattributes", ".gitmodules", ".gitconfig", ".husky/",
	// Editors, agents and loaders that run what they find on the host.
	".cursor/", ".zed/", ".devcontainer/", ".devcontainer.json", ".gemini/",
	".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml",
	".mise.toml", "mise.toml", ".yarnrc.yml", ".yarnrc", ".npmrc", ".pnpmfile.cjs",
}

// watchWhenMissing are write-deny directories that their tools read when
// the user next acts (a commit, opening a container or a session), not
// while a command runs: a missing one is watched like a missing file and
// moved aside if the command creates it, which costs no mount point.
var watchWhenMissing = map[string]bool{
	".husky/": true, ".cursor/": true, ".zed/": true, ".devcontainer/": true, ".gemini/": true,
}

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
	// Watch are write-deny files that did not exist: they cannot be mounted
	// over without creating them, so they are checked after the execution
	// (see Sweep).
	Watch []string
	// created are the directory mount points made for this execution.
	created []string
	// roots and names are the workspace roots and write-deny names the
	// plan was made for; git is what the repositories in them held
	// (gitsweep.go).
	roots, names []string
	git          *gitState
}

// mountpoints counts, per path, the executions in this process that use a
// mount point Gatehouse created, so the last one removes it.
var mountpoints = struct {
	sync.Mutex
	n map[string]int
}{n: map[string]int{}}

// Discover classifies the deny-read paths and finds the write-deny paths
// inside roots. Missing write-deny directories are created (empty) as mount
// points; Release removes them again.
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
		return slices.ContainsFunc(dirs, func(d string) bool { return x != d && Within(x, d) })
	}
	p.Mounts.HideDirs = slices.DeleteFunc(p.Mounts.HideDirs, under)
	p.Mounts.HideFiles = slices.DeleteFunc(p.Mounts.HideFiles, under)
	seen := map[string]bool{}
	bases := reposIn(roots)
	for _, base := range bases {
		if err := p.protect(base, roots, writeDeny, seen); err != nil {
			p.Release()
			return nil, err
		}
	}
	p.roots, p.names = roots, writeDeny
	p.git = snapshotGit(roots, bases)
	return p, nil
}

func (p *HostSurvey) protect(base string, roots, names []string, seen map[string]bool) error {
	gitDir := false
	if fi, err := os.Lstat(filepath.Join(base, ".git")); err == nil && fi.IsDir() {
		gitDir = true
		p.addOnce(&p.Mounts.Anchors, filepath.Join(base, ".git"), seen)
	}
	for _, name := range names {
		isDir := strings.HasSuffix(name, "/")
		rel := filepath.Clean(name)
		if strings.HasPrefix(rel, ".git"+string(filepath.Separator)) && !gitDir {
			continue
		}
		path := filepath.Join(base, rel)
		fi, err := os.Lstat(path)
		if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			// Protect what the link points at when that is writable in
			// the sandbox; a target outside the roots is read-only anyway.
			target, terr := filepath.EvalSymlinks(path)
			if terr != nil || !withinAny(target, roots) {
				continue
			}
			path = target
			fi, err = os.Stat(path)
		}
		switch {
		case err == nil && fi.IsDir():
			if !seen[path] {
				p.adopt(path)
			}
			p.addOnce(&p.Mounts.ProtectDirs, path, seen)
		case err == nil:
			p.addOnce(&p.Mounts.ProtectFiles, path, seen)
		case !errors.Is(err, fs.ErrNotExist):
			continue
		case isDir && !watchWhenMissing[name]:
			if seen[path] {
				continue
			}
			if err := p.makeMountpoint(path); err != nil {
				continue // parent missing or not writable: nothing to protect
			}
			p.addOnce(&p.Mounts.ProtectDirs, path, seen)
		default:
			if !seen[path] {
				seen[path] = true
				p.Watch = append(p.Watch, path)
			}
		}
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

func (p *HostSurvey) makeMountpoint(path string) error {
	mountpoints.Lock()
	defer mountpoints.Unlock()
	if mountpoints.n[path] == 0 {
		if err := os.Mkdir(path, 0o755); err != nil {
			return err
		}
	}
	mountpoints.n[path]++
	p.created = append(p.created, path)
	return nil
}

// adopt takes a share of a mount point another execution in this process
// created, so that it is not removed while this one runs.
func (p *HostSurvey) adopt(path string) {
	mountpoints.Lock()
	defer mountpoints.Unlock()
	if mountpoints.n[path] > 0 {
		mountpoints.n[path]++
		p.created = append(p.created, path)
	}
}

// Release removes the mount points this plan created once no other execution
// in this process uses them. It is safe to call more than once.
func (p *HostSurvey) Release() {
	mountpoints.Lock()
	defer mountpoints.Unlock()
	for _, path := range p.created {
		mountpoints.n[path]--
		if mountpoints.n[path] <= 0 {
			delete(mountpoints.n, path)
			os.Remove(path) // fails, harmlessly, when not empty
		}
	}
	p.created = nil
}

// Sweep moves aside every watched write-deny file that the execution
// created, and what it planted in repositories (sweepGit), so that nothing
// runs it later, and returns the new names.
func (p *HostSurvey) Sweep(suffix string) []string {
	var moved []string
	for _, path := range p.Watch {
		if _, err := os.Lstat(path); err != nil {
			continue
		}
		dst := path + ".gatehouse-blocked-" + suffix
		if err := os.Rename(path, dst); err == nil {
			moved = append(moved, dst)
		}
	}
	if p.git != nil {
		moved = append(moved, sweepGit(p.git, p.roots, p.names, suffix)...)
	}
	return moved
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
		if Within(path, r) {
			return true
		}
	}
	return false
}
