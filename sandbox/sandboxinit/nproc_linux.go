package sandboxinit

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// NProcBase returns the tasks already counted against RLIMIT_NPROC for a
// command started in a new user namespace (userNS) or in this one: none
// in a new user namespace on a kernel that counts per namespace, else
// every task of this real uid now (nproc.go).
func NProcBase(userNS bool) int64 {
	if userNS && PerUserNamespace(kernelRelease()) {
		return 0
	}
	return userTasks(os.Getuid())
}

// NProcEnforced reports whether RLIMIT_NPROC holds for commands this
// process starts, in a new user namespace (userNS) or in this one: not
// for root, nor (in this namespace) when the commands would inherit
// CAP_SYS_RESOURCE or CAP_SYS_ADMIN as ambient capabilities.
func NProcEnforced(userNS bool) bool {
	if os.Getuid() == 0 {
		return false
	}
	if userNS {
		return true
	}
	amb, ok := statusField("/proc/self/status", "CapAmb:")
	if !ok {
		return false
	}
	caps, err := strconv.ParseUint(amb, 16, 64)
	return err == nil && caps&(1<<unix.CAP_SYS_RESOURCE|1<<unix.CAP_SYS_ADMIN) == 0
}

func kernelRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// userTasks counts the tasks (threads included) whose real uid is uid.
// Processes that end while it reads are skipped.
func userTasks(uid int) int64 {
	dirs, _ := filepath.Glob("/proc/[0-9]*/status")
	want := strconv.Itoa(uid)
	var n int64
	for _, p := range dirs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var real, threads string
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "Uid:"); ok {
				real, _, _ = strings.Cut(strings.TrimSpace(v), "\t")
			} else if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				threads = strings.TrimSpace(v)
			}
		}
		if real == want {
			t, err := strconv.ParseInt(threads, 10, 64)
			if err != nil || t < 1 {
				t = 1
			}
			n += t
		}
	}
	return n
}

// ownThreads is the number of threads of this process.
func ownThreads() int64 {
	v, _ := statusField("/proc/self/status", "Threads:")
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

func statusField(path, key string) (string, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, key); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// setNProc sets RLIMIT_NPROC for n more tasks over base.
func setNProc(n, base int64) error {
	var cur unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NPROC, &cur); err != nil {
		return err
	}
	l := nprocLimit(n, base, cur.Max)
	return unix.Setrlimit(unix.RLIMIT_NPROC, &unix.Rlimit{Cur: l, Max: l})
}
