//go:build !unix

package trust

// lockFile has no file lock to take where flock does not exist (Windows,
// where the service does not run): writers of one Store still exclude
// each other through its mutex.
func lockFile(string) (func(), error) { return func() {}, nil }
