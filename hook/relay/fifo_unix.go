//go:build unix

package relay

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

var errNoReader = errors.New("no reader on the FIFO")

// openIn opens the in-FIFO for writing without waiting: when the service
// is not reading it, that is errNoReader at once.
func openIn(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return nil, errNoReader
	}
	return f, err
}

// openOut opens the out-FIFO for reading, waiting for the service to open
// it for writing.
func openOut(ctx context.Context, path string, timeout time.Duration) (*os.File, error) {
	type res struct {
		f   *os.File
		err error
	}
	c := make(chan res, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_RDONLY, 0)
		c <- res{f, err}
	}()
	select {
	case r := <-c:
		return r.f, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(timeout):
		return nil, errors.New("timed out")
	}
}
