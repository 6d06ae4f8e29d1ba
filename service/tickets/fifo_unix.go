//go:build unix

package tickets

import (
	"context"
	"errors"
	"os"
	"path/filepath"
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

// OpenIn opens the ticket's in-FIFO for reading. It blocks until a relay
// (or Wake) opens it for writing.
func OpenIn(dir, name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, InName(name)), os.O_RDONLY, 0)
}

// Wake releases an OpenIn waiting for a relay that will not come: the
// reader then sees end of file with no request. It waits up to a second
// for that reader to reach its open; a FIFO already gone needs no waking.
func Wake(dir, name string) {
	path := filepath.Join(dir, InName(name))
	for i := 0; i < 1000; i++ {
		f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err == nil {
			f.Close()
			return
		}
		if !errors.Is(err, syscall.ENXIO) {
			return
		}
		time.Sleep(time.Millisecond)
	}
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
