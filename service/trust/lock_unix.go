//go:build unix

package trust

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile takes the writers' lock: an exclusive flock on path (made
// 0600 when missing), held until the returned func is called. flock locks
// belong to the open file, so two Stores of one file exclude each other
// even in one process.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
