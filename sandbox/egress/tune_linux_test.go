package egress

import (
	"net"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func congestion(t *testing.T, c net.Conn) string {
	t.Helper()
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var name string
	var gerr error
	rc.Control(func(fd uintptr) {
		name, gerr = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return strings.TrimRight(name, "\x00")
}

// A tunnel's connections to loopback peers send with reno.
func TestTuneLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	tuneLoopback(c)
	if got := congestion(t, c); got != loopbackCongestion {
		t.Errorf("congestion control %q, want %q", got, loopbackCongestion)
	}
	// Anything but TCP is left alone.
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	tuneLoopback(a)
}
