// Package seccomp builds and installs the seccomp-bpf filter that confines
// commands run in the Gatehouse sandbox.
//
// The filter is the last stage before the user's command: sandbox-init
// installs it (no-new-privs first) and immediately execs the shell, so the
// shell and everything it starts run under it, while the network bridge that
// sandbox-init keeps running does not.
//
// The program is a short denylist in classic BPF, assembled by hand with
// golang.org/x/net/bpf; no cgo and no libseccomp. [Program] is pure and
// portable, so the exact instructions for every supported architecture are
// built and tested on any OS; only [Install] needs Linux.
//
// # What the program does
//
// In order:
//
//  1. Syscalls made through any ABI other than the native one are fatal
//     (SECCOMP_RET_KILL_PROCESS): on amd64, i386 calls through int 0x80 and
//     x32 calls (number with bit 0x40000000 set); on arm64, AArch32 calls.
//     The syscall numbers of those ABIs differ from the native ones, so the
//     denylist below would not apply to them; refusing them outright closes
//     that hole before any number is looked at.
//  2. The denied syscalls listed by [Describe] fail with EPERM (clone3 with
//     ENOSYS), some only for particular arguments.
//  3. Everything else is allowed.
//
// Denied calls fail with an errno rather than killing the process, so a tool
// that probes for a feature (io_uring, user namespaces) degrades instead of
// crashing.
//
// Since Linux 5.11 the kernel caches, per syscall number, verdicts that do
// not depend on arguments; almost every allowed syscall then skips the
// program entirely, so its length costs little.
//
// # Limits
//
// Seccomp sees syscall numbers and argument registers, never paths or the
// memory arguments point to. In particular it cannot stop a process from
// opening /proc/<pid>/mem (or /proc/<pid>/fd/N) of another process with
// the same uid; the kernel allows that when the target is dumpable, and a
// write there runs code in the target without this filter. Processes that
// share the sandbox but run outside the filter (bwrap's pid 1,
// sandbox-init and its bridge) must therefore not be reachable that way,
// for example by making them non-dumpable (prctl(PR_SET_DUMPABLE, 0)).
// The escape probe "proc-mem PID" checks it.
package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
)

// ErrUnsupported is returned (wrapped, with its cause) when the filter cannot
// be installed on this platform or kernel.
var ErrUnsupported = errors.New("seccomp unsupported")

// Arch is a syscall ABI the filter can be built for. Its values are Go's
// GOARCH names.
type Arch string

const (
	AMD64 Arch = "amd64" // x86-64; AUDIT_ARCH_X86_64
	ARM64 Arch = "arm64" // AArch64; AUDIT_ARCH_AARCH64
)

// Arches lists the architectures [Program] supports.
func Arches() []Arch { return []Arch{AMD64, ARM64} }

// NativeArch returns the architecture this binary was built for, or an error
// wrapping [ErrUnsupported] when the filter has no syscall table for it.
func NativeArch() (Arch, error) {
	a := Arch(runtime.GOARCH)
	if _, ok := archInfo[a]; !ok {
		return "", fmt.Errorf("no seccomp syscall table for %s: %w", runtime.GOARCH, ErrUnsupported)
	}
	return a, nil
}

// Options adjusts the filter. The zero value is the default policy.
type Options struct {
	// AllowPtrace lifts the denial of ptrace, process_vm_readv,
	// process_vm_writev and pidfd_getfd, for debugging inside the sandbox
	// (exec.sandbox.allow_ptrace).
	AllowPtrace bool
}

// Errno values returned by denied calls. They are the same on every
// supported architecture (the generic and x86 tables agree; the linux test
// checks them against x/sys/unix).
const (
	errnoEPERM  = 1
	errnoENOSYS = 38
)

// Argument values the filter compares against. Values are compared on the
// low 32 bits of the argument: each of these kernel parameters is an int or
// unsigned int (the kernel truncates the register), or, for clone flags, a
// word whose CLONE_NEWUSER bit lies in the low half.
const (
	afUnix       = 1          // AF_UNIX (AF_LOCAL)
	afInet       = 2          // AF_INET
	afInet6      = 10         // AF_INET6
	afNetlink    = 16         // AF_NETLINK
	netlinkRoute = 0          // NETLINK_ROUTE
	tiocsti      = 0x5412     // TIOCSTI
	tioclinux    = 0x541c     // TIOCLINUX
	cloneNewUser = 0x10000000 // CLONE_NEWUSER
	perLinux     = 0          // PER_LINUX
	perQuery     = 0xffffffff // personality(0xffffffff) only reads the persona
)

// argTest says how a rule looks at an argument.
type argTest int

const (
	always  argTest = iota // no argument test: the syscall is always denied
	anyOf                  // denied when the argument equals one of values
	bitsSet                // denied when the argument has any bit of values[0]
	noneOf                 // denied unless the argument equals one of values
)

// An argPair allows value in the rule's argument when args[arg] is also.
type argPair struct {
	value uint32
	arg   int
	also  uint32
}

// A rule denies a group of syscalls for one reason.
type rule struct {
	syscalls []string
	test     argTest
	arg      int      // index into seccomp_data.args; unused when test is always
	values   []uint32 // see argTest
	// unlessWith, for noneOf, allows one more value of the argument when
	// another argument has a given value.
	unlessWith *argPair
	what       string // the values as written in C, for Describe
	errno      uint32
	ptrace     bool // lifted by Options.AllowPtrace
	why        string
}

// rules is the denylist. A syscall appears in at most one rule; names missing
// on an architecture are marked in its table, not here.
var rules = []rule{
	{
		syscalls: []string{"socket"}, test: noneOf, arg: 0, values: []uint32{afInet, afInet6},
		unlessWith: &argPair{value: afNetlink, arg: 2, also: netlinkRoute},
		what:       "AF_INET or AF_INET6, or AF_NETLINK with args[2] NETLINK_ROUTE",
		errno:      errnoEPERM,
		// socketpair(2) stays allowed: it returns an already connected pair
		// with no name, so it reaches nothing outside the process tree, and
		// many programs use it for plain IPC.
		why: "the sandbox's network is its own loopback and the egress bridge; every other address family reaches around it: " +
			"AF_UNIX host services (container engines, ssh-agent, D-Bus) through any socket file visible in the sandbox, which a read-only bind does not stop; " +
			"AF_VSOCK the hypervisor's services, which no network namespace separates; AF_PACKET, AF_ALG, the other netlink protocols (uevents and audit are not namespaced) and the rest kernel interfaces no command needs. " +
			"NETLINK_ROUTE stays: it answers for the sandbox's own network namespace, and getifaddrs (Node's os.networkInterfaces, ip addr) and getaddrinfo use it. " +
			"socketpair(2) stays allowed: it creates no path to anything",
	},
	{
		syscalls: []string{"io_uring_setup", "io_uring_enter", "io_uring_register"}, test: always,
		errno: errnoEPERM,
		why:   "io_uring performs I/O (open, connect, …) from kernel workers that seccomp never sees, and is a large kernel attack surface",
	},
	{
		syscalls: []string{"bpf"}, test: always, errno: errnoEPERM,
		why: "eBPF programs and maps expose the verifier and JIT, a frequent privilege-escalation path",
	},
	{
		syscalls: []string{"userfaultfd"}, test: always, errno: errnoEPERM,
		why: "userfaultfd lets a process stall kernel page faults at will, a standard tool for winning kernel races",
	},
	{
		syscalls: []string{"keyctl", "add_key", "request_key"}, test: always, errno: errnoEPERM,
		why: "kernel keyrings are not namespaced: session and user keyrings can hold the host user's secrets",
	},
	{
		syscalls: []string{"perf_event_open"}, test: always, errno: errnoEPERM,
		why: "performance events expose kernel and hardware state (side channels) and have a long CVE history",
	},
	{
		syscalls: []string{"init_module", "finit_module", "delete_module"}, test: always, errno: errnoEPERM,
		why: "loading or unloading kernel modules changes the host kernel",
	},
	{
		syscalls: []string{"kexec_load", "kexec_file_load"}, test: always, errno: errnoEPERM,
		why: "kexec replaces the running kernel",
	},
	{
		syscalls: []string{"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd"}, test: always,
		errno: errnoEPERM, ptrace: true,
		why: "these read or change other processes (memory, registers, file descriptors), including sandbox-init's network bridge, which runs outside this filter; lifted by allow_ptrace",
	},
	{
		syscalls: []string{"ioctl"}, test: anyOf, arg: 1, values: []uint32{tiocsti, tioclinux}, what: "TIOCSTI or TIOCLINUX",
		errno: errnoEPERM,
		why:   "TIOCSTI (and TIOCLINUX's paste on a virtual console) push bytes into a terminal's input queue: a command could type into the user's shell after the sandbox exits",
	},
	{
		// clone's flags are args[0] on amd64 and arm64 (only s390 swaps the
		// first two arguments, and it is not supported here).
		syscalls: []string{"clone", "unshare"}, test: bitsSet, arg: 0, values: []uint32{cloneNewUser}, what: "CLONE_NEWUSER",
		errno: errnoEPERM,
		why:   "a new user namespace hands the process every capability inside it, opening kernel code (mounts, netfilter, …) meant for root",
	},
	{
		syscalls: []string{"clone3"}, test: always, errno: errnoENOSYS,
		// clone3 passes its flags in a struct behind a pointer, which seccomp
		// cannot read, so CLONE_NEWUSER could not be filtered. ENOSYS
		// (rather than EPERM) reads as "kernel too old": glibc 2.34+ and
		// other runtimes then fall back to clone(2), which is filtered above.
		why: "its flags sit behind a pointer seccomp cannot read; ENOSYS makes glibc fall back to clone(2), which is filtered",
	},
	{
		syscalls: []string{"setns"}, test: always, errno: errnoEPERM,
		why: "joining other namespaces (through /proc/<pid>/ns or a pidfd) would step out of the sandbox's",
	},
	{
		syscalls: []string{
			"mount", "umount2", "pivot_root",
			"open_tree", "open_tree_attr", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "mount_setattr",
		},
		test: always, errno: errnoEPERM,
		why: "changing the mount table could uncover hidden paths or make read-only binds writable",
	},
	{
		syscalls: []string{"open_by_handle_at", "name_to_handle_at"}, test: always, errno: errnoEPERM,
		why: "file handles open files without a path, bypassing the mount-based view (the \"shocker\" container escape)",
	},
	{
		syscalls: []string{
			"acct", "swapon", "swapoff", "reboot", "syslog", "quotactl", "quotactl_fd",
			"lookup_dcookie", "iopl", "ioperm", "uselib", "vhangup",
		},
		test: always, errno: errnoEPERM,
		why: "host administration no command needs: process accounting, swap, reboot, the kernel log, quotas, raw port I/O, the obsolete a.out loader, terminal hangup",
	},
	{
		syscalls: []string{"clock_settime", "settimeofday", "adjtimex", "clock_adjtime"}, test: always, errno: errnoEPERM,
		why: "the system clock is shared with the host",
	},
	{
		syscalls: []string{"personality"}, test: noneOf, arg: 0, values: []uint32{perLinux, perQuery}, what: "PER_LINUX or 0xffffffff (query)",
		errno: errnoEPERM,
		why:   "persona flags such as READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE switch off exploit mitigations for programs exec'd later",
	},
}

// Describe lists, one line each, what the filter built with opts refuses and
// why, for `gatehouse doctor` and the docs. Syscalls that do not exist on an
// architecture are listed anyway; they simply never match there.
func Describe(opts Options) []string {
	lines := []string{
		"any syscall made through a non-native ABI (i386 int 0x80 or x32 on amd64, AArch32 on arm64): process killed, since the denylist is keyed by native syscall numbers",
	}
	for _, r := range rules {
		if r.ptrace && opts.AllowPtrace {
			continue
		}
		var b strings.Builder
		b.WriteString(strings.Join(r.syscalls, ", "))
		switch r.test {
		case anyOf:
			fmt.Fprintf(&b, " when args[%d] is %s", r.arg, r.what)
		case bitsSet:
			fmt.Fprintf(&b, " when args[%d] has %s", r.arg, r.what)
		case noneOf:
			fmt.Fprintf(&b, " unless args[%d] is %s", r.arg, r.what)
		}
		fmt.Fprintf(&b, ": %s: %s", errnoName(r.errno), r.why)
		lines = append(lines, b.String())
	}
	return lines
}

func errnoName(e uint32) string {
	switch e {
	case errnoEPERM:
		return "EPERM"
	case errnoENOSYS:
		return "ENOSYS"
	}
	return fmt.Sprintf("errno %d", e)
}
