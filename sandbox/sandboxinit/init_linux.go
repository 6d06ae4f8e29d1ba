package sandboxinit

import (
	"fmt"
	"io"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Init is "sandbox-init": pid 1 of the sandbox (bwrap --as-pid-1). It makes
// itself non-dumpable before anything else runs in the sandbox, reads the
// plan, starts the shell from a thread that alone carries no-new-privs and
// the seccomp filter (so the shell inherits them and the init does not),
// relays the host's termination requests to every process, reaps orphans,
// and returns the shell's exit status once the shell exits; everything left
// then dies with the pid namespace.
//
// The init stays outside the filter (the egress bridge lives here), so
// it must not be reachable from the command: as pid 1 it ignores signals
// sent from inside the namespace that it does not handle, and being
// non-dumpable its /proc/1/mem cannot be opened by a process of the same
// user, which seccomp could not prevent.
func Init(args []string) int {
	// Keep the main thread for this goroutine, so that the filtered thread
	// below is never the main one (which Go would keep alive).
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "gatehouse: sandbox-init: %v\n", err)
		return 126
	}
	unix.CloseOnExec(3)
	unix.CloseOnExec(4)
	closeNamespaceFiles()
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

	// The thread that will carry the filter and start the shell is made
	// now, while the plan may still be on its way (shell_linux.go).
	sh := startShellThread()
	// A warm sandbox waits here for its command: the time is spent on
	// running once what the plan will run, so that the command does not
	// pay for first use.
	if !readable(3) {
		warmUp()
	}
	plan, err := ReadPlan(ctl)
	if err != nil {
		if BuildMismatch(err.Error()) {
			return fail("%v", err)
		}
		return fail("reading the plan: %v", err)
	}
	// Resource limits are per process and inherited: set here, they hold
	// for the shell and everything it starts.
	if err := setLimits(plan); err != nil {
		return fail("%v", err)
	}
	// The network bridge listens before the shell starts, so that the
	// command's first connection is queued, never refused. It serves from
	// this process's unfiltered threads: the filtered thread below is
	// locked to its goroutine and ends with it.
	env := plan.Env
	if b := plan.Bridge; b != nil {
		lns, err := b.ListenAll()
		if err != nil {
			return fail("starting the network bridge: %v", err)
		}
		for _, ln := range lns {
			go b.Serve(ln)
		}
		env = b.ProxyEnv(env)
	}
	sh.plan <- shellPlan{plan, env}
	st := <-sh.started
	if st.err != nil {
		return fail("%v", st.err)
	}
	fmt.Fprintf(status, "started %s\n", st.mode)
	status.Close()

	go supervise(ctl)
	return reap(st.pid)
}

// closeNamespaceFiles closes what nsenter left open when the sandbox
// joined a session's network (descriptors 6 and 7: the session's user and
// network namespace files). Nothing in the sandbox could use them (it has
// no capability in their namespaces) but nothing there needs them either.
// Only namespace files are closed: a descriptor of anything else is left.
func closeNamespaceFiles() {
	for fd := 5; fd < 8; fd++ {
		var st unix.Statfs_t
		if unix.Fstatfs(fd, &st) == nil && st.Type == unix.NSFS_MAGIC {
			unix.Close(fd)
		}
	}
}

// setLimits applies the plan's resource limits to this process.
func setLimits(plan *Stage1Spec) error {
	if plan.FileSizeMax > 0 {
		lim := &unix.Rlimit{Cur: uint64(plan.FileSizeMax), Max: uint64(plan.FileSizeMax)}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, lim); err != nil {
			return fmt.Errorf("setting the file size limit: %v", err)
		}
	}
	// No core dumps: they would land in the workspace.
	_ = unix.Setrlimit(unix.RLIMIT_CORE, &unix.Rlimit{})
	// The process count (nproc.go). The init's own threads count against
	// the same limit, so they and a reserve for more are added.
	if plan.NProc > 0 {
		if err := setNProc(plan.NProc+ownThreads()+InitReserve, plan.NProcBase); err != nil {
			return fmt.Errorf("setting the process limit: %v", err)
		}
	}
	return nil
}

// reap waits for children until the shell exits and returns its exit status
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
				end()
			}
			line = line[:0]
		}
		if err != nil {
			end()
		}
	}
}

// end kills the sandbox for certain: SIGKILL to every process, then the
// init exits. A process forked after the kill(-1) pass is not missed: once
// pid 1 is gone the kernel kills everything in the namespace and refuses
// every further fork in it.
func end() {
	killAll(unix.SIGKILL)
	os.Exit(137)
}

// killAll signals every process in the sandbox's pid namespace but pid 1.
func killAll(sig unix.Signal) {
	_ = unix.Kill(-1, sig)
}

func init() { Stages["sandbox-init"] = Init }
