// Package fspath holds the one path containment check and the one path
// resolver every part of Gatehouse uses. It is a leaf of the standard
// library so that packages with a short dependency allowlist
// (service/analysis: mvdan.cc/sh and the standard library only) can share
// it with the sandbox.
package fspath

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
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

// maxLinks bounds the symlinks one resolution follows, as the kernel's
// ELOOP does (MAXSYMLINKS).
const maxLinks = 40

// Resolve returns the absolute, slash-separated path p as the kernel
// would resolve it: each symlink on the way is followed before the next
// component is looked at, so ".." after a symlink leaves the directory the
// link leads to, not the one it sits in ("/ws/link/.." is the parent of
// link's target). A path that does not exist yet cannot be resolved
// fully: from the first component that does not exist, the rest is
// appended cleaned. A relative p is returned cleaned, unresolved; so is a
// path that cannot be resolved (a symlink loop, a directory it may not
// search). It is Gatehouse's one resolver: configured paths, workspace
// roots, the working directory, trusted directories and the paths of file
// tools (Walk) all mean where it leads.
func Resolve(p string) string {
	if !path.IsAbs(p) {
		return path.Clean(p)
	}
	r, err := Walk(filepath.FromSlash(p), nil)
	if err != nil {
		return path.Clean(p)
	}
	return filepath.ToSlash(r)
}

// Walk is Resolve of the absolute path p in the system's form, failing
// where Resolve gives up: a symlink loop, an element that cannot be looked
// at for another reason than not existing. stop, when not nil, is asked
// of each element before it is looked at; where it says so, the path is
// returned as it stands there.
func Walk(p string, stop func(string) bool) (string, error) {
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%q is not absolute", p)
	}
	sep := string(filepath.Separator)
	vol := filepath.VolumeName(p)
	done := vol + sep
	rest := strings.Split(filepath.ToSlash(p[len(vol):]), "/")
	links := 0
	for len(rest) > 0 {
		e := rest[0]
		rest = rest[1:]
		switch e {
		case "", ".":
			continue
		case "..":
			done = filepath.Dir(done)
			continue
		}
		next := filepath.Join(done, e)
		if stop != nil && stop(next) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return filepath.Join(append([]string{next}, rest...)...), nil
		}
		if err != nil {
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = next
			continue
		}
		if links++; links > maxLinks {
			return "", errors.New("too many levels of symbolic links")
		}
		t, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(t) {
			vol = filepath.VolumeName(t)
			done, t = vol+sep, t[len(vol):]
		}
		rest = append(strings.Split(filepath.ToSlash(t), "/"), rest...)
	}
	return done, nil
}

// Tilde writes p, when it lies under home, as ~/..., as a person reads
// it; any other path (home itself included) as it is.
func Tilde(p, home string) string {
	if rest, ok := strings.CutPrefix(p, home+"/"); ok && home != "" {
		return "~/" + rest
	}
	return p
}
