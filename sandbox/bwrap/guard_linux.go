package bwrap

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A guard moves aside, while the sandbox runs, what a command creates at a
// watched write-deny path (HostSurvey.Watch): it watches the directory each
// path lies in with inotify and renames an entry with a watched name as
// soon as it appears, so that a host program (an editor, git, an agent)
// has only the guard's latency to read it. inotify watches inodes, so the
// command's creations through the sandbox's bind mounts are seen. Sweep
// still looks afterwards, for what the guard missed (a queue overflow, a
// directory it could not watch, an entry made as it stopped).
type guard struct {
	f      *os.File // the inotify instance; a read deadline ends loop
	suffix string
	dirs   map[int32]*guardDir // by watch descriptor
	done   chan struct{}
	moved  []string // written by loop only; read after done
}

// guardDir is one watched directory: a descriptor of the directory as it
// was when the plan was made (HostSurvey.watchDirs reaches it from its
// root without following a link), which the watch is put on and the
// renames are made relative to: a command that replaces a directory on
// the way with a symlink cannot send them elsewhere. The names watched
// are single components.
type guardDir struct {
	path  string
	fd    dirFD
	names map[string]bool
}

// guardMask is what the guard watches for: an entry created in, or moved
// into, the directory. Overflow (IN_Q_OVERFLOW) is reported regardless.
const guardMask = unix.IN_CREATE | unix.IN_MOVED_TO

// startGuard starts a guard over dirs (it takes their descriptors), naming
// what it moves with suffix. It returns nil and the error when inotify is
// not available (limits on instances or watches); the caller goes on
// without it and Sweep alone moves things aside after the command. A
// directory that cannot be watched is left to Sweep the same way.
func startGuard(dirs []watchDir, suffix string) (*guard, error) {
	if len(dirs) == 0 {
		return nil, nil
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		for _, w := range dirs {
			w.fd.close()
		}
		return nil, err
	}
	g := &guard{suffix: suffix, dirs: map[int32]*guardDir{}, done: make(chan struct{})}
	for _, w := range dirs {
		// The watch goes on the directory the descriptor holds, through
		// its /proc/self/fd entry, never on whatever the path names by
		// now; without /proc the directory is left to Sweep.
		wd, err := unix.InotifyAddWatch(fd, "/proc/self/fd/"+strconv.Itoa(int(w.fd)), guardMask|unix.IN_ONLYDIR)
		if err != nil {
			w.fd.close()
			continue
		}
		d := g.dirs[int32(wd)]
		if d == nil {
			d = &guardDir{path: w.path, fd: w.fd, names: map[string]bool{}}
			g.dirs[int32(wd)] = d
		} else {
			w.fd.close() // the same directory by another path
		}
		for _, name := range w.names {
			if validName(name) {
				d.names[name] = true
			}
		}
	}
	if len(g.dirs) == 0 {
		unix.Close(fd)
		return nil, errors.New("no directory could be watched")
	}
	// A non-blocking descriptor makes a pollable File: Read waits in the
	// runtime's poller, and a deadline (or Close) wakes it.
	g.f = os.NewFile(uintptr(fd), "inotify")
	go g.loop()
	return g, nil
}

func (g *guard) loop() {
	defer close(g.done)
	buf := make([]byte, 64<<10)
	for {
		n, err := g.f.Read(buf)
		if err != nil {
			return // woken or closed by stop
		}
		for off := 0; off+unix.SizeofInotifyEvent <= n; {
			ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
			nameAt := off + unix.SizeofInotifyEvent
			off = nameAt + int(ev.Len)
			if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				g.sweep()
				continue
			}
			d := g.dirs[ev.Wd]
			if d == nil || ev.Len == 0 || off > n {
				continue
			}
			name := cstring(buf[nameAt:off])
			if d.names[name] {
				g.move(d, name)
			}
		}
	}
}

// sweep moves aside every watched name present: after an overflow the
// events that were lost are unknown.
func (g *guard) sweep() {
	for _, d := range g.dirs {
		for name := range d.names {
			g.move(d, name)
		}
	}
}

func (g *guard) move(d *guardDir, name string) {
	dst, err := renameAside(d.fd, name, g.suffix)
	if err == nil {
		g.moved = append(g.moved, filepath.Join(d.path, dst))
	}
}

// stop ends the guard and returns what it moved aside. Call it once the
// sandbox is gone, before Sweep. A nil guard moved nothing. handOff, when
// not "", is the init program: the process exits soon, and the inotify
// instance goes to a "linger" process of it (handOff below).
func (g *guard) stop(handOff string) []string {
	if g == nil {
		return nil
	}
	// Closing an inotify instance waits for the kernel to retire its
	// watches (an RCU grace period: several milliseconds), so the loop is
	// woken by a deadline instead, and the instance is closed off the
	// execution's path once the loop has ended: after stop returns
	// nothing is moved. A process that exits soon after still waits for
	// that grace period in its exit (the kernel closes its files before
	// the parent can reap it), unless another process holds the instance.
	if err := g.f.SetReadDeadline(time.Now()); err != nil {
		g.f.Close()
		<-g.done
	} else {
		<-g.done
		if handOff == "" || !g.handOff(handOff) {
			go g.f.Close()
		}
	}
	for _, d := range g.dirs {
		d.fd.close()
	}
	return g.moved
}

// handOff gives the inotify instance to "init linger", which holds it
// until this process has let go of it, and reports whether it did: this
// process's close is then not the last, and does not wait. The loop has
// ended; nothing is read from the instance again.
func (g *guard) handOff(init string) bool {
	r, w, err := os.Pipe()
	if err != nil {
		return false
	}
	defer w.Close() // end of file: the linger process lets go and exits
	cmd := exec.Command(init, "linger")
	cmd.ExtraFiles = []*os.File{r, g.f} // fd 3, fd 4
	// Its own session: a terminal's ^C to this process's group must not
	// end it before this process has let go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	r.Close()
	if err != nil {
		return false
	}
	go cmd.Wait() // reaped here while this process lives
	g.f.Close()
	return true
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
