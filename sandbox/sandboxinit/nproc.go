package sandboxinit

// # Process count without a cgroup: RLIMIT_NPROC
//
// Where no pids cgroup is delegated, the number of tasks (processes and
// threads) a command may have is bounded by RLIMIT_NPROC, set before the
// shell starts and inherited by everything it starts; nothing inside can
// raise it again (that needs CAP_SYS_RESOURCE in the initial user
// namespace). What the kernel counts against it differs:
//
//   - Linux 5.14 and later count per user namespace: under bubblewrap
//     (--unshare-user) only the sandbox's own tasks count, so the limit is
//     Stage1Spec.NProc plus the init's own threads and InitReserve for them.
//   - Older kernels, and the "none" mode (no user namespace), count every
//     task of the real uid on the host. The host counts them just before
//     the start (Stage1Spec.NProcBase) and the limit is that plus Stage1Spec.NProc; the
//     user's other processes starting meanwhile use the same budget.
//
// The kernel does not apply RLIMIT_NPROC to root (uid 0 in the initial
// user namespace; bwrap's --unshare-user maps root to itself), nor to a
// task holding CAP_SYS_RESOURCE or CAP_SYS_ADMIN there: for those the
// limit is set but does not hold, and the card says nproc false
// (NProcEnforced).

import (
	"strconv"
	"strings"
)

// InitReserve is how many tasks beyond Stage1Spec.NProc the init keeps for its
// own threads (the Go runtime may start one while the command is at its
// limit). A command may so reach NProc+InitReserve tasks.
const InitReserve = 8

// PerUserNamespace reports whether a kernel of the given uname release
// counts RLIMIT_NPROC per user namespace (Linux 5.14 and later). An
// unreadable release is taken as an old kernel: its limit is then the
// looser one.
func PerUserNamespace(release string) bool {
	major, rest, _ := strings.Cut(release, ".")
	minor, _, _ := strings.Cut(rest, ".")
	minor = strings.TrimRightFunc(minor, func(r rune) bool { return r < '0' || r > '9' })
	ma, err1 := strconv.Atoi(major)
	mi, err2 := strconv.Atoi(minor)
	if err1 != nil || err2 != nil {
		return false
	}
	return ma > 5 || ma == 5 && mi >= 14
}

// nprocLimit is the RLIMIT_NPROC value for n more tasks over base tasks
// already counted, never above the hard limit in force (which cannot be
// raised).
func nprocLimit(n, base int64, hard uint64) uint64 {
	l := uint64(n + base)
	if n <= 0 || base < 0 || l > hard {
		return hard
	}
	return l
}
