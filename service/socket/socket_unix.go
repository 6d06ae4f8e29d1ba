//go:build unix

package socket

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"syscall"
)

var errNotUnix = errors.New("not a unix socket connection")

func listen(path string) (net.Listener, error) {
	l, err := net.Listen("unix", path)
	if err != nil {
		return nil, err
	}
	l.(*net.UnixListener).SetUnlinkOnClose(true)
	return l, nil
}

func dial(ctx context.Context, d *net.Dialer, path string) (net.Conn, error) {
	return d.DialContext(ctx, "unix", path)
}

func owner(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// PeerUID returns the uid of the process at the other end of c, a unix
// socket connection.
func PeerUID(c net.Conn) (int, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return -1, errNotUnix
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var perr error
	if err := raw.Control(func(fd uintptr) { uid, perr = peerUID(int(fd)) }); err != nil {
		return -1, err
	}
	return uid, perr
}
