//go:build !linux && !darwin

package escape

import "syscall"

// errnoName returns "": errno names are only looked up on Linux and macOS.
func errnoName(syscall.Errno) string { return "" }
