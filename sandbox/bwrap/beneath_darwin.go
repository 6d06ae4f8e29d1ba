package bwrap

import (
	"errors"

	"golang.org/x/sys/unix"
)

func toFileStat(st *unix.Stat_t) fileStat {
	return fileStat{
		mode:  unixMode(uint32(st.Mode)),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		dev:   uint64(st.Dev),
		ino:   st.Ino,
	}
}

// readNames lists d, a directory freshly opened; each entry's type comes
// from statAt.
func readNames(d dirFD, buf []byte) ([]dirent, error) {
	var names []string
	for {
		n, err := unix.ReadDirent(int(d), buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	out := make([]dirent, 0, len(names))
	for _, name := range names {
		st, err := statAt(d, name)
		if err != nil {
			continue
		}
		out = append(out, dirent{name: name, typ: st.mode.Type()})
	}
	return out, nil
}

// renameNoReplace renames oldname to newname, both relative to dirfd,
// failing with EEXIST when newname exists.
func renameNoReplace(dirfd int, oldname, newname string) error {
	return unix.RenameatxNp(dirfd, oldname, dirfd, newname, unix.RENAME_EXCL)
}
