package nofollow

import (
	"errors"
	"strconv"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once the kernel has said it has no openat2 (before
// 5.6) or a seccomp filter refused it.
var noOpenat2 atomic.Bool

// openBeneath opens name below dirfd with flags, through no link and
// never out of dirfd: openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS) where
// the kernel has it, else one element at a time with O_NOFOLLOW.
func openBeneath(dirfd int, name string, flags int) (int, error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{
			Flags:   uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.EINTR), errors.Is(err, unix.EPERM),
			errors.Is(err, unix.EINVAL), errors.Is(err, unix.E2BIG):
			// A rename raced the lookup, or the call is refused: the
			// element-wise walk gives the answer.
		default:
			return -1, err
		}
	}
	return openEach(dirfd, name, flags)
}

// chmodDirAt makes the directory name in pfd, which cannot be opened for
// reading, readable, writable and searchable by its owner: through an
// O_PATH descriptor (never a link) and its /proc/self/fd entry.
func chmodDirAt(pfd int, name string) error {
	fd, err := unix.Openat(pfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), uint32(st.Mode&0o7777)|0o700)
}
