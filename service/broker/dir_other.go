//go:build !unix

package broker

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/internal/nofollow"
)

// DefaultDir returns where execution directories are made: the temporary
// directory, which is the user's own on Windows.
func DefaultDir(string) string { return filepath.Join(os.TempDir(), "gatehouse-cred") }

// privateDir makes dir when it is missing, and opens it.
func privateDir(dir string) (*nofollow.Dir, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("making the credential directory: %w", err)
	}
	d, err := nofollow.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("making the credential directory: %w", err)
	}
	return d, nil
}

// alive is unknown here: nothing is swept.
func alive(int) bool { return true }
