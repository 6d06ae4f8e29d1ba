//go:build !linux

package egress

import "net"

// tuneLoopback leaves c as it is: choosing the congestion control of a
// connection is done on Linux only.
func tuneLoopback(c net.Conn) {}
