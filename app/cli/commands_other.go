//go:build !linux && !darwin

package cli

// platformCommands are none here: there is no sandbox on this platform.
func platformCommands() []*command { return nil }
