//go:build !linux

package probe

func setVersionCache(string) {}
