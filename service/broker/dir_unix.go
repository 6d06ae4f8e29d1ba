//go:build unix

package broker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/nofollow"
)

// DefaultDir returns where execution directories are made: under
// runtimeDir ($XDG_RUNTIME_DIR, a per-user tmpfs) when it is set, else in
// the temporary directory. Inside a sandbox both are private mounts, so
// no command sees another execution's files.
func DefaultDir(runtimeDir string) string {
	if runtimeDir != "" && filepath.IsAbs(runtimeDir) {
		if fi, err := os.Stat(runtimeDir); err == nil && fi.IsDir() {
			return filepath.Join(runtimeDir, "gatehouse-cred")
		}
	}
	return filepath.Join(os.TempDir(), "gatehouse-cred-"+strconv.Itoa(os.Getuid()))
}

// privateDir makes dir 0700 when it is missing, opens it (not through a
// link) and checks that it is a directory this user owns that no one else
// can enter.
func privateDir(dir string) (*nofollow.Dir, error) {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("making the credential directory: %w", err)
	}
	d, err := nofollow.Open(dir)
	if errors.Is(err, nofollow.ErrNotDir) {
		return nil, fmt.Errorf("the credential directory %s is not a directory; remove it", dir)
	}
	if err != nil {
		return nil, fmt.Errorf("making the credential directory: %w", err)
	}
	fi, err := d.Stat()
	switch {
	case err != nil:
		err = fmt.Errorf("making the credential directory: %w", err)
	case fi.Uid != os.Getuid():
		err = fmt.Errorf("the credential directory %s belongs to another user; remove it", dir)
	case fi.Mode.Perm()&0o077 != 0:
		err = fmt.Errorf("the credential directory %s is open to other users (mode %v); remove it or chmod 700 it", dir, fi.Mode.Perm())
	}
	if err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
