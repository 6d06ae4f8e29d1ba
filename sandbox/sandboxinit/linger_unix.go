//go:build unix

package sandboxinit

import (
	"io"
	"os"
)

// Linger is "linger": it holds the files it was started with (fd 4 on)
// until end of file on fd 3, then exits. A gatehouse process that exits
// right after its command (an in-process gatehouse exec) hands it what the
// kernel retires slowly on the last close: an inotify instance with
// watches waits for a grace period when it is destroyed (5–14 ms on the
// test machines), and a process's exit waits for its own files. Closed
// here, that wait is this process's, and nobody waits for it.
func Linger(args []string) int {
	f := os.NewFile(3, "hand-off")
	if _, err := f.Stat(); err != nil {
		return 2
	}
	io.Copy(io.Discard, f)
	return 0
}

func init() { Stages["linger"] = Linger }
