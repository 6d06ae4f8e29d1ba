//go:build !linux

package seccomp

import (
	"fmt"
	"runtime"
)

// Install is only implemented on Linux; elsewhere it returns an error
// wrapping [ErrUnsupported].
func Install(opts Options) error {
	return fmt.Errorf("installing seccomp filter on %s: %w", runtime.GOOS, ErrUnsupported)
}
