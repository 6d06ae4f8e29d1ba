// Package fspath holds the one path containment check and the one path
// resolver every part of Gatehouse uses. It is a leaf of the standard
// library so that packages with a short dependency allowlist
// (service/analysis: mvdan.cc/sh and the standard library only) can share
// it with the sandbox.
package fspath

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Within reports whether path is root or lies below it. Both are cleaned
// first, so "/app/x/../../etc" is not within "/app"; "/app_backup" is not
// within "/app"; every absolute path is within "/". An empty path or root
// is within nothing. Symlinks are not resolved: callers compare resolved
// paths.
func Within(path, root string) bool {
	if path == "" || root == "" {
		return false
	}
	path, root = filepath.Clean(path), filepath.Clean(root)
	if path == root {
		return true
	}
	if root == string(filepath.Separator) {
		return filepath.IsAbs(path)
	}
	return strings.HasPrefix(path, root+string(filepath.Separator))
}

// maxLinks bounds the symlinks one Resolve follows, as the kernel's
// ELOOP does.
const maxLinks = 255

// Resolve returns the absolute, slash-separated path p as the kernel
// would resolve it: each symlink on the way is followed before the next
// component is looked at, so ".." after a symlink leaves the directory the
// link leads to, not the one it sits in ("/ws/link/.." is the parent of
// link's target). A path that does not exist yet cannot be resolved
// fully: from the first component that does not exist, the rest is
// appended cleaned. A relative p is returned cleaned, unresolved; so is a
// path whose symlinks loop. It is Gatehouse's one resolver: configured
// paths, workspace roots, the working directory and trusted directories
// all mean where it leads.
func Resolve(p string) string {
	if !path.IsAbs(p) {
		return path.Clean(p)
	}
	todo := strings.Split(p, "/")
	done := "/"
	links := 0
	for len(todo) > 0 {
		c := todo[0]
		todo = todo[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			done = path.Dir(done)
			continue
		}
		next := path.Join(done, c)
		fi, err := os.Lstat(filepath.FromSlash(next))
		if err != nil {
			return path.Join(append([]string{next}, todo...)...)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		target, err := os.Readlink(filepath.FromSlash(next))
		if links++; err != nil || links > maxLinks {
			return path.Clean(p)
		}
		target = filepath.ToSlash(target)
		if path.IsAbs(target) {
			done = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return done
}
