package egress

import (
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// readFirst reads one byte from c, with any sockets attached to it.
func readFirst(c *net.UnixConn) (byte, []int, error) {
	var b [1]byte
	oob := make([]byte, syscall.CmsgSpace(4*maxHandoffFDs))
	for {
		n, oobn, _, _, err := c.ReadMsgUnix(b[:], oob)
		fds := parseRights(oob[:oobn])
		if err != nil {
			closeFDs(fds)
			return 0, nil, err
		}
		if n == 1 {
			return b[0], fds, nil
		}
		closeFDs(fds)
	}
}

// maxHandoffFDs bounds the sockets one message may carry; the bridge sends
// one.
const maxHandoffFDs = 4

// serveBridge adopts the client sockets a bridge hands over on ctl, first
// fds, until ctl ends. Each is served like an accepted connection, within
// the bound on connections: while no slot is free, the bridge waits.
func (p *Proxy) serveBridge(ctl *net.UnixConn, fds []int) {
	ctl.SetDeadline(time.Time{})
	buf := make([]byte, 16)
	oob := make([]byte, syscall.CmsgSpace(4*maxHandoffFDs))
	for {
		for _, fd := range fds {
			p.adopt(fd)
		}
		n, oobn, _, _, err := ctl.ReadMsgUnix(buf, oob)
		fds = parseRights(oob[:oobn])
		if err != nil || n == 0 {
			closeFDs(fds)
			return
		}
		for _, b := range buf[:n] {
			if b != BridgeHandoff {
				closeFDs(fds)
				return
			}
		}
	}
}

// adopt serves the handed-over socket fd, which must be a TCP socket.
func (p *Proxy) adopt(fd int) {
	typ, err1 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err2 := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err1 != nil || err2 != nil || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		unix.Close(fd)
		return
	}
	f := os.NewFile(uintptr(fd), "bridged connection")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	p.sem <- struct{}{}
	if !p.track(c) {
		<-p.sem
		c.Close()
		return
	}
	go func() {
		defer p.wg.Done()
		defer func() { <-p.sem }()
		defer p.untrack(c)
		p.serveConn(c, func() {})
	}()
}

func parseRights(oob []byte) []int {
	if len(oob) == 0 {
		return nil
	}
	msgs, err := syscall.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if rights, err := syscall.ParseUnixRights(&m); err == nil {
			fds = append(fds, rights...)
		}
	}
	return fds
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
