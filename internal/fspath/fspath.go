// Package fspath holds the one path containment check every part of
// Gatehouse uses. It is a leaf of the standard library so that packages
// with a short dependency allowlist (service/analysis: mvdan.cc/sh and the
// standard library only) can share it with the sandbox.
package fspath

import (
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
