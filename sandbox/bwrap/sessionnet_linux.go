package bwrap

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
	"golang.org/x/sys/unix"
)

// A SessionNet is a network namespace held for one agent session: bwrap
// started the init's session-net stage in a new user and network
// namespace (loopback only), and the session's sandboxes join both
// through nsenter (Spec.Network). It lives until Close or until the
// service that started it exits.
type SessionNet struct {
	cmd     *exec.Cmd
	nsenter string   // util-linux's nsenter, which joins them
	pid     int      // the holder's process, in the namespaces
	user    *os.File // its namespace files, held open
	netns   *os.File
	ctl     *os.File  // the holder's socket (sandboxinit.SessionNet)
	diag    *sockDiag // the holder's diagnostics socket; nil: /proc is read
	exited  chan struct{}
	mu      sync.Mutex // serialises sends on ctl and its close
	closed  bool       // ctl is closed (under mu)
	once    sync.Once
}

// ErrNoNsenter says util-linux's nsenter is missing: no session network
// can be joined.
var ErrNoNsenter = errors.New("nsenter not found; install util-linux")

// errSessionNetClosed says the holder was closed.
var errSessionNetClosed = errors.New("the session network has closed")

// StartSessionNet starts a session's network. Joining it needs
// util-linux's nsenter: it is looked up here (ErrNoNsenter), so that a
// session without it gets no network rather than executions that fail.
func StartSessionNet(bwrapPath, initPath string) (*SessionNet, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, ErrNoNsenter
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer infoR.Close()
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		infoW.Close()
		return nil, fmt.Errorf("creating the session network's socket: %w", err)
	}
	// Ours is non-blocking, so that reads take a deadline (waitReady).
	if err := unix.SetNonblock(pair[0], true); err != nil {
		unix.Close(pair[0])
		unix.Close(pair[1])
		infoW.Close()
		return nil, err
	}
	ctl, theirs := os.NewFile(uintptr(pair[0]), "session-net"), os.NewFile(uintptr(pair[1]), "session-net")
	cmd := exec.Command(bwrapPath,
		"--unshare-user", "--unshare-net", "--unshare-ipc", "--unshare-uts",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/", "/", "--info-fd", "4",
		"--", initPath, "session-net")
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{theirs, infoW}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Start()
	theirs.Close()
	infoW.Close()
	if err != nil {
		ctl.Close()
		return nil, fmt.Errorf("starting bwrap for the session network: %w", err)
	}
	n := &SessionNet{cmd: cmd, nsenter: nsenter, ctl: ctl, exited: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(n.exited)
	}()
	fail := func(err error) (*SessionNet, error) {
		n.Close()
		if s := strings.TrimSpace(stderr.String()); s != "" {
			err = fmt.Errorf("%w: %s", err, s)
		}
		return nil, err
	}
	var info struct {
		Pid int `json:"child-pid"`
	}
	if err := json.NewDecoder(infoR).Decode(&info); err != nil || info.Pid <= 0 {
		<-n.exited
		return fail(errors.New("bwrap did not start the session network"))
	}
	n.pid = info.Pid
	// bwrap reports the child before it has written the user
	// namespace's maps; the holder says when it runs, after them.
	if err := n.waitReady(); err != nil {
		return fail(err)
	}
	// The namespace files are opened once and held: a later execution
	// joins these namespaces even if a process with the holder's pid
	// came to be another.
	if n.user, err = os.Open(fmt.Sprintf("/proc/%d/ns/user", n.pid)); err != nil {
		return fail(err)
	}
	if n.netns, err = os.Open(fmt.Sprintf("/proc/%d/ns/net", n.pid)); err != nil {
		return fail(err)
	}
	// The holder must still be bwrap's child now that its files are
	// open: otherwise they may be another process's.
	if !n.Alive() {
		return fail(errors.New("the session network ended as it started"))
	}
	return n, nil
}

// waitReady waits for the holder's first message (sandboxinit's
// SessionNetReady), for at most 10 s, and keeps the diagnostics socket it
// carries.
func (n *SessionNet) waitReady() error {
	n.ctl.SetReadDeadline(time.Now().Add(10 * time.Second))
	defer n.ctl.SetReadDeadline(time.Time{})
	rc, err := n.ctl.SyscallConn()
	if err != nil {
		return err
	}
	b, oob := make([]byte, 8), make([]byte, unix.CmsgSpace(4))
	var k, oobn int
	var rerr error
	err = rc.Read(func(fd uintptr) bool {
		k, oobn, _, _, rerr = unix.Recvmsg(int(fd), b, oob, unix.MSG_CMSG_CLOEXEC)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	fds := sandboxinit.ReceivedFDs(oob[:oobn])
	if err != nil || k != 1 || b[0] != sandboxinit.SessionNetReady || len(fds) > 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return fmt.Errorf("the session network's holder did not start (%v)", err)
	}
	if len(fds) == 1 {
		n.diag = newSockDiag(fds[0])
	}
	return nil
}

// Network is what a Spec joining the session's network carries.
func (n *SessionNet) Network(name string) *sandbox.Network {
	return &sandbox.Network{Name: name, Nsenter: n.nsenter, User: n.user, Net: n.netns}
}

// Pid is the holder's process id.
func (n *SessionNet) Pid() int { return n.pid }

// Alive reports whether the network's holder still runs.
func (n *SessionNet) Alive() bool {
	select {
	case <-n.exited:
		return false
	default:
		return true
	}
}

// Close ends the holder; the namespace goes with the last process in it
// (executions still running keep it until they end).
func (n *SessionNet) Close() {
	n.once.Do(func() {
		n.mu.Lock()
		n.closed = true
		n.ctl.Close()
		n.mu.Unlock()
		select {
		case <-n.exited:
		case <-time.After(2 * time.Second):
			n.cmd.Process.Kill()
			<-n.exited
		}
		if n.user != nil {
			n.user.Close()
		}
		if n.netns != nil {
			n.netns.Close()
		}
		if n.diag != nil {
			n.diag.close()
		}
	})
}

// Forward hands c (a connection accepted on the host) to the holder, which
// connects it to port on the session's loopback. c is closed here.
func (n *SessionNet) Forward(c *net.TCPConn, port int) error {
	defer c.Close()
	f, err := c.File()
	if err != nil {
		return err
	}
	defer f.Close()
	msg := binary.BigEndian.AppendUint16(nil, uint16(port)) // sandboxinit.SessionNetForward bytes
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errSessionNetClosed
	}
	return n.send(msg, unix.UnixRights(int(f.Fd())))
}

// EndForwards ends every connection the holder carries to port (the
// person closed the forward: a kept-alive connection must not outlive it).
// It returns once the holder says they are shut down (SessionNetEnded),
// or after 5 s with an error.
func (n *SessionNet) EndForwards(port int) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errSessionNetClosed
	}
	if err := n.send(binary.BigEndian.AppendUint16(nil, uint16(port)), nil); err != nil {
		return err
	}
	n.ctl.SetReadDeadline(time.Now().Add(5 * time.Second))
	defer n.ctl.SetReadDeadline(time.Time{})
	b := make([]byte, 8)
	k, err := n.ctl.Read(b)
	if err != nil || k != 1 || b[0] != sandboxinit.SessionNetEnded {
		return fmt.Errorf("the session network's holder did not end the forward's connections (%v)", err)
	}
	return nil
}

// send sends one message to the holder (n.mu held), waiting while its
// socket's buffer is full.
func (n *SessionNet) send(msg, oob []byte) error {
	rc, err := n.ctl.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = rc.Write(func(fd uintptr) bool {
		serr = unix.Sendmsg(int(fd), msg, oob, nil, 0)
		return serr != unix.EAGAIN
	})
	if err != nil {
		return err
	}
	return serr
}

// A Listener is a TCP socket listening in a session's network.
type Listener struct {
	Addr string // 127.0.0.1, ::1, 0.0.0.0 or ::
	Port int
}

// Listening returns the TCP sockets listening in the session's network,
// by port, then address: from the holder's diagnostics socket, or from
// /proc when there is none or it fails.
func (n *SessionNet) Listening() ([]Listener, error) {
	if !n.Alive() {
		return nil, errors.New("the session network has ended")
	}
	if n.diag != nil {
		if out, err := n.diag.listening(); err == nil {
			return sortListeners(out), nil
		}
	}
	return n.procListening()
}

// procListening is Listening from /proc/PID/net/tcp and tcp6.
func (n *SessionNet) procListening() ([]Listener, error) {
	var out []Listener
	for _, f := range []string{"tcp", "tcp6"} {
		ls, err := readListening(fmt.Sprintf("/proc/%d/net/%s", n.pid, f))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		out = append(out, ls...)
	}
	return sortListeners(out), nil
}

// sortListeners orders listeners by port, then address, without repeats.
func sortListeners(out []Listener) []Listener {
	slices.SortFunc(out, func(a, b Listener) int {
		if a.Port != b.Port {
			return a.Port - b.Port
		}
		return strings.Compare(a.Addr, b.Addr)
	})
	return slices.Compact(out)
}

// readListening parses /proc/net/tcp or tcp6 for sockets in state LISTEN
// (0A).
func readListening(path string) ([]Listener, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Listener
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 4 || fields[3] != "0A" {
			continue
		}
		hexAddr, hexPort, ok := strings.Cut(fields[1], ":")
		if !ok {
			continue
		}
		port, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			continue
		}
		out = append(out, Listener{Addr: procAddr(hexAddr), Port: int(port)})
	}
	return out, sc.Err()
}

// procAddr turns /proc/net/tcp's address (32-bit words in host byte
// order, as hex) into text.
func procAddr(h string) string {
	b := make([]byte, 0, 16)
	for i := 0; i+8 <= len(h); i += 8 {
		w, err := strconv.ParseUint(h[i:i+8], 16, 32)
		if err != nil {
			return h
		}
		b = binary.NativeEndian.AppendUint32(b, uint32(w))
	}
	ip := net.IP(b)
	if len(b) != net.IPv4len && len(b) != net.IPv6len {
		return h
	}
	if v4 := ip.To4(); v4 != nil && len(b) == net.IPv4len {
		return v4.String()
	}
	return ip.String()
}
