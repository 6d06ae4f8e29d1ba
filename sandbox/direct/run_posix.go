//go:build linux || darwin

// Package direct runs a command with no kernel isolation (sandbox mode
// "none"): the shell runs on the host as the user, in its own process group,
// with the constructed environment and the file-size limit. It exists for
// hosts without a sandbox where the policy says sandbox_required: false.
package direct

import (
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

// Run executes spec without isolation. It always returns a Result.
func Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	start := time.Now()
	res := &sandbox.Result{Mode: sandbox.ModeNone}
	plan := &sandboxinit.Stage1Spec{Shell: spec.Shell, Argv: sandbox.ShellArgv(spec.Shell, spec.Command), Seccomp: "off", FileSizeMax: spec.FileSizeMax}
	// RLIMIT_NPROC counts every task of the user here, so the budget is
	// over what the user already runs (sandboxinit/nproc.go).
	nproc := spec.PidsMax > 0 && sandboxinit.NProcEnforced(false)
	if nproc {
		plan.NProc, plan.NProcBase = spec.PidsMax, sandboxinit.NProcBase(false)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, "spawn_error", err.Error()
		return res
	}
	defer repR.Close()

	stdout := &sandbox.CapWriter{W: out.Stdout, Max: spec.OutputMax}
	stderr := &sandbox.CapWriter{W: out.Stderr, Max: spec.OutputMax}
	cmd := exec.Command(spec.InitPath, sandboxinit.ExecArgs(plan)...)
	cmd.Args[0] = "sandbox-exec"
	cmd.Env = append([]string{}, spec.Env...)
	cmd.Dir = spec.Dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if len(spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	cmd.ExtraFiles = []*os.File{repW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Start(); err != nil {
		repW.Close()
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, "spawn_error", err.Error()
		return res
	}
	repW.Close()
	report, _ := io.ReadAll(repR)
	pgid := cmd.Process.Pid

	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()
	waitErr := sandbox.Supervise(ctx, spec, res, waitC,
		func() { syscall.Kill(-pgid, syscall.SIGTERM) },
		func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	// Background jobs in the shell's process group die with it; a daemon
	// that called setsid escapes, which is why daemon_kill is false here.
	syscall.Kill(-pgid, syscall.SIGKILL)
	stdout.Finish()
	stderr.Finish()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.Stats(), stderr.Stats()
	res.Limits = sandbox.Limits{FileSize: spec.FileSizeMax > 0, Pids: nproc, NProc: nproc}
	if msg, ok := strings.CutPrefix(strings.TrimSpace(string(report)), "error "); ok {
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, "spawn_error", msg
		return res
	}
	var ee *exec.ExitError
	code := 0
	switch {
	case waitErr == nil:
	case errors.Is(waitErr, exec.ErrWaitDelay):
		// The shell exited 0; a background process it left held the
		// output open until WaitDelay (and was killed above).
	case errors.As(waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		} else {
			code = ee.ExitCode()
		}
	default:
		res.Status, res.StatusReason, res.Error = sandbox.StatusFailedToStart, "spawn_error", fmt.Sprint(waitErr)
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
