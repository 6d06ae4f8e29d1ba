//go:build !linux && !darwin

package toolcache

import (
	"io/fs"
	"time"
)

// atime is not read here: a file's use is its modification time.
func atime(fs.FileInfo) (time.Time, bool) { return time.Time{}, false }
