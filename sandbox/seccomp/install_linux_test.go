package seccomp

import (
	"bufio"
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A filter cannot be removed, so the real tests run in a re-executed copy
// of the test binary. childEnv selects what the child does:
//
//	filter, filter-ptrace  run the probes, install, run them again, report
//	x32                    install, then make an x32 syscall (should die)
//	exit0                  exit 0 at once (target for fork/exec probes)
const childEnv = "GATEHOUSE_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	switch mode := os.Getenv(childEnv); mode {
	case "":
		os.Exit(m.Run())
	case "exit0":
		os.Exit(0)
	case "filter", "filter-ptrace":
		os.Exit(filterChild(Options{AllowPtrace: mode == "filter-ptrace"}))
	case "x32":
		os.Exit(x32Child())
	default:
		os.Stderr.WriteString("unknown " + childEnv + " mode " + mode + "\n")
		os.Exit(2)
	}
}

// A probe makes one syscall and reports its errno (0 for success). Probes
// use raw syscalls on the locked main thread; the filter covers every thread
// anyway (TSYNC), but this keeps the child's behaviour easy to follow.
type probe struct {
	name string
	// before says the probe is harmless to run unfiltered, to show the
	// errno the kernel gives without the filter.
	before bool
	run    func() unix.Errno
}

func errnoOf(err error) unix.Errno {
	if err == nil {
		return 0
	}
	var e unix.Errno
	if errors.As(err, &e) {
		return e
	}
	return unix.EIO
}

func closeIfFd(r, _ uintptr, e unix.Errno) unix.Errno {
	if e == 0 {
		unix.Close(int(r))
	}
	return e
}

// openPty opens a pseudo-terminal pair, the slave through TIOCGPTPEER.
func openPty() (master, slave int, err error) {
	master, err = unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, -1, err
	}
	if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(master)
		return -1, -1, err
	}
	s, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if e != 0 {
		unix.Close(master)
		return -1, -1, e
	}
	return master, int(s), nil
}

func probes() []probe {
	self, _ := os.Executable()
	forkExec := func(cloneflags uintptr) unix.Errno {
		pid, err := syscall.ForkExec(self, []string{self}, &syscall.ProcAttr{
			Env: []string{childEnv + "=exit0", noRaceExitSleep()},
			Sys: &syscall.SysProcAttr{Cloneflags: cloneflags},
		})
		if err != nil {
			return errnoOf(err)
		}
		var ws unix.WaitStatus
		_, err = unix.Wait4(pid, &ws, 0, nil)
		return errnoOf(err)
	}
	onPty := func(f func(slave int) unix.Errno) func() unix.Errno {
		return func() unix.Errno {
			m, s, err := openPty()
			if err != nil {
				return errnoOf(err)
			}
			defer unix.Close(m)
			defer unix.Close(s)
			return f(s)
		}
	}
	return []probe{
		{"socket_unix", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM, 0))
		}},
		{"socket_inet", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM, 0))
		}},
		{"socket_inet6", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM, 0))
		}},
		{"socket_netlink_route", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE))
		}},
		{"socket_netlink_uevent", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_KOBJECT_UEVENT))
		}},
		{"socket_vsock", false, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_SOCKET, unix.AF_VSOCK, unix.SOCK_STREAM, 0))
		}},
		{"socketpair_unix", true, func() unix.Errno {
			var fds [2]int32
			_, _, e := unix.Syscall6(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM, 0, uintptr(unsafe.Pointer(&fds)), 0, 0)
			if e == 0 {
				unix.Close(int(fds[0]))
				unix.Close(int(fds[1]))
			}
			return e
		}},
		{"io_uring_setup", true, func() unix.Errno {
			var params [120]byte // struct io_uring_params
			return closeIfFd(unix.Syscall(unix.SYS_IO_URING_SETUP, 1, uintptr(unsafe.Pointer(&params)), 0))
		}},
		{"bpf", true, func() unix.Errno {
			var attr [128]byte // zeroed: BPF_MAP_TYPE_UNSPEC, which the kernel rejects
			return closeIfFd(unix.Syscall(unix.SYS_BPF, unix.BPF_MAP_CREATE, uintptr(unsafe.Pointer(&attr)), uintptr(len(attr))))
		}},
		{"keyctl", true, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_KEYCTL, unix.KEYCTL_GET_KEYRING_ID, uintptr(int64(unix.KEY_SPEC_SESSION_KEYRING)&0xffffffff), 0)
			return e
		}},
		{"userfaultfd", true, func() unix.Errno {
			return closeIfFd(unix.Syscall(unix.SYS_USERFAULTFD, unix.O_CLOEXEC, 0, 0))
		}},
		{"tiocsti", true, onPty(func(s int) unix.Errno {
			c := byte('\n')
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(s), unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
			return e
		})},
		{"tcgets", true, onPty(func(s int) unix.Errno {
			_, err := unix.IoctlGetTermios(s, unix.TCGETS)
			return errnoOf(err)
		})},
		// A multithreaded process may not unshare its user namespace:
		// EINVAL without the filter, EPERM with it.
		{"unshare_user", true, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
			return e
		}},
		{"clone_user", false, func() unix.Errno { return forkExec(unix.CLONE_NEWUSER) }},
		{"clone_plain", true, func() unix.Errno { return forkExec(0) }},
		// A NULL clone_args of size 0: EINVAL without the filter.
		{"clone3", true, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_CLONE3, 0, 0, 0)
			return e
		}},
		// No such pid: ESRCH without the filter.
		{"ptrace", true, func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_PTRACE, unix.PTRACE_DETACH, 0x3fffffff, 0, 0, 0, 0)
			return e
		}},
		{"setns", true, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_SETNS, ^uintptr(0), 0, 0)
			return e
		}},
		{"mount", true, func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_MOUNT, 0, 0, 0, 0, 0, 0)
			return e
		}},
		{"personality_query", true, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
			return e
		}},
		{"personality_no_aslr", false, func() unix.Errno {
			_, _, e := unix.Syscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0)
			return e
		}},
		{"open_read", true, func() unix.Errno {
			fd, err := unix.Open("/proc/self/stat", unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				return errnoOf(err)
			}
			defer unix.Close(fd)
			var buf [64]byte
			if n, err := unix.Read(fd, buf[:]); err != nil || n == 0 {
				return unix.EIO
			}
			return 0
		}},
	}
}

// noRaceExitSleep returns a GORACE setting that keeps a race-enabled child
// from sleeping a second before it exits (the race runtime's default).
func noRaceExitSleep() string {
	return "GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")
}

func errnoString(e unix.Errno) string {
	if e == 0 {
		return "ok"
	}
	return unix.ErrnoName(e)
}

// filterChild prints "before NAME RESULT" and "after NAME RESULT" lines.
func filterChild(opts Options) int {
	runtime.LockOSThread()
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	ps := probes()
	for _, p := range ps {
		if p.before {
			w.WriteString("before " + p.name + " " + errnoString(p.run()) + "\n")
		}
	}
	if err := Install(opts); err != nil {
		w.WriteString("install-error " + err.Error() + "\n")
		return 1
	}
	for _, p := range ps {
		w.WriteString("after " + p.name + " " + errnoString(p.run()) + "\n")
	}
	return 0
}

func x32Child() int {
	runtime.LockOSThread()
	if err := Install(Options{}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	_, _, e := unix.Syscall(unix.SYS_GETPID|x32BitMask, 0, 0, 0)
	os.Stdout.WriteString("survived x32 getpid: " + errnoString(e) + "\n")
	return 0
}

func runChild(t *testing.T, mode string) (stdout string, err error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, noRaceExitSleep())
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if errb.Len() > 0 {
		t.Logf("child stderr:\n%s", errb.String())
	}
	return out.String(), err
}

func TestInstall(t *testing.T) {
	t.Parallel()
	if _, err := NativeArch(); err != nil {
		t.Skip(err)
	}
	// What each probe must return under the filter.
	want := map[string]string{
		"socket_unix":           "EPERM",
		"socket_inet":           "ok",
		"socket_inet6":          "ok",
		"socket_netlink_route":  "ok",
		"socket_netlink_uevent": "EPERM",
		"socket_vsock":          "EPERM",
		"socketpair_unix":       "ok",
		"io_uring_setup":        "EPERM",
		"bpf":                   "EPERM",
		"keyctl":                "EPERM",
		"userfaultfd":           "EPERM",
		"tiocsti":               "EPERM",
		"tcgets":                "ok",
		"unshare_user":          "EPERM",
		"clone_user":            "EPERM",
		"clone_plain":           "ok",
		"clone3":                "ENOSYS",
		"ptrace":                "EPERM",
		"setns":                 "EPERM",
		"mount":                 "EPERM",
		"personality_query":     "ok",
		"personality_no_aslr":   "EPERM",
		"open_read":             "ok",
	}
	// Probes whose unfiltered result is known not to match the filtered
	// one on any host, proving the filter (not the kernel) answered.
	distinct := []string{"socket_unix", "unshare_user", "clone3", "ptrace", "setns"}

	for _, mode := range []string{"filter", "filter-ptrace"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			out, err := runChild(t, mode)
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			got := map[string]map[string]string{"before": {}, "after": {}}
			for l := range strings.Lines(out) {
				f := strings.Fields(l)
				if len(f) == 3 && got[f[0]] != nil {
					got[f[0]][f[1]] = f[2]
				}
			}
			w := want
			if mode == "filter-ptrace" {
				w = maps.Clone(want)
				w["ptrace"] = "ESRCH" // the kernel's answer: no such pid
			}
			for name, wv := range w {
				if g := got["after"][name]; g != wv {
					t.Errorf("%s under the filter: got %q, want %q (unfiltered: %q)", name, g, wv, got["before"][name])
				}
			}
			for _, name := range distinct {
				if mode == "filter-ptrace" && name == "ptrace" {
					continue
				}
				if b := got["before"][name]; b == "" || b == w[name] {
					t.Errorf("%s without the filter: got %q, want a result other than %q", name, b, w[name])
				}
			}
			t.Logf("unfiltered results on this host: %v", got["before"])
		})
	}
}

// TestInstallKillsX32 makes an x32 syscall under the filter: the kernel must
// kill the whole process with SIGSYS before looking up the number.
func TestInstallKillsX32(t *testing.T) {
	t.Parallel()
	if runtime.GOARCH != "amd64" {
		t.Skip("x32 exists only on amd64")
	}
	out, err := runChild(t, "x32")
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("child was not killed: err %v, output %q", err, out)
	}
	ws := ee.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGSYS {
		t.Fatalf("child ended with %v, want death by SIGSYS; output %q", ee, out)
	}
}
