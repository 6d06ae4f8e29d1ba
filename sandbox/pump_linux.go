package sandbox

import (
	"os"

	"golang.org/x/sys/unix"
)

// growPipe raises the pipe's buffer to 1 MiB (the unprivileged maximum by
// default) so a fast writer and the pump block each other less often. A
// failure leaves the default size.
func growPipe(f *os.File) {
	unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, 1<<20)
}

// blockingPipe returns a pipe whose read end is in blocking mode: the pump
// goroutine then reads with plain blocking syscalls instead of going through
// the runtime's poller on every chunk, which costs little CPU when output is
// heavy.
func blockingPipe() (r, w *os.File, err error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	return os.NewFile(uintptr(p[0]), "|0"), os.NewFile(uintptr(p[1]), "|1"), nil
}
