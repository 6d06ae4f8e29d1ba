package bwrap

import (
	"errors"

	"golang.org/x/sys/unix"
)

// moveAside moves path aside (see aside) without ever replacing an
// existing entry, and returns the new path.
func moveAside(path, suffix string) (string, error) {
	return aside(path, suffix, func(oldname, newname string) error {
		return renameNoReplace(unix.AT_FDCWD, oldname, newname)
	})
}

// renameNoReplace renames oldname to newname, both relative to dirfd,
// failing with EEXIST when newname exists. File systems without
// RENAME_NOREPLACE (EINVAL) get a check before a plain rename.
func renameNoReplace(dirfd int, oldname, newname string) error {
	err := unix.Renameat2(dirfd, oldname, dirfd, newname, unix.RENAME_NOREPLACE)
	if !errors.Is(err, unix.EINVAL) {
		return err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, newname, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		return unix.EEXIST
	}
	return unix.Renameat(dirfd, oldname, dirfd, newname)
}
