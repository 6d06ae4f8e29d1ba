package sandboxinit

// "session-net" holds an agent session's network namespace: bwrap starts
// it in a new user and network namespace (loopback only), and the
// service joins the session's sandboxes to both while it runs. It runs no
// command of the agent's. Its one other duty is the person's port
// forwards: the service hands it a connection it accepted on the host's
// loopback and the port to reach inside, and it carries the bytes between
// the two.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// SessionNetForward is one message on the session holder's socket: the
// port inside the session (big-endian), with the host connection as the
// message's one descriptor (SCM_RIGHTS). The same message without a
// descriptor ends every connection carried to that port (the person
// closed the forward); the holder answers it with SessionNetEnded once
// they are shut down.
const SessionNetForward = 2

// SessionNetEnded is the one byte the holder sends when the connections
// carried to a port are shut down: nothing more reaches their clients.
const SessionNetEnded = 'e'

// SessionNetReady is the one byte the holder sends first: its namespaces
// are ready to be joined. The message carries, when the holder could make
// one, a socket-diagnostics netlink socket (NETLINK_SOCK_DIAG) made in the
// session's network namespace: it answers there, so that the service
// lists what listens in the session from a dump of the listening sockets
// alone, where /proc/PID/net/tcp walks the host's whole table of
// connections (a quarter of a million buckets on a machine of 24 GiB) on
// every read.
const SessionNetReady = 'r'

// SessionNet is "session-net": descriptor 3 is a unix socket
// (SOCK_SEQPACKET) to the service. It returns when the service closes it.
func SessionNet(args []string) int {
	unix.CloseOnExec(3)
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "gatehouse: session-net: %v\n", err)
		return 126
	}
	if _, err := unix.GetsockoptInt(3, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse: session-net is started by gatehouse only")
		return 126
	}
	// Ready: bwrap runs this program once the namespaces are made and
	// their uid and gid maps written. Until then a process joining the
	// user namespace would find no map.
	var rights []byte
	diag, derr := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if derr == nil {
		rights = unix.UnixRights(diag)
	}
	err := unix.Sendmsg(3, []byte{SessionNetReady}, rights, nil, 0)
	if derr == nil {
		unix.Close(diag) // the service holds it now
	}
	if err != nil {
		return 126
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	live := &carried{by: map[int]map[*os.File]bool{}}
	defer live.endAll()
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(3, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			return 0
		}
		fds := ReceivedFDs(oob[:oobn])
		if n != SessionNetForward || len(fds) > 1 {
			for _, fd := range fds {
				unix.Close(fd)
			}
			continue
		}
		port := int(binary.BigEndian.Uint16(buf[:2]))
		if len(fds) == 0 {
			live.end(port)
			if err := unix.Send(3, []byte{SessionNetEnded}, 0); err != nil {
				return 0
			}
			continue
		}
		host := os.NewFile(uintptr(fds[0]), "forward")
		if !live.add(port, host) {
			host.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer host.Close()
			defer live.remove(port, host)
			forward(host, port)
		}()
	}
}

// carried are the host connections being carried, by port.
type carried struct {
	mu    sync.Mutex
	by    map[int]map[*os.File]bool
	ended bool
}

func (c *carried) add(port int, f *os.File) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended {
		return false
	}
	if c.by[port] == nil {
		c.by[port] = map[*os.File]bool{}
	}
	c.by[port][f] = true
	return true
}

func (c *carried) remove(port int, f *os.File) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.by[port], f)
}

// end shuts down every connection carried to port: both directions end,
// in this process and in the host's client.
func (c *carried) end(port int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for f := range c.by[port] {
		// Through the raw descriptor: Fd would make the socket blocking
		// for the copy's descriptor too (one open file).
		if rc, err := f.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
		}
	}
}

func (c *carried) endAll() {
	c.mu.Lock()
	ports := make([]int, 0, len(c.by))
	for p := range c.by {
		ports = append(ports, p)
	}
	c.ended = true
	c.mu.Unlock()
	for _, p := range ports {
		c.end(p)
	}
}

// ReceivedFDs returns the descriptors of a message's SCM_RIGHTS.
func ReceivedFDs(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if got, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// forward connects host (a connection the person's client made to the
// host's loopback) to port on the session's loopback, IPv4 first, and
// copies both ways until both ends are done. A port nothing listens on
// closes it at once. The caller closes host.
func forward(host *os.File, port int) {
	hc, err := net.FileConn(host)
	if err != nil {
		return
	}
	defer hc.Close()
	var in net.Conn
	for _, addr := range []string{"127.0.0.1", "::1"} {
		if in, err = net.DialTimeout("tcp", net.JoinHostPort(addr, strconv.Itoa(port)), 5*time.Second); err == nil {
			break
		}
	}
	if in == nil {
		return
	}
	defer in.Close()
	splice(hc, in)
}

// splice copies a to b and b to a until both directions end; each end's
// write side is closed when its reader is done, so that a half-close
// reaches the other side.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	half := func(dst, src net.Conn) {
		_, err := io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok && !errors.Is(err, net.ErrClosed) {
			cw.CloseWrite()
		} else {
			dst.Close()
		}
		done <- struct{}{}
	}
	go half(a, b)
	go half(b, a)
	<-done
	<-done
}

func init() { Stages["session-net"] = SessionNet }
