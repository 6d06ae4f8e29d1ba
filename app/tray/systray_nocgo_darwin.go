//go:build darwin && !cgo

package tray

import (
	"context"
	"fmt"
)

// Run fails: the macOS menu bar needs cgo, and this build has none.
func Run(context.Context, Options) error {
	return fmt.Errorf("%w: the macOS menu bar needs a gatehouse built with cgo (CGO_ENABLED=1)", ErrUnavailable)
}
