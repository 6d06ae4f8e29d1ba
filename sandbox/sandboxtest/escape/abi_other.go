//go:build !(linux && amd64)

package escape

import (
	"fmt"
	"runtime"
)

// The i386 and x32 ABIs exist only on linux/amd64.

func probeInt80() error {
	return fmt.Errorf("i386 ABI probe needs linux/amd64, this is %s/%s: %w", runtime.GOOS, runtime.GOARCH, errUnsupported)
}

func probeX32() error {
	return fmt.Errorf("x32 ABI probe needs linux/amd64, this is %s/%s: %w", runtime.GOOS, runtime.GOARCH, errUnsupported)
}
