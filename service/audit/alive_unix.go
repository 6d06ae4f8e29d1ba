//go:build unix

package audit

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process pid exists (it may belong to
// another user, or be a later process that reused the pid).
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
