package probe

import (
	"fmt"
	"syscall"
)

func ctime(st *syscall.Stat_t) string { return fmt.Sprintf(":%d.%d", st.Ctim.Sec, st.Ctim.Nsec) }
