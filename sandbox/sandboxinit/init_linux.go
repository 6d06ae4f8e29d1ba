package sandboxinit

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Init is "sandbox-init": pid 1 of the sandbox (bwrap --as-pid-1). It makes
// itself non-dumpable before anything else runs in the sandbox, reads the
// plan, starts the shell through "sandbox-exec" (which installs the seccomp
// filter and execs it), relays the host's termination requests to every
// process, reaps orphans, and returns the shell's exit status once the
// shell exits; everything left then dies with the pid namespace.
//
// Init itself stays outside the filter (the egress bridge will live here),
// so it must not be reachable from the command: as pid 1 it ignores signals
// sent from inside the namespace that it does not handle, and being
// non-dumpable its /proc/1/mem cannot be opened by a process of the same
// user, which seccomp alone could not prevent.
func Init(args []string) int {
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "gatehouse: sandbox-init: %v\n", err)
		return 126
	}
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	ctl := os.NewFile(3, "control")
	status := os.NewFile(4, "status")
	if _, err := status.Stat(); err != nil {
		fmt.Fprintln(os.Stderr, "gatehouse: sandbox-init is started by gatehouse only")
		return 126
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(status, "failed "+format+"\n", a...)
		status.Close()
		return 126
	}

	plan, err := ReadPlan(ctl)
	if err != nil {
		return fail("reading the plan: %v", err)
	}
	self, err := os.Executable()
	if err != nil {
		return fail("locating the init binary: %v", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail("%v", err)
	}
	proc, err := os.StartProcess(self, append([]string{"gatehouse"}, ExecArgs(plan)...), &os.ProcAttr{
		Env:   os.Environ(),
		Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, pw},
	})
	pw.Close()
	if err != nil {
		return fail("starting the shell: %v", err)
	}
	// sandbox-exec writes nothing on a clean exec: the pipe closes on exec.
	msg, _ := io.ReadAll(pr)
	pr.Close()
	mode := "bubblewrap"
	if plan.Seccomp == "off" {
		mode = "bubblewrap_no_seccomp seccomp is off in the configuration"
	}
	for _, l := range strings.Split(strings.TrimSpace(string(msg)), "\n") {
		kind, detail, _ := strings.Cut(l, " ")
		switch kind {
		case "nofilter":
			mode = "bubblewrap_no_seccomp " + detail
		case "error":
			reap(proc.Pid)
			return fail("%s", detail)
		}
	}
	fmt.Fprintf(status, "started %s\n", mode)
	status.Close()

	go supervise(ctl)
	return reap(proc.Pid)
}

// reap waits for children until shell exits and returns its exit status
// (128+N for a signal). Orphans re-parented to pid 1 are reaped on the way.
func reap(shell int) int {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 126
		}
		if pid != shell {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// supervise reads control lines ("term", "kill") and signals every process
// in the sandbox. When the host goes away (end of file) everything is
// killed and the sandbox ends.
func supervise(ctl io.Reader) {
	buf := make([]byte, 64)
	var line []byte
	for {
		n, err := ctl.Read(buf)
		for _, b := range buf[:n] {
			if b != '\n' {
				line = append(line, b)
				continue
			}
			switch string(line) {
			case "term":
				killAll(unix.SIGTERM)
			case "kill":
				killAll(unix.SIGKILL)
			}
			line = line[:0]
		}
		if err != nil {
			killAll(unix.SIGKILL)
			os.Exit(137)
		}
	}
}

// killAll signals every process in the sandbox's pid namespace but pid 1.
func killAll(sig unix.Signal) {
	_ = unix.Kill(-1, sig)
}
