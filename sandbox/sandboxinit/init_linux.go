package sandboxinit

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Init is "sandbox-init", run by bwrap inside the sandbox. It reads the plan,
// starts the supervisor (outside the seccomp filter), applies the limits,
// installs the filter and becomes the shell. It returns only on failure,
// with the exit code for the sandbox.
func Init(args []string) int {
	runtime.LockOSThread()
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
		return 126
	}

	plan, err := ReadPlan(ctl)
	if err != nil {
		return fail("reading the plan: %v", err)
	}

	// The supervisor relays the host's termination requests to every
	// process in the sandbox. It is started before the filter is
	// installed, so it stays outside it (the egress bridge will live
	// there too); the control pipe is passed on to it and closed here.
	self, err := os.Executable()
	if err != nil {
		return fail("locating the init binary: %v", err)
	}
	sup := exec.Command(self, "sandbox-supervise")
	sup.Args[0] = "gatehouse-supervisor"
	sup.ExtraFiles = []*os.File{ctl}
	sup.Env = []string{}
	if err := sup.Start(); err != nil {
		return fail("starting the supervisor: %v", err)
	}
	ctl.Close()

	mode, err := Harden(plan)
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(status, "started %s\n", mode)
	// status is close-on-exec: the host sees end of file once the shell
	// runs.
	err = syscall.Exec(plan.Shell, plan.Argv, os.Environ())
	return fail("starting %s: %v", plan.Shell, err)
}

// Harden applies the resource limits and installs the seccomp filter as the
// plan says, on the calling (locked) thread, and returns the mode string
// for the status line: "bubblewrap" or "bubblewrap_no_seccomp REASON".
func Harden(plan *Plan) (string, error) {
	if plan.FileSizeMax > 0 {
		lim := &unix.Rlimit{Cur: uint64(plan.FileSizeMax), Max: uint64(plan.FileSizeMax)}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, lim); err != nil {
			return "", fmt.Errorf("setting the file size limit: %v", err)
		}
	}
	// No core dumps: they would land in the workspace.
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	switch plan.Seccomp {
	case "off":
		return "bubblewrap_no_seccomp seccomp is off in the configuration", nil
	case "required", "preferred":
		if err := installFilter(plan.AllowPtrace); err != nil {
			if plan.Seccomp == "required" {
				return "", fmt.Errorf("installing the seccomp filter: %v", err)
			}
			return "bubblewrap_no_seccomp " + err.Error(), nil
		}
		return "bubblewrap", nil
	}
	return "", fmt.Errorf("bad seccomp level %q", plan.Seccomp)
}

// Supervise is "sandbox-supervise": it reads control lines from fd 3 and
// signals every process in the sandbox's pid namespace accordingly. When
// the host goes away (end of file) everything is killed.
func Supervise(args []string) int {
	ctl := os.NewFile(3, "control")
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
			return 137
		}
	}
}

// killAll signals every process in the sandbox's pid namespace except
// bwrap's reaper (pid 1) and the caller.
func killAll(sig unix.Signal) {
	_ = unix.Kill(-1, sig)
}
