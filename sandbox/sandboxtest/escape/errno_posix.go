//go:build linux || darwin

package escape

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// errnoName returns the C name of e ("EPERM"), or "" if unknown.
func errnoName(e syscall.Errno) string { return unix.ErrnoName(e) }
