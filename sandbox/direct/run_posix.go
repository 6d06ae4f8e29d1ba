//go:build linux || darwin

// Package direct runs a command with no kernel isolation (sandbox mode
// "none"): the shell runs on the host as the user, in its own process group,
// with the constructed environment and the file-size limit. It exists for
// hosts without a sandbox where the policy says sandbox_required: false.
//
// Its process-group run is shared: Seatbelt runs the same way, with
// sandbox-exec and its profile put before the init (RunWith).
package direct

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

// Options change how RunWith starts the command.
type Options struct {
	// Mode is stamped on the result; empty means none.
	Mode sandbox.Mode
	// Wrap, when set, is a program and its arguments put before the
	// init's command line: it confines itself and then execs the init
	// (sandbox-exec -p PROFILE). When it exits without the init having
	// run, the execution failed to start, with what it wrote to stderr.
	Wrap []string
	// NewSession starts the command in a session of its own, with no
	// controlling terminal (setsid), rather than only a process group of
	// its own.
	NewSession bool
}

// Run executes spec without isolation. It always returns a Result.
func Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return RunWith(ctx, spec, out, Options{})
}

// RunWith executes spec through the init's sandbox-exec stage, as opt
// says: the command in a process group (or session) of its own, which
// gets SIGTERM at the timeout or when ctx ends, SIGKILL spec.KillGrace
// later, and SIGKILL once the shell has exited, so that its background
// jobs end with it. A descendant that called setsid escapes the group
// (Limits.DaemonKill is false). It always returns a Result.
func RunWith(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, opt Options) *sandbox.Result {
	start := time.Now()
	mode := opt.Mode
	if mode == "" {
		mode = sandbox.ModeNone
	}
	res := &sandbox.Result{Mode: mode}
	plan := &sandboxinit.Stage1Spec{Shell: spec.Shell, Argv: sandbox.ShellArgv(spec.Shell, spec.Command), Seccomp: "off", FileSizeMax: spec.FileSizeMax}
	// RLIMIT_NPROC counts every task of the user here, so the budget is
	// over what the user already runs (sandboxinit/nproc.go).
	nproc := spec.PidsMax > 0 && sandboxinit.NProcEnforced(false)
	if nproc {
		plan.NProc, plan.NProcBase = spec.PidsMax, sandboxinit.NProcBase(false)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, err.Error()
		return res
	}
	defer repR.Close()

	stdout := &sandbox.CapWriter{W: out.Stdout, Max: spec.OutputMax}
	stderr := &sandbox.CapWriter{W: out.Stderr, Max: spec.OutputMax}
	head := &sandbox.HeadBuffer{Max: 4096}
	// The command writes to pipes of ours, so that its end is seen when
	// the shell exits, not when the last descendant holding its output
	// lets go.
	outPump, err := sandbox.NewPump(stdout)
	if err != nil {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, err.Error()
		return res
	}
	defer outPump.Close()
	errPump, err := sandbox.NewPump(io.MultiWriter(stderr, head))
	if err != nil {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, err.Error()
		return res
	}
	defer errPump.Close()
	args := append([]string{spec.InitPath}, sandboxinit.ExecArgs(plan)...)
	if len(opt.Wrap) > 0 {
		args = append(append([]string{}, opt.Wrap...), args...)
	}
	cmd := exec.Command(args[0], args[1:]...)
	if len(opt.Wrap) == 0 {
		cmd.Args[0] = "sandbox-exec"
	}
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = outPump.W, errPump.W
	if len(spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	cmd.ExtraFiles = []*os.File{repW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !opt.NewSession, Setsid: opt.NewSession}
	if err := cmd.Start(); err != nil {
		repW.Close()
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, err.Error()
		return res
	}
	repW.Close()
	outPump.W.Close()
	errPump.W.Close()
	report, _ := io.ReadAll(repR)
	pgid := cmd.Process.Pid

	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()
	waitErr := sandbox.Supervise(ctx, spec, res, waitC,
		func() { syscall.Kill(-pgid, syscall.SIGTERM) },
		func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	// Background jobs in the shell's process group die with it; a daemon
	// that called setsid escapes, which is why daemon_kill is false here.
	// Whatever still holds the output gets a moment to finish writing,
	// then EPIPE.
	syscall.Kill(-pgid, syscall.SIGKILL)
	outPump.Wait(2 * time.Second)
	errPump.Wait(2 * time.Second)
	stdout.Finish()
	stderr.Finish()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.Stats(), stderr.Stats()
	res.Limits = sandbox.Limits{FileSize: spec.FileSizeMax > 0, Pids: nproc, NProc: nproc}
	ready, failure := parseReport(report)
	if failure != "" {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, failure
		return res
	}
	if len(opt.Wrap) > 0 && !ready {
		// The wrapper ended before the init ran: it refused to start.
		msg, _, _ := strings.Cut(strings.TrimSpace(head.String()), "\n")
		if msg == "" {
			msg = fmt.Sprintf("%s exited: %v", opt.Wrap[0], waitErr)
		}
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSandboxUnavailable, msg
		return res
	}
	var ee *exec.ExitError
	code := 0
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	default:
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, sandbox.ReasonSpawnError, fmt.Sprint(waitErr)
		return res
	}
	switch {
	case res.TimedOut:
		res.Status = sandbox.StatusTimedOut
	case res.Status == sandbox.StatusKilled:
	default:
		res.Status = sandbox.StatusCompleted
		res.ExitCode = code
	}
	return res
}

// parseReport reads the sandbox-exec stage's report: ready says it was
// about to exec the shell; failure is why it could not, "" if it did.
func parseReport(b []byte) (ready bool, failure string) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "ready":
			ready = true
		case strings.HasPrefix(line, "error "):
			failure = strings.TrimPrefix(line, "error ")
		}
	}
	return ready, failure
}
