package escape

import "golang.org/x/sys/unix"

// int80Getpid calls getpid (20 in the i386 table) through int 0x80, the
// i386 syscall ABI, which a 64-bit process can still use where the kernel
// has IA32 emulation. It returns the raw result (the pid, or -errno).
// Implemented in abi_linux_amd64.s.
func int80Getpid() int32

// probeInt80 returns only if the i386 ABI call was let through; under the
// filter the kernel kills the process with SIGSYS first. (On a kernel booted
// with ia32_emulation=false the instruction faults and the Go runtime dies of
// SIGSEGV instead.)
func probeInt80() error {
	if r := int80Getpid(); r < 0 {
		return unix.Errno(-r)
	}
	return nil
}

// probeX32 calls getpid with the x32 bit set in the syscall number. Under
// the filter the process is killed by SIGSYS; without it, the kernel runs
// the call, or answers ENOSYS where x32 is not built in or is disabled
// (Debian: syscall.x32=n).
func probeX32() error {
	const x32SyscallBit = 0x40000000
	if _, _, e := unix.Syscall(x32SyscallBit|unix.SYS_GETPID, 0, 0, 0); e != 0 {
		return e
	}
	return nil
}
