//go:build !unix

package analysis

import "os"

// openNoFollow opens p for reading. Windows has no governed shell; analysis
// still runs there (explain, hook decisions) and reads scripts plainly.
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }
