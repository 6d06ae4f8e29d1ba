//go:build !unix

package cli

import (
	"errors"
	"syscall"
)

var errNoServiceLock = errors.New("the Gatehouse service does not run on this platform")

func takeServiceLock(string) (func(), error)                   { return nil, errNoServiceLock }
func serviceLockHolder(string) (held bool, pid int, err error) { return false, 0, errNoServiceLock }
func detached() *syscall.SysProcAttr                           { return nil }
func terminate(int) error                                      { return errNoServiceLock }
