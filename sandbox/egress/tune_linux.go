//go:build linux

package egress

import (
	"net"

	"golang.org/x/sys/unix"
)

// loopbackCongestion is the congestion control of a tunnel's TCP
// connections whose peer is on loopback, as the bridged connections from a
// sandbox always are.
//
// On loopback there is no path to probe and no queue to keep short; a
// host default such as bbr paces its sending with timers when the
// interface has no fq queueing discipline (loopback has none), which
// there only delays bytes and wakes the reader more often. Reno sends as
// the window allows, and every process may choose it.
const loopbackCongestion = "reno"

// tuneLoopback sets loopbackCongestion on c when c is a TCP connection to
// a loopback address. It changes nothing else, and a failure leaves the
// default in place.
func tuneLoopback(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	a, ok := tc.RemoteAddr().(*net.TCPAddr)
	if !ok || !a.IP.IsLoopback() {
		return
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, loopbackCongestion)
	})
}
