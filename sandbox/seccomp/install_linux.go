package seccomp

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Install sets no-new-privs and installs the filter for the native
// architecture on every thread of the process (SECCOMP_FILTER_FLAG_TSYNC).
// It cannot be undone: the filter is inherited across fork and exec by
// everything the process starts.
//
// The caller is expected to hold runtime.LockOSThread and exec the command
// right after; Install locks the thread itself too (the lock nests), so the
// two prctl/seccomp calls run on one thread either way.
//
// It returns an error wrapping [ErrUnsupported] when the kernel lacks
// seccomp filters or SECCOMP_RET_KILL_PROCESS (Linux < 4.14), and a plain
// error for anything else.
func Install(opts Options) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return install(opts, unix.SECCOMP_FILTER_FLAG_TSYNC)
}

// InstallThread is Install for the calling thread only: no-new-privs and
// the filter are set on this OS thread, and every process it forks inherits
// them, while the process's other threads stay unfiltered. The caller must
// hold runtime.LockOSThread and never release it, so that the thread ends
// with its goroutine and no other goroutine ever runs filtered.
func InstallThread(opts Options) error {
	return install(opts, 0)
}

func install(opts Options, flags uintptr) error {
	arch, err := NativeArch()
	if err != nil {
		return fmt.Errorf("installing seccomp filter: %w", err)
	}
	prog, err := Program(arch, opts)
	if err != nil {
		return fmt.Errorf("installing seccomp filter: %w", err)
	}
	filter := make([]unix.SockFilter, len(prog))
	for i, ins := range prog {
		filter[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filter)), Filter: &filter[0]}

	// The filter relies on SECCOMP_RET_KILL_PROCESS for foreign ABIs. A
	// kernel that does not know it would treat it as "kill the thread",
	// which leaves the rest of the process running: refuse instead.
	action := uint32(retKillProcess)
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action))); e != 0 {
		switch e {
		case unix.ENOSYS, unix.EINVAL, unix.EOPNOTSUPP:
			return fmt.Errorf("installing seccomp filter: %w: kernel lacks seccomp filters with SECCOMP_RET_KILL_PROCESS, Linux 4.14+ (%w)", ErrUnsupported, e)
		}
		return fmt.Errorf("installing seccomp filter: checking SECCOMP_RET_KILL_PROCESS: %w", e)
	}

	// Required for an unprivileged filter, and wanted anyway: nothing
	// exec'd under the filter can gain privileges through setuid bits or
	// file capabilities.
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("installing seccomp filter: setting no_new_privs: %w", err)
	}

	r, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(filter)
	switch {
	case e == unix.ENOSYS:
		return fmt.Errorf("installing seccomp filter: %w: kernel built without seccomp (%w)", ErrUnsupported, e)
	case e != 0:
		return fmt.Errorf("installing seccomp filter: %w", e)
	case r != 0:
		// With TSYNC, a positive return is the id of a thread that could
		// not be synchronized (it already has a diverging filter).
		return fmt.Errorf("installing seccomp filter: thread %d could not be synchronized", r)
	}
	return nil
}
