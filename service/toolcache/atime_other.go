//go:build !linux && !darwin

package toolcache

import (
	"io/fs"
	"time"
)

// lastUse is fi's modification time: access times are not read here.
func lastUse(fi fs.FileInfo) time.Time { return fi.ModTime() }
