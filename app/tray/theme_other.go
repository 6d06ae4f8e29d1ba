//go:build !linux && (cgo || !darwin)

package tray

import "context"

// desktopPrefersDark takes dark where the desktop is not asked.
func desktopPrefersDark(context.Context) bool { return true }
