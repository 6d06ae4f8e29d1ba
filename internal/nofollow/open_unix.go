//go:build unix && !linux

package nofollow

import (
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is always true here: there is no openat2.
var noOpenat2 atomic.Bool

// openBeneath opens name below dirfd with flags, one element at a time,
// none through a link.
func openBeneath(dirfd int, name string, flags int) (int, error) {
	return openEach(dirfd, name, flags)
}

// chmodDirAt makes the directory name in pfd readable, writable and
// searchable by its owner, without following a link.
func chmodDirAt(pfd int, name string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return unix.ENOTDIR
	}
	return unix.Fchmodat(pfd, name, uint32(st.Mode&0o7777)|0o700, unix.AT_SYMLINK_NOFOLLOW)
}
