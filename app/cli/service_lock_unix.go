//go:build unix

package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// The service's lock decides who runs: 'gatehouse serve' takes it before
// anything else and holds it for as long as it runs, however it was
// started (systemd --user, launchd, a background process, a terminal). It
// is a POSIX record lock (fcntl F_SETLK) on the whole file, so that
// another process can ask who holds it (F_GETLK) without taking it, and
// the kernel drops it when the holder ends, even killed: a lock is never
// stale. The holder must never open the file a second time (closing any
// of its descriptors of the file would release the lock).

// takeServiceLock takes the lock on file (made 0600 when missing), held
// until release is called or the process ends. When another process holds
// it, the error is an *errServiceLocked naming it.
func takeServiceLock(file string) (release func(), err error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the service's lock: %w", err)
	}
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk); err != nil {
		f.Close()
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
			_, pid, _ := serviceLockHolder(file)
			return nil, &errServiceLocked{file: file, pid: pid}
		}
		return nil, fmt.Errorf("taking the service's lock %s: %w", file, err)
	}
	return func() { f.Close() }, nil
}

// serviceLockHolder reports whether a process holds file's lock, and its
// pid (0 when it runs in another pid namespace). A missing file is held by
// no one. The caller must not hold the lock itself.
func serviceLockHolder(file string) (held bool, pid int, err error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: io.SeekStart}
	if err := unix.FcntlFlock(f.Fd(), unix.F_GETLK, &lk); err != nil {
		return false, 0, fmt.Errorf("asking who holds %s: %w", file, err)
	}
	if lk.Type == unix.F_UNLCK {
		return false, 0, nil
	}
	return true, int(lk.Pid), nil
}

// detached starts a process in a session of its own, so that it outlives
// the terminal (and the process group) of whoever started it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// terminate sends SIGTERM to pid: the service's stop.
func terminate(pid int) error { return unix.Kill(pid, unix.SIGTERM) }

// An errServiceLocked means another service holds the lock.
type errServiceLocked struct {
	file string
	pid  int
}

func (e *errServiceLocked) Error() string {
	if e.pid > 0 {
		return fmt.Sprintf("another gatehouse service runs for this user (pid %d holds %s)", e.pid, e.file)
	}
	return fmt.Sprintf("another gatehouse service runs for this user (it holds %s)", e.file)
}
