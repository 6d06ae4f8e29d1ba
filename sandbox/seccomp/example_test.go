package seccomp_test

import (
	"fmt"
	"log"
	"strings"

	"golang.org/x/net/bpf"

	"github.com/gatehouse-dev/gatehouse/sandbox/seccomp"
)

// The program can be built for any supported architecture on any host. Its
// first instructions refuse every syscall ABI but the native one.
func ExampleProgram() {
	prog, err := seccomp.Program(seccomp.AMD64, seccomp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	ins, _ := bpf.Disassemble(prog)
	fmt.Println(ins[0])
	fmt.Printf("arch must be %#x (AUDIT_ARCH_X86_64)\n", ins[1].(bpf.JumpIf).Val)
	fmt.Println(ins[2])
	// Output:
	// ld [4]
	// arch must be 0xc000003e (AUDIT_ARCH_X86_64)
	// ld [0]
}

// Each line of Describe says what is denied, the errno, and why; this
// prints the first two parts.
func ExampleDescribe() {
	for _, line := range seccomp.Describe(seccomp.Options{})[1:] {
		f := strings.SplitN(line, ": ", 3)
		fmt.Printf("%s: %s\n", f[0], f[1])
	}
	// Output:
	// socket unless args[0] is AF_INET or AF_INET6, or AF_NETLINK with args[2] NETLINK_ROUTE: EPERM
	// io_uring_setup, io_uring_enter, io_uring_register: EPERM
	// bpf: EPERM
	// userfaultfd: EPERM
	// keyctl, add_key, request_key: EPERM
	// perf_event_open: EPERM
	// init_module, finit_module, delete_module: EPERM
	// kexec_load, kexec_file_load: EPERM
	// ptrace, process_vm_readv, process_vm_writev, pidfd_getfd: EPERM
	// ioctl when args[1] is TIOCSTI or TIOCLINUX: EPERM
	// clone, unshare when args[0] has CLONE_NEWUSER: EPERM
	// clone3: ENOSYS
	// setns: EPERM
	// mount, umount2, pivot_root, open_tree, open_tree_attr, move_mount, fsopen, fsconfig, fsmount, fspick, mount_setattr: EPERM
	// open_by_handle_at, name_to_handle_at: EPERM
	// acct, swapon, swapoff, reboot, syslog, quotactl, quotactl_fd, lookup_dcookie, iopl, ioperm, uselib, vhangup: EPERM
	// clock_settime, settimeofday, adjtimex, clock_adjtime: EPERM
	// personality unless args[0] is PER_LINUX or 0xffffffff (query): EPERM
}
