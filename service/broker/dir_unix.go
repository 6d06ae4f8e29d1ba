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

// privateDir makes dir 0700 when it is missing, and checks that it is a
// directory (not a link) this user owns that no one else can enter.
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("making the credential directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("making the credential directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("the credential directory %s is not a directory; remove it", dir)
	case ok && int(st.Uid) != os.Getuid():
		return fmt.Errorf("the credential directory %s belongs to another user; remove it", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("the credential directory %s is open to other users (mode %v); remove it or chmod 700 it", dir, fi.Mode().Perm())
	}
	return nil
}

// alive reports whether process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
