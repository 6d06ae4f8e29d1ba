//go:build !linux

package sandboxinit

// NProcBase is Linux-only; elsewhere no RLIMIT_NPROC is planned.
func NProcBase(userNS bool) int64 { return 0 }

// NProcEnforced is false where no RLIMIT_NPROC is planned.
func NProcEnforced(userNS bool) bool { return false }
