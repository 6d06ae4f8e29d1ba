//go:build linux || darwin

package bwrap

// This file holds the only ways the host-side code of this package (the
// sweep, the guard) reaches into a workspace a sandbox could write: from a
// directory descriptor, one name at a time, never following a link. A
// directory is opened O_NOFOLLOW|O_DIRECTORY relative to its parent's
// descriptor, so a component the command replaced with a symlink fails
// (ELOOP or ENOTDIR) rather than leading elsewhere; a file is read
// O_NOFOLLOW|O_NONBLOCK and checked to be regular; a rename is made
// relative to the descriptor of the directory it lies in, with
// RENAME_NOREPLACE. Names come from the kernel (getdents) or are one
// clean component: no "/" and no "..".

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// dirFD is a directory opened without following a link. The zero value is
// not valid; close it once.
type dirFD int

// errNotBeneath says a path cannot be reached below a directory without
// following a link or leaving it.
var errNotBeneath = errors.New("not reachable without following a link")

// openRootDir opens a workspace root (already resolved by the caller); the
// root itself must not be a link.
func openRootDir(path string) (dirFD, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return dirFD(fd), nil
}

func (d dirFD) close() { unix.Close(int(d)) }

// validName reports whether name is one component below a directory.
func validName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsRune(name, '/')
}

// openDirAt opens the directory name in d, failing on a link or a
// non-directory.
func openDirAt(d dirFD, name string) (dirFD, error) {
	if !validName(name) {
		return -1, errNotBeneath
	}
	for {
		fd, err := unix.Openat(int(d), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if errors.Is(err, unix.ENOTDIR) {
			// O_DIRECTORY answers ENOTDIR for a link too: say which.
			var st unix.Stat_t
			if unix.Fstatat(int(d), name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
				err = unix.ELOOP
			}
		}
		if err != nil {
			return -1, err
		}
		return dirFD(fd), nil
	}
}

// openBeneath opens the directory rel (relative, slash-separated) below d,
// one component at a time: no link is followed and ".." is refused. ""
// and "." are d itself (a new descriptor).
func openBeneath(d dirFD, rel string) (dirFD, error) {
	cur, err := dupDir(d)
	if err != nil {
		return -1, err
	}
	for _, name := range strings.Split(rel, "/") {
		if name == "" || name == "." {
			continue
		}
		if name == ".." {
			cur.close()
			return -1, errNotBeneath
		}
		next, err := openDirAt(cur, name)
		cur.close()
		if err != nil {
			return -1, err
		}
		cur = next
	}
	return cur, nil
}

// dupDir opens d again, with an offset of its own for listing it (a
// dup would share d's).
func dupDir(d dirFD) (dirFD, error) {
	for {
		fd, err := unix.Openat(int(d), ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, err
		}
		return dirFD(fd), nil
	}
}

// fileStat is what the sweep needs of an entry, never following a link.
type fileStat struct {
	mode     fs.FileMode // type and permission bits, as fs.FileInfo's
	size     int64
	mtime    int64 // nanoseconds
	dev, ino uint64
}

func (s fileStat) isDir() bool     { return s.mode.IsDir() }
func (s fileStat) isLink() bool    { return s.mode&fs.ModeSymlink != 0 }
func (s fileStat) isRegular() bool { return s.mode.IsRegular() }

// statAt describes the entry name in d itself (a link is not followed).
func statAt(d dirFD, name string) (fileStat, error) {
	if !validName(name) {
		return fileStat{}, errNotBeneath
	}
	var st unix.Stat_t
	if err := unix.Fstatat(int(d), name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fileStat{}, err
	}
	return toFileStat(&st), nil
}

// statDir describes d.
func statDir(d dirFD) (fileStat, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(d), &st); err != nil {
		return fileStat{}, err
	}
	return toFileStat(&st), nil
}

// readAt reads the regular file name in d, up to max bytes; a link, a
// FIFO or a device is refused without being opened for reading (O_NONBLOCK
// keeps a FIFO from blocking the open), and a longer file is an error.
func readAt(d dirFD, name string, max int64) ([]byte, error) {
	if !validName(name) {
		return nil, errNotBeneath
	}
	fd, err := unix.Openat(int(d), name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC|unix.O_NOCTTY, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if toFileStat(&st).mode.Type() != 0 {
		return nil, fmt.Errorf("%s: not a regular file", name)
	}
	if st.Size > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, max)
	}
	// One read more than the size, to see the end (or a file grown past
	// max since).
	b := make([]byte, 0, st.Size+1)
	for {
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
		if int64(len(b)) > max {
			return nil, fmt.Errorf("%s: larger than %d bytes", name, max)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}

// readlinkAt returns the text of the link name in d.
func readlinkAt(d dirFD, name string) (string, error) {
	if !validName(name) {
		return "", errNotBeneath
	}
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(int(d), name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// renameAside renames the entry name in d aside (see aside) without ever
// replacing what is there, and returns the new name.
func renameAside(d dirFD, name, suffix string) (string, error) {
	if !validName(name) {
		return "", errNotBeneath
	}
	return aside(name, suffix, func(oldname, newname string) error {
		return renameNoReplace(int(d), oldname, newname)
	})
}

// asideTries bounds the names tried for one path moved aside.
const asideTries = 1000

// aside renames name to name.gatehouse-blocked-suffix, or to the same with
// -2, -3, … when that is taken, and returns the new name. rename must
// fail with an error matching fs.ErrExist rather than replace what is
// there.
func aside(name, suffix string, rename func(oldname, newname string) error) (string, error) {
	base := name + ".gatehouse-blocked-" + suffix
	for n := 1; n <= asideTries; n++ {
		dst := base
		if n > 1 {
			dst += "-" + strconv.Itoa(n)
		}
		err := rename(name, dst)
		if err == nil {
			return dst, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("moving %s aside: %d names taken", name, asideTries)
}

// dirent is one entry of a directory as the kernel lists it.
type dirent struct {
	name string
	typ  fs.FileMode // fs.ModeDir, fs.ModeSymlink, 0 for a regular file, …
}

// unixMode turns st_mode into an fs.FileMode.
func unixMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFREG:
	default:
		mode |= fs.ModeIrregular
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
