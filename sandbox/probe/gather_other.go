//go:build !linux && !darwin

package probe

// gatherOS finds nothing: there is no sandbox backend on this OS.
func gatherOS(*Facts, string) {}
