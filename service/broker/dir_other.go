//go:build !unix

package broker

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultDir returns where execution directories are made: the temporary
// directory, which is the user's own on Windows.
func DefaultDir(string) string { return filepath.Join(os.TempDir(), "gatehouse-cred") }

// privateDir makes dir when it is missing.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("making the credential directory: %w", err)
	}
	return nil
}

// alive is unknown here: nothing is swept.
func alive(int) bool { return true }
