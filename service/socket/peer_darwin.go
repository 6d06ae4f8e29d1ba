package socket

import "golang.org/x/sys/unix"

// peerUID reads LOCAL_PEERCRED, which getpeereid(3) is built on.
func peerUID(fd int) (int, error) {
	cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	if err != nil {
		return -1, err
	}
	return int(cred.Uid), nil
}
