package probe

import (
	"fmt"
	"io/fs"
	"syscall"
)

func fileIdentity(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%d:%d:%d:%d", st.Dev, st.Ino, fi.Size(), fi.ModTime().UnixNano()) + ctime(st)
}
