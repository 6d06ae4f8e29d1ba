package bwrap

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/unix"
)

func toFileStat(st *unix.Stat_t) fileStat {
	return fileStat{
		mode:  unixMode(uint32(st.Mode)),
		size:  st.Size,
		mtime: st.Mtim.Nano(),
		dev:   st.Dev,
		ino:   st.Ino,
	}
}

// readNames lists d, a directory freshly opened, with each entry's type
// as getdents gives it; an entry of unknown type is looked at with
// statAt.
func readNames(d dirFD, buf []byte) ([]dirent, error) {
	var out []dirent
	for {
		n, err := unix.ReadDirent(int(d), buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		b := buf[:n]
		// struct linux_dirent64: ino u64, off s64, reclen u16, type u8,
		// name NUL-terminated.
		for len(b) >= 19 {
			reclen := int(b[16]) | int(b[17])<<8
			if reclen < 19 || reclen > len(b) {
				return out, errors.New("malformed directory entry")
			}
			typ := b[18]
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			b = b[reclen:]
			if string(name) == "." || string(name) == ".." {
				continue
			}
			e := dirent{name: string(name)}
			switch typ {
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_REG:
			case unix.DT_LNK:
				e.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				e.typ = fs.ModeSocket
			case unix.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				e.typ = fs.ModeDevice
			default:
				st, err := statAt(d, e.name)
				if err != nil {
					continue // gone since
				}
				e.typ = st.mode.Type()
			}
			out = append(out, e)
		}
	}
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
