//go:build unix

package sandboxinit

import (
	"errors"
	"net"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox/handoff"
)

// Serve hands each connection accepted on ln to the proxy, until ln is
// closed. Connections go over one unix connection to the proxy socket,
// each as a message of one handoff.Marker byte with the accepted socket
// attached; the bridge then closes its copy, so the proxy alone holds the
// connection: the bytes go from the client to the proxy without passing
// through the sandbox's init. When the proxy cannot be reached, the
// client's connection is closed.
func (b *Bridge) Serve(ln net.Listener) error {
	var ctl *net.UnixConn
	defer func() {
		if ctl != nil {
			ctl.Close()
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(5 * time.Millisecond)
				continue
			}
			return err
		}
		for try := 0; try < 2; try++ {
			if ctl == nil {
				u, err := net.Dial("unix", b.Socket)
				if err != nil {
					break
				}
				ctl = u.(*net.UnixConn)
			}
			if err := handOver(ctl, c); err == nil {
				break
			}
			// The proxy closed this connection: dial once more.
			ctl.Close()
			ctl = nil
		}
		c.Close()
	}
}

// handOver sends c's socket over ctl.
func handOver(ctl *net.UnixConn, c net.Conn) error {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return errors.New("not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	err = rc.Control(func(fd uintptr) {
		_, _, werr = ctl.WriteMsgUnix([]byte{handoff.Marker}, syscall.UnixRights(int(fd)), nil)
	})
	if err != nil {
		return err
	}
	return werr
}
