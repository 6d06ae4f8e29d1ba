//go:build unix

package broker

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The managed settings' patterns match where credential directories are
// made: under systemd's $XDG_RUNTIME_DIR, and in the temporary directory.
func TestDirGlobsMatchDefaultDir(t *testing.T) {
	t.Parallel()
	match := func(d string) bool {
		for _, g := range DirGlobs(runtime.GOOS) {
			if m, _ := filepath.Match(g, d); m {
				return true
			}
		}
		return false
	}
	if os.Getenv("TMPDIR") == "" || runtime.GOOS == "darwin" {
		if d := DefaultDir(""); !match(d) {
			t.Errorf("%s matches none of %q", d, DirGlobs(runtime.GOOS))
		}
	}
	if runtime.GOOS == "linux" {
		if d := DefaultDir("/run/user/" + "1000"); filepath.Dir(d) == "/run/user/1000" && !match(d) {
			t.Errorf("%s matches none of %q", d, DirGlobs(runtime.GOOS))
		}
		if m, _ := filepath.Match(DirGlobs("linux")[0], "/run/user/1000/gatehouse-cred"); !m {
			t.Errorf("%q does not match /run/user/1000/gatehouse-cred", DirGlobs("linux")[0])
		}
	}
}
