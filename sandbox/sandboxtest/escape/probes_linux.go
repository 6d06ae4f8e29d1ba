package escape

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func setupErrorf(format string, a ...any) error {
	return setupError{fmt.Errorf(format, a...)}
}

// probeSocket opens and closes a socket of the family, type and protocol.
func probeSocket(family, typ, proto int) func() error {
	return func() error {
		fd, err := unix.Socket(family, typ|unix.SOCK_CLOEXEC, proto)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	}
}

var (
	probeVsock         = probeSocket(unix.AF_VSOCK, unix.SOCK_STREAM, 0)
	probeNetlinkRoute  = probeSocket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE)
	probeNetlinkUevent = probeSocket(unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT)
	probePacket        = probeSocket(unix.AF_PACKET, unix.SOCK_DGRAM, 0)
)

func probeIOUring() error {
	var params [120]byte // struct io_uring_params, zeroed: default setup
	fd, _, e := unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0)
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func probeBPF() error {
	// The head of union bpf_attr for BPF_MAP_CREATE; the rest stays zero.
	var attr [32]uint32
	attr[0] = unix.BPF_MAP_TYPE_ARRAY // map_type
	attr[1] = 4                       // key_size
	attr[2] = 4                       // value_size
	attr[3] = 1                       // max_entries
	fd, _, e := unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func probeUserfaultfd() error {
	// UFFD_USER_MODE_ONLY (Linux 5.11) lets an unprivileged process have
	// one even when vm.unprivileged_userfaultfd is 0, so without a filter
	// the call succeeds for anyone; older kernels reject the flag.
	const uffdUserModeOnly = 1
	fd, _, e := unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC|uffdUserModeOnly, 0, 0)
	if e == unix.EINVAL {
		fd, _, e = unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0)
	}
	if e != 0 {
		return e
	}
	return unix.Close(int(fd))
}

func probeKeyctl() error {
	_, err := unix.KeyctlGetKeyringID(unix.KEY_SPEC_SESSION_KEYRING, false)
	return err
}

// probeTIOCSTI pushes a byte into the input of a fresh pty. Since Linux 6.2
// and before, the kernel itself refuses TIOCSTI (EPERM) on a terminal that
// is not the caller's controlling terminal unless the caller has
// CAP_SYS_ADMIN, which nobody in the sandbox has. So the probe first makes
// the pty its controlling terminal (setsid, then TIOCSCTTY); only then does
// EPERM mean the seccomp filter. (With dev.tty.legacy_tiocsti = 0 the kernel
// answers EIO instead.)
func probeTIOCSTI() error {
	// Closing the controlling terminal's master at the end hangs it up,
	// which sends this process SIGHUP.
	signal.Ignore(syscall.SIGHUP)

	// Fails with EPERM when this process leads its process group; then
	// the pty cannot become the controlling terminal (checked below).
	_, sidErr := unix.Setsid()

	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return setupErrorf("opening /dev/ptmx: %w", err)
	}
	defer unix.Close(m)
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		return setupErrorf("unlocking the pty: %w", err)
	}
	s, err := openPtySlave(m)
	if err != nil {
		return setupErrorf("opening the pty slave: %w", err)
	}
	defer unix.Close(s)
	cttyErr := unix.IoctlSetInt(s, unix.TIOCSCTTY, 0)

	c := byte(' ')
	_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	switch {
	case e == 0:
		return nil
	case e == unix.EPERM && cttyErr != nil:
		return setupErrorf("TIOCSTI failed with EPERM, but the pty is not the controlling terminal (setsid: %v, TIOCSCTTY: %v), so the kernel would refuse it anyway", sidErr, cttyErr)
	}
	return e
}

// openPtySlave opens the slave of master m, through TIOCGPTPEER (Linux
// 4.13) where it exists and /dev/pts/N otherwise. The open omits O_NOCTTY
// so a session leader acquires it as controlling terminal.
func openPtySlave(m int) (int, error) {
	fd, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_CLOEXEC)
	if e == 0 {
		return int(fd), nil
	}
	n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
	if err != nil {
		return -1, err
	}
	return unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_CLOEXEC, 0)
}

// probePtrace starts a child that calls ptrace(PTRACE_TRACEME) before it
// execs (Go's SysProcAttr.Ptrace), then kills it. The child inherits the
// filter, so under it the ptrace call fails and the start reports its errno.
// Tracing a child of our own, rather than attaching to some other process,
// leaves nothing else stopped when ptrace is allowed.
func probePtrace() error {
	const self = "/proc/self/exe"
	if _, err := os.Stat(self); err != nil {
		return setupErrorf("locating this binary: %w", err)
	}
	// The tracer is the thread that started the child.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	p, err := os.StartProcess(self, []string{"escape-probe-ptrace-child"}, &os.ProcAttr{
		Sys: &syscall.SysProcAttr{Ptrace: true},
	})
	if err != nil {
		return err
	}
	// The child is stopped at its exec; it never runs.
	p.Kill()
	p.Wait()
	return nil
}

func probeProcMem(pid string) error {
	if _, err := strconv.Atoi(pid); err != nil {
		return setupErrorf("bad pid %q", pid)
	}
	f, err := os.OpenFile("/proc/"+pid+"/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// probeUnshareUser starts true(1) in a new user namespace. Go clones with
// CLONE_NEWUSER for this (unshare(2) would fail for a multithreaded process
// anyway), which is what the filter refuses.
func probeUnshareUser() error {
	path, err := exec.LookPath("true")
	if err != nil {
		path = "/bin/true"
		if _, err := os.Stat(path); err != nil {
			return setupErrorf("no true(1) to start: %w", err)
		}
	}
	p, err := os.StartProcess(path, []string{"true"}, &os.ProcAttr{
		Sys: &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER},
	})
	if err != nil {
		return err
	}
	st, err := p.Wait()
	if err != nil {
		return setupErrorf("waiting for true(1): %w", err)
	}
	if !st.Success() {
		return fmt.Errorf("true(1) in a new user namespace: %v", st)
	}
	return nil
}
