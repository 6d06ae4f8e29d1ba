//go:build unix

package tickets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The service side of a relay's FIFOs. For each ticket the service makes
// NAME.in (relay → service: the ticket, then nothing until the relay
// exits, so end of file means the relay is gone) and NAME.out (service →
// relay: the frame stream), both 0600. Opening a FIFO needs no write
// access to the file system, which is why a relay inside Claude Code's
// read-only, socket-less sandbox can use them.

// MakeFIFOs creates the ticket's FIFOs in dir.
func MakeFIFOs(dir, name string) error {
	in, out := filepath.Join(dir, InName(name)), filepath.Join(dir, OutName(name))
	if err := unix.Mkfifo(in, 0o600); err != nil {
		return &os.PathError{Op: "mkfifo", Path: in, Err: err}
	}
	if err := unix.Mkfifo(out, 0o600); err != nil {
		os.Remove(in)
		return &os.PathError{Op: "mkfifo", Path: out, Err: err}
	}
	return nil
}

// An In is the service's end of a ticket's in-FIFO. It is opened when
// the ticket is issued and never blocks a thread while it waits: the
// read end is opened non-blocking, on the runtime's poller, and the
// service holds a write end of its own ("keep") so that a read waits for
// a relay instead of seeing end of file before any relay came. Release
// drops that write end: a reader with no relay then sees end of file,
// and once a relay has written its request, end of file means the relay
// is gone.
//
// On macOS the read end is not put on the poller (kqueue does not report
// a FIFO's last writer closing) and its reads block a thread; the limit
// on pending tickets bounds them.
type In struct {
	f    *os.File
	mu   sync.Mutex
	keep *os.File
}

// OpenIn opens the ticket's in-FIFO for reading, at once.
func OpenIn(dir, name string) (*In, error) {
	path := filepath.Join(dir, InName(name))
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if runtime.GOOS == "darwin" {
		if err := setBlocking(f); err != nil {
			f.Close()
			return nil, err
		}
	}
	keep, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &In{f: f, keep: keep}, nil
}

func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// Read reads what relays wrote into the FIFO.
func (in *In) Read(p []byte) (int, error) { return in.f.Read(p) }

// SetReadDeadline bounds reads where the FIFO is on the poller; elsewhere
// it does nothing.
func (in *In) SetReadDeadline(t time.Time) { in.f.SetReadDeadline(t) }

// Release drops the service's own write end. A reader waiting with no
// relay connected then sees end of file (the ticket expired, was
// redeemed over the socket, or the service is stopping); after a relay's
// request, it makes end of file mean that the relay is gone. It may be
// called more than once, from any goroutine.
func (in *In) Release() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.keep != nil {
		in.keep.Close()
		in.keep = nil
	}
}

// Close releases and closes the FIFO.
func (in *In) Close() error {
	in.Release()
	return in.f.Close()
}

// OpenOut opens the ticket's out-FIFO for writing, waiting until the
// relay has opened it for reading, ctx is done, or timeout passes.
func OpenOut(ctx context.Context, dir, name string, timeout time.Duration) (*os.File, error) {
	path := filepath.Join(dir, OutName(name))
	deadline := time.Now().Add(timeout)
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.ENXIO) || time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
	}
}

// Retire removes the ticket's FIFOs and leaves a tombstone saying why
// (GoneUsed, GoneExpired), so that a replaying relay can say which.
func Retire(dir, name, why string) {
	os.Remove(filepath.Join(dir, InName(name)))
	os.Remove(filepath.Join(dir, OutName(name)))
	if why != "" {
		os.WriteFile(filepath.Join(dir, GoneName(name)), []byte(why+"\n"), 0o600)
	}
}

// Sweep removes what a ticket left in dir that is older than age (every
// entry when age is 0: at start, the FIFOs of a previous run are dead).
func Sweep(dir string, age time.Duration) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	cut := time.Now().Add(-age)
	for _, e := range ents {
		if age > 0 {
			fi, err := e.Info()
			if err != nil || fi.ModTime().After(cut) {
				continue
			}
		}
		os.Remove(filepath.Join(dir, e.Name()))
	}
}
