//go:build !linux

package escape

import (
	"fmt"
	"runtime"
)

// The syscall probes exist only on Linux, whose seccomp filter they test.

func unsupported() error {
	return fmt.Errorf("linux only, this is %s: %w", runtime.GOOS, errUnsupported)
}

func probeIOUring() error           { return unsupported() }
func probeVsock() error             { return unsupported() }
func probeNetlinkRoute() error      { return unsupported() }
func probeNetlinkUevent() error     { return unsupported() }
func probePacket() error            { return unsupported() }
func probeBPF() error               { return unsupported() }
func probeUserfaultfd() error       { return unsupported() }
func probeKeyctl() error            { return unsupported() }
func probeTIOCSTI() error           { return unsupported() }
func probePtrace() error            { return unsupported() }
func probeProcMem(pid string) error { return unsupported() }
func probeUnshareUser() error       { return unsupported() }
