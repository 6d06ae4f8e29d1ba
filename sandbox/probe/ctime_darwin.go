package probe

import (
	"fmt"
	"syscall"
)

func ctime(st *syscall.Stat_t) string {
	return fmt.Sprintf(":%d.%d", st.Ctimespec.Sec, st.Ctimespec.Nsec)
}
