//go:build linux && (amd64 || arm64)

package seccomp

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSysnumMatchesUnix checks the portable table of the native arch against
// golang.org/x/sys/unix, which is generated from the kernel headers.
func TestSysnumMatchesUnix(t *testing.T) {
	t.Parallel()
	tab := archInfo[Arch(runtime.GOARCH)].sysnum
	for name, n := range tab {
		want, ok := unixSysnum[name]
		switch {
		case !ok && n != absent:
			t.Errorf("%s: table has %d, x/sys/unix has no SYS_ constant", name, n)
		case ok && n != want:
			t.Errorf("%s: table has %d, x/sys/unix has %d", name, n, want)
		}
	}
	for name := range unixSysnum {
		if _, ok := tab[name]; !ok {
			t.Errorf("%s: missing from the table", name)
		}
	}
}

// TestConstantsMatchUnix checks the portable copies of kernel constants.
func TestConstantsMatchUnix(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		got, want uint64
	}{
		{"EPERM", errnoEPERM, uint64(unix.EPERM)},
		{"ENOSYS", errnoENOSYS, uint64(unix.ENOSYS)},
		{"AF_UNIX", afUnix, unix.AF_UNIX},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"AF_NETLINK", afNetlink, unix.AF_NETLINK},
		{"NETLINK_ROUTE", netlinkRoute, unix.NETLINK_ROUTE},
		{"TIOCSTI", tiocsti, unix.TIOCSTI},
		{"TIOCLINUX", tioclinux, unix.TIOCLINUX},
		{"CLONE_NEWUSER", cloneNewUser, unix.CLONE_NEWUSER},
		{"AUDIT_ARCH_X86_64", auditArchX86_64, unix.AUDIT_ARCH_X86_64},
		{"AUDIT_ARCH_AARCH64", auditArchAArch64, unix.AUDIT_ARCH_AARCH64},
		{"AUDIT_ARCH_I386", auditArchI386, unix.AUDIT_ARCH_I386},
		{"AUDIT_ARCH_ARM", auditArchARM, unix.AUDIT_ARCH_ARM},
		{"SECCOMP_RET_KILL_PROCESS", retKillProcess, unix.SECCOMP_RET_KILL_PROCESS},
		{"SECCOMP_RET_ERRNO", retErrno, unix.SECCOMP_RET_ERRNO},
		{"SECCOMP_RET_ALLOW", retAllow, unix.SECCOMP_RET_ALLOW},
	} {
		if c.got != c.want {
			t.Errorf("%s: package has %#x, x/sys/unix has %#x", c.name, c.got, c.want)
		}
	}
}
