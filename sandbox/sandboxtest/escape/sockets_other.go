//go:build !linux && !darwin

package escape

import (
	"fmt"
	"runtime"
)

func probeUnixSocket() error {
	return fmt.Errorf("not on %s: %w", runtime.GOOS, errUnsupported)
}

func probeSocketpair() error {
	return fmt.Errorf("not on %s: %w", runtime.GOOS, errUnsupported)
}
