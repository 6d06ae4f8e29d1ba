//go:build unix

package nofollow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A Dir is an open directory. Its methods are safe for concurrent use;
// Close ends it.
type Dir struct {
	fd   int
	name string
}

// dirFlags open a directory, never through a link.
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// retries bounds how often an operation starts again when what it found
// changed under it (a command racing the host).
const retries = 8

// Open opens the directory path. Its last element must be a directory,
// not a link; the elements before it are followed.
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, dirFlags, 0)
	if err != nil {
		return nil, pathError("open", path, err)
	}
	return &Dir{fd: fd, name: path}, nil
}

// Name returns the path d was opened with, joined with the names that led
// to it.
func (d *Dir) Name() string { return d.name }

// Close closes d.
func (d *Dir) Close() error {
	if d == nil || d.fd < 0 {
		return nil
	}
	err := unix.Close(d.fd)
	d.fd = -1
	return err
}

// pathError wraps err for op on path; a link or non-directory met where a
// directory belongs matches ErrNotDir.
func pathError(op, path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK) {
		err = fmt.Errorf("%w (%w)", ErrNotDir, err)
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

func (d *Dir) error(op, name string, err error) error {
	return pathError(op, join(d.name, name), err)
}

// OpenDir opens the directory name below d. "." is d itself, opened again.
func (d *Dir) OpenDir(name string) (*Dir, error) {
	if name == "." {
		fd, err := unix.Openat(d.fd, ".", dirFlags, 0)
		if err != nil {
			return nil, d.error("open", name, err)
		}
		return &Dir{fd: fd, name: d.name}, nil
	}
	if _, err := split(name); err != nil {
		return nil, d.error("open", name, err)
	}
	fd, err := openBeneath(d.fd, name, dirFlags)
	if err != nil {
		return nil, d.error("open", name, err)
	}
	return &Dir{fd: fd, name: join(d.name, name)}, nil
}

// parent opens the directory name is in and returns its descriptor, its
// last element and the function that closes the descriptor.
func (d *Dir) parent(op, name string) (int, string, func(), error) {
	dir, base, err := parentOf(name)
	if err != nil {
		return -1, "", nil, d.error(op, name, err)
	}
	if dir == "" {
		return d.fd, base, func() {}, nil
	}
	fd, err := openBeneath(d.fd, dir, dirFlags)
	if err != nil {
		return -1, "", nil, d.error(op, name, err)
	}
	return fd, base, func() { unix.Close(fd) }, nil
}

// Mkdir makes the directory name, which must not exist.
func (d *Dir) Mkdir(name string, perm fs.FileMode) error {
	pfd, base, done, err := d.parent("mkdir", name)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Mkdirat(pfd, base, uint32(perm.Perm())); err != nil {
		return d.error("mkdir", name, err)
	}
	return nil
}

// MkdirAll makes the directory name and its parents where missing, with
// perm, and returns it open. An element that is a link or another
// non-directory is an error (ErrNotDir).
func (d *Dir) MkdirAll(name string, perm fs.FileMode) (*Dir, error) {
	return d.mkdirAll(name, perm, false)
}

// MakeDir is MkdirAll that replaces an element that is a link or another
// non-directory: the entry itself is removed (never what a link points
// at) and a directory made in its place. It is for names that are the
// caller's own, in a directory a sandboxed command can write.
func (d *Dir) MakeDir(name string, perm fs.FileMode) (*Dir, error) {
	return d.mkdirAll(name, perm, true)
}

func (d *Dir) mkdirAll(name string, perm fs.FileMode, replace bool) (*Dir, error) {
	parts, err := split(name)
	if err != nil {
		return nil, d.error("mkdir", name, err)
	}
	var fd int
	var at string
	for range retries {
		if fd, at, err = d.mkdirPath(parts, uint32(perm.Perm()), replace); !errors.Is(err, unix.ENOENT) {
			break
		}
		// A directory on the way was removed while it was open: again
		// from the top.
	}
	if err != nil {
		return nil, d.error("mkdir", at, err)
	}
	return &Dir{fd: fd, name: join(d.name, name)}, nil
}

// mkdirPath makes and opens each of parts in turn; on failure it returns
// the path that failed.
func (d *Dir) mkdirPath(parts []string, perm uint32, replace bool) (int, string, error) {
	cur := d.fd
	for i, p := range parts {
		fd, err := makeOne(cur, p, perm, replace)
		if cur != d.fd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, strings.Join(parts[:i+1], "/"), err
		}
		cur = fd
	}
	return cur, "", nil
}

// makeOne makes the directory name in pfd where missing and opens it.
func makeOne(pfd int, name string, perm uint32, replace bool) (int, error) {
	var err error
	for range retries {
		var fd int
		fd, err = unix.Openat(pfd, name, dirFlags, 0)
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOENT):
			if err = unix.Mkdirat(pfd, name, perm); err != nil && !errors.Is(err, unix.EEXIST) {
				return -1, err
			}
			continue
		case !replace || !(errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EMLINK)):
			return -1, err
		}
		if uerr := unix.Unlinkat(pfd, name, 0); uerr != nil && !errors.Is(uerr, unix.ENOENT) && !errors.Is(uerr, unix.EISDIR) {
			return -1, uerr
		}
	}
	return -1, err
}

// Stat describes d itself.
func (d *Dir) Stat() (Info, error) {
	var st unix.Stat_t
	if err := unix.Fstat(d.fd, &st); err != nil {
		return Info{}, d.error("stat", "", err)
	}
	return infoOf(baseName(d.name), &st), nil
}

// Lstat describes the entry name; a link is described, not followed.
func (d *Dir) Lstat(name string) (Info, error) {
	pfd, base, done, err := d.parent("lstat", name)
	if err != nil {
		return Info{}, err
	}
	defer done()
	var st unix.Stat_t
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, d.error("lstat", name, err)
	}
	return infoOf(base, &st), nil
}

// Readlink returns the target of the link name.
func (d *Dir) Readlink(name string) (string, error) {
	pfd, base, done, err := d.parent("readlink", name)
	if err != nil {
		return "", err
	}
	defer done()
	for n := 256; ; n *= 2 {
		buf := make([]byte, n)
		m, err := unix.Readlinkat(pfd, base, buf)
		if err != nil {
			return "", d.error("readlink", name, err)
		}
		if m < n {
			return string(buf[:m]), nil
		}
	}
}

// Symlink makes name a link to target. Nothing may be at name.
func (d *Dir) Symlink(target, name string) error {
	pfd, base, done, err := d.parent("symlink", name)
	if err != nil {
		return err
	}
	defer done()
	if err := unix.Symlinkat(target, pfd, base); err != nil {
		return d.error("symlink", name, err)
	}
	return nil
}

// WriteFile makes the file name, which must not exist, with perm and
// data.
func (d *Dir) WriteFile(name string, data []byte, perm fs.FileMode) error {
	pfd, base, done, err := d.parent("open", name)
	if err != nil {
		return err
	}
	defer done()
	fd, err := unix.Openat(pfd, base, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return d.error("open", name, err)
	}
	f := os.NewFile(uintptr(fd), join(d.name, name))
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Remove removes the entry name: a file, a link (not what it points at)
// or an empty directory.
func (d *Dir) Remove(name string) error {
	pfd, base, done, err := d.parent("remove", name)
	if err != nil {
		return err
	}
	defer done()
	err = unix.Unlinkat(pfd, base, 0)
	if errors.Is(err, unix.EISDIR) || errors.Is(err, unix.EPERM) {
		if rerr := unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR); rerr == nil || !errors.Is(rerr, unix.ENOTDIR) {
			err = rerr
		}
	}
	if err != nil {
		return d.error("remove", name, err)
	}
	return nil
}

// RemoveAll removes name and everything below it, making each directory
// writable by its owner first (Go's module cache is read-only). Nothing
// is followed: a link is removed as an entry. A name that does not exist
// is no error.
func (d *Dir) RemoveAll(name string) error {
	pfd, base, done, err := d.parent("removeall", name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer done()
	if err := removeAllAt(pfd, base); err != nil {
		return d.error("removeall", name, err)
	}
	return nil
}

func removeAllAt(pfd int, name string) error {
	var err error
	for range retries {
		err = unix.Unlinkat(pfd, name, 0)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EISDIR) && !errors.Is(err, unix.EPERM) {
			return err
		}
		fd, oerr := unix.Openat(pfd, name, dirFlags, 0)
		switch {
		case oerr == nil:
		case errors.Is(oerr, unix.ENOENT):
			return nil
		case errors.Is(oerr, unix.ELOOP), errors.Is(oerr, unix.ENOTDIR), errors.Is(oerr, unix.EMLINK):
			err = oerr
			continue // no longer a directory: unlink what is there now
		case errors.Is(oerr, unix.EACCES):
			if cerr := chmodDirAt(pfd, name); cerr != nil {
				return oerr
			}
			err = oerr
			continue
		default:
			return oerr
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&0o700 != 0o700 {
			unix.Fchmod(fd, uint32(st.Mode&0o7777)|0o700)
		}
		names, rerr := readNames(fd)
		for _, n := range names {
			if err := removeAllAt(fd, n); err != nil && rerr == nil {
				rerr = err
			}
		}
		unix.Close(fd)
		err = unix.Unlinkat(pfd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if rerr != nil {
			return rerr
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) && !errors.Is(err, unix.ENOTDIR) {
			return err
		}
		// Something was made in it meanwhile, or it was replaced: again.
	}
	return err
}

// ReadDir describes the entries of the directory name ("." for d), sorted
// by name.
func (d *Dir) ReadDir(name string) ([]Info, error) {
	sub, err := d.OpenDir(name)
	if err != nil {
		return nil, err
	}
	defer sub.Close()
	var out []Info
	err = sub.eachEntry(func(n string, st *unix.Stat_t) error {
		out = append(out, infoOf(n, st))
		return nil
	})
	if err != nil {
		return out, sub.error("readdir", "", err)
	}
	return out, nil
}

// eachEntry calls fn with each entry of d, sorted by name, and its lstat.
// Entries gone by the time they are described are left out.
func (d *Dir) eachEntry(fn func(name string, st *unix.Stat_t) error) error {
	names, err := readNames(d.fd)
	if err != nil {
		return err
	}
	slices.Sort(names)
	for _, n := range names {
		var st unix.Stat_t
		if err := unix.Fstatat(d.fd, n, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue
			}
			return err
		}
		if err := fn(n, &st); err != nil {
			return err
		}
	}
	return nil
}

// Walk calls fn for every entry below the directory name ("." for d),
// parents before their children, each directory's entries sorted by
// name. A directory is entered through a descriptor opened from its
// parent's, never through a link; one that was replaced by a link or a
// file after fn saw it, or that cannot be read, is not entered.
func (d *Dir) Walk(name string, fn WalkFunc) error {
	sub, err := d.OpenDir(name)
	if err != nil {
		return err
	}
	defer sub.Close()
	prefix := ""
	if name != "." {
		prefix = name
	}
	return sub.walk(prefix, fn)
}

func (d *Dir) walk(prefix string, fn WalkFunc) error {
	return d.eachEntry(func(n string, st *unix.Stat_t) error {
		rel := n
		if prefix != "" {
			rel = prefix + "/" + n
		}
		info := infoOf(n, st)
		err := fn(rel, info)
		if !info.IsDir() || err != nil {
			if errors.Is(err, fs.SkipDir) {
				return nil
			}
			return err
		}
		fd, err := unix.Openat(d.fd, n, dirFlags, 0)
		if err != nil {
			return nil // changed or unreadable: not entered
		}
		sub := &Dir{fd: fd, name: join(d.name, n)}
		defer sub.Close()
		return sub.walk(rel, fn)
	})
}

// readNames returns the names in the directory fd, through a descriptor
// of its own (fd's offset is left alone).
func readNames(fd int) ([]string, error) {
	nfd, err := unix.Openat(fd, ".", dirFlags, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(nfd), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}

func infoOf(name string, st *unix.Stat_t) Info {
	m := uint32(st.Mode)
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
	}
	return Info{
		Name:       name,
		Mode:       mode,
		Size:       st.Size,
		ModTime:    time.Unix(st.Mtim.Unix()),
		AccessTime: time.Unix(st.Atim.Unix()),
		Uid:        int(st.Uid),
	}
}

func baseName(p string) string {
	if i := strings.LastIndexByte(strings.TrimSuffix(p, "/"), '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// openEach opens name below dirfd one element at a time, none through a
// link; the last with flags.
func openEach(dirfd int, name string, flags int) (int, error) {
	parts := strings.Split(name, "/")
	cur := dirfd
	for i, p := range parts {
		fl := dirFlags
		if i == len(parts)-1 {
			fl = flags | unix.O_NOFOLLOW | unix.O_CLOEXEC
		}
		fd, err := unix.Openat(cur, p, fl, 0)
		if cur != dirfd {
			unix.Close(cur)
		}
		if err != nil {
			return -1, err
		}
		cur = fd
	}
	return cur, nil
}

// Chtimes sets the access and modification times of the entry name; a
// link's own times, never its target's.
func (d *Dir) Chtimes(name string, atime, mtime time.Time) error {
	pfd, base, done, err := d.parent("chtimes", name)
	if err != nil {
		return err
	}
	defer done()
	ts := []unix.Timespec{unix.NsecToTimespec(atime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err := unix.UtimesNanoAt(pfd, base, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return d.error("chtimes", name, err)
	}
	return nil
}

// parentOf splits name into the path of its directory ("" for the Dir
// itself) and its last element.
func parentOf(name string) (dir, base string, err error) {
	parts, err := split(name)
	if err != nil {
		return "", "", err
	}
	return strings.Join(parts[:len(parts)-1], "/"), parts[len(parts)-1], nil
}
