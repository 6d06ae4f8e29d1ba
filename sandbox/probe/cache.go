package probe

// SetVersionCache names the file the bwrap version is cached in across
// processes ("" for memory only); the file is written 0600. Only Linux
// has a bwrap version to cache: elsewhere it does nothing.
func SetVersionCache(file string) { setVersionCache(file) }
