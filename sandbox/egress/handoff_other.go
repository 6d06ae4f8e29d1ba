//go:build !linux

package egress

import "net"

// readFirst reads one byte from c. Handing sockets over is Linux-only:
// nothing else is ever attached.
func readFirst(c *net.UnixConn) (byte, []int, error) {
	var b [1]byte
	for {
		n, err := c.Read(b[:])
		if err != nil {
			return 0, nil, err
		}
		if n == 1 {
			return b[0], nil, nil
		}
	}
}

func (p *Proxy) serveBridge(ctl *net.UnixConn, fds []int) {}

func closeFDs(fds []int) {}
