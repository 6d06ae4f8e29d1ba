//go:build linux || darwin

package escape

import "syscall"

func probeUnixSocket() error {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	return syscall.Close(fd)
}

func probeSocketpair() error {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		return err
	}
	syscall.Close(fds[1])
	return syscall.Close(fds[0])
}
