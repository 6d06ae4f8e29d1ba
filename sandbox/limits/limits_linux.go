package limits

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// Detect looks for a delegated cgroup v2 this process may manage: the
// cgroup it runs in (the "0::" line of /proc/self/cgroup) below a cgroup2
// mount at /sys/fs/cgroup, writable by us (directory, cgroup.procs and
// cgroup.subtree_control), holding only us and our descendants, with
// memory and pids listed in its cgroup.controllers.
func Detect() Delegation {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return Delegation{Reason: fmt.Sprintf("reading /proc/self/cgroup: %v", err)}
	}
	return detect(host{
		root:           "/sys/fs/cgroup",
		procSelfCgroup: string(data),
		pid:            os.Getpid(),
		uid:            os.Getuid(),
		isCgroup2:      isCgroup2,
		writable:       func(p string) bool { return unix.Access(p, unix.W_OK) == nil },
		parent:         parentPID,
	})
}

// NewGroup creates the cgroup of one execution, name, below d.Path (see the
// package doc for the tree) and sets its limits: memory.max to memoryMax
// bytes with no swap, pids.max to pidsMax; zero means no limit. The first
// call moves the calling process into the service leaf. It returns an
// error wrapping sandbox.ErrUnavailable when d grants neither controller.
func (d Delegation) NewGroup(name string, memoryMax, pidsMax int64) (*Group, error) {
	return d.newGroup(osOps(killPID), name, memoryMax, pidsMax)
}

// FD returns an O_PATH directory handle of the cgroup, for
// SysProcAttr.UseCgroupFD / CgroupFD (CLONE_INTO_CGROUP, Linux 5.7+). The
// descriptor belongs to g: do not close it; it stays valid until Close.
func (g *Group) FD() (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return -1, errors.New("cgroup already closed")
	}
	if g.dir == nil {
		fd, err := unix.Open(g.path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, &os.PathError{Op: "open", Path: g.path, Err: err}
		}
		g.dir = os.NewFile(uintptr(fd), g.path)
	}
	return int(g.dir.Fd()), nil
}

func isCgroup2(path string) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return st.Type == unix.CGROUP2_SUPER_MAGIC, nil
}

func parentPID(pid int) (int, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseStatPPID(string(data))
}

func killPID(pid int) error { return unix.Kill(pid, unix.SIGKILL) }

// osOps are the real operations; kill differs per OS.
func osOps(kill func(int) error) ops {
	return ops{
		mkdir:  func(p string) error { return os.Mkdir(p, 0o755) },
		remove: os.Remove,
		write:  writeFile,
		kill:   kill,
	}
}
