package probe

// BwrapAtLeast reports whether the bwrap in f is version major.minor.patch
// or later; false when the version is unknown.
func BwrapAtLeast(f Facts, major, minor, patch int) bool {
	v, err := parseBwrapVersion(f.BwrapVersion)
	if err != nil {
		return false
	}
	return !v.less(version{major, minor, patch})
}
