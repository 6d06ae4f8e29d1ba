//go:build !linux

package bwrap

import (
	"io/fs"
	"os"
)

// moveAside moves path aside (see aside), checking before each rename that
// the new name is free. Only Linux runs sandboxes (run_linux.go); this
// serves the portable tests.
func moveAside(path, suffix string) (string, error) {
	return aside(path, suffix, func(oldname, newname string) error {
		if _, err := os.Lstat(newname); err == nil {
			return fs.ErrExist
		}
		return os.Rename(oldname, newname)
	})
}
