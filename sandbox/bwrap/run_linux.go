package bwrap

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
	"sync"
	"syscall"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/sandboxinit"
)

// Run executes spec under bubblewrap, streaming output to out. It always
// returns a Result; when nothing could be started its Status says
// failed_to_start and Error says why.
func Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, opt RunOptions) *sandbox.Result {
	t0 := time.Now()
	survey, err := Discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny)
	if err != nil {
		return discoverFailed(t0, err)
	}
	s, res := start(spec, Args(spec, &survey.Mounts, opt.Options), opt)
	if res != nil {
		survey.Close()
		res.Duration = time.Since(t0)
		return res
	}
	return s.run(ctx, spec, survey, out, opt, t0)
}

// discoverFailed is the result of an execution whose survey failed:
// nothing ran. A workspace too large for the sweep to check after the
// command is refused (sweep_bound) rather than run unchecked.
func discoverFailed(t0 time.Time, err error) *sandbox.Result {
	if errors.Is(err, ErrSweepBound) {
		return failedResult(t0, sandbox.ReasonSweepBound, fmt.Sprintf("%v; nothing ran: make a smaller directory the workspace root", err))
	}
	if errors.Is(err, ErrUnresolvedLink) {
		// A write-deny name whose target the command could make.
		return failedResult(t0, sandbox.ReasonWriteDenyLink, err.Error())
	}
	return failedResult(t0, sandbox.ReasonSpawnError, fmt.Sprintf("preparing mounts: %v", err))
}

// failedResult is the result of an execution that did not start.
func failedResult(t0 time.Time, reason, msg string) *sandbox.Result {
	return &sandbox.Result{Mode: sandbox.ModeBubblewrap, Status: sandbox.StatusFailedToStart,
		StatusReason: reason, Error: msg, Duration: time.Since(t0)}
}

// started is bwrap running with the init inside waiting for its plan on
// the control pipe: what Run starts for one command, or what a warm
// sandbox holds until one comes.
type started struct {
	cmd        *exec.Cmd
	args       []string
	ctlW, stR  *os.File
	files      []*os.File // every pipe end this side holds
	outPump    *sandbox.Pump
	errPump    *sandbox.Pump
	out, err   lateWriter // where the pumps deliver, set by run
	stderrHead *sandbox.HeadBuffer
	waitC      chan error // bwrap's exit
	exited     chan struct{}
	waitErr    error // after exited
}

// start starts bwrap with args (Args' options) and the init. The
// environment bwrap, the init and their /proc/*/environ get is empty:
// the shell's comes in the plan. A non-nil Result says why nothing
// started.
func start(spec *sandbox.Spec, args []string, opt RunOptions) (*started, *sandbox.Result) {
	s := &started{args: args, stderrHead: &sandbox.HeadBuffer{Max: 4096}, waitC: make(chan error, 1), exited: make(chan struct{})}
	fail := func(reason, msg string) (*started, *sandbox.Result) {
		s.closeFiles()
		return nil, failedResult(time.Now(), reason, msg)
	}
	var err error
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		s.files = append(s.files, r, w)
		return r, w
	}
	ctlR, ctlW := pipe()
	stR, stW := pipe()
	argR, argW := pipe()
	if err != nil {
		return fail(sandbox.ReasonSpawnError, fmt.Sprintf("creating pipes: %v", err))
	}
	s.ctlW, s.stR = ctlW, stR
	if s.outPump, err = sandbox.NewPump(&s.out); err != nil {
		return fail(sandbox.ReasonSpawnError, fmt.Sprintf("creating pipes: %v", err))
	}
	if s.errPump, err = sandbox.NewPump(io.MultiWriter(s.stderrHead, &s.err)); err != nil {
		s.outPump.Close()
		return fail(sandbox.ReasonSpawnError, fmt.Sprintf("creating pipes: %v", err))
	}
	cmd := exec.Command(spec.BwrapPath, append([]string{"--args", "5"}, InitCommand...)...)
	cmd.ExtraFiles = []*os.File{ctlR, stW, argR}
	if n := spec.Network; n != nil {
		// nsenter joins the session's user and network namespaces
		// (descriptors 6 and 7) and becomes bwrap, which makes the rest.
		// The init closes both before anything of the command runs.
		cmd = exec.Command(n.Nsenter, append([]string{"--user=/proc/self/fd/6", "--net=/proc/self/fd/7", "--preserve-credentials", "--",
			spec.BwrapPath, "--args", "5"}, InitCommand...)...)
		cmd.ExtraFiles = []*os.File{ctlR, stW, argR, n.User, n.Net}
	}
	cmd.Env = []string{}
	cmd.Stdout, cmd.Stderr = s.outPump.W, s.errPump.W
	if len(spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	if opt.CgroupFD >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: opt.CgroupFD}
	}
	if err := cmd.Start(); err != nil {
		s.outPump.Close()
		s.errPump.Close()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			_, res := fail(sandbox.ReasonSandboxUnavailable, fmt.Sprintf("%s not found; install bubblewrap", spec.BwrapPath))
			res.Mode = sandbox.ModeUnavailableDenied
			return nil, res
		}
		return fail(sandbox.ReasonSpawnError, fmt.Sprintf("starting bwrap: %v", err))
	}
	s.cmd = cmd
	ctlR.Close()
	stW.Close()
	argR.Close()
	s.outPump.W.Close()
	s.errPump.W.Close()
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
		s.waitC <- s.waitErr
	}()
	// The arguments go through a pipe so that they appear in no command
	// line inside the sandbox.
	go func() {
		var b bytes.Buffer
		for _, a := range args {
			b.WriteString(a)
			b.WriteByte(0)
		}
		argW.Write(b.Bytes())
		argW.Close()
	}()
	return s, nil
}

func (s *started) closeFiles() {
	for _, f := range s.files {
		f.Close()
	}
}

// alive reports whether bwrap still runs.
func (s *started) alive() bool {
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// discard ends a sandbox that never got its plan: end of file on the
// control pipe is "kill" to the init.
func (s *started) discard() {
	s.ctlW.Close()
	select {
	case <-s.exited:
	case <-time.After(2 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
	}
	s.outPump.Close()
	s.errPump.Close()
	s.closeFiles()
}

// run gives the init its plan for spec and supervises the command to its
// end; survey is the host as the plan was made for it now (the guard and
// the sweep use it). t0 is when the execution began.
func (s *started) run(ctx context.Context, spec *sandbox.Spec, survey *HostSurvey, out sandbox.Streams, opt RunOptions, t0 time.Time) *sandbox.Result {
	defer survey.Close()
	defer s.closeFiles()
	defer s.outPump.Close()
	defer s.errPump.Close()
	res := &sandbox.Result{Mode: sandbox.ModeBubblewrap}
	failed := func(reason, msg string) *sandbox.Result {
		res.Status = sandbox.StatusFailedToStart
		res.StatusReason = reason
		res.Error = msg
		res.Duration = time.Since(t0)
		return res
	}
	stdout := &sandbox.CapWriter{W: out.Stdout, Max: spec.OutputMax}
	stderr := &sandbox.CapWriter{W: writerOrDiscard(out.Stderr), Max: spec.OutputMax}
	s.out.set(stdout)
	s.err.set(stderr)

	// The guard watches before the command runs. Without it (inotify
	// limits reached) the command runs all the same and Sweep alone moves
	// aside what it created at a watched path, after it ends; Result has
	// no field for that, so the fallback is silent.
	guard, _ := startGuard(survey.watchDirs(), opt.BlockedSuffix)
	p := sandboxinit.Stage1Spec{
		Shell:       spec.Shell,
		Argv:        sandbox.ShellArgv(spec.Shell, spec.Command),
		Env:         append([]string{}, spec.Env...),
		Dir:         spec.Dir,
		Seccomp:     string(spec.Seccomp),
		AllowPtrace: spec.AllowPtrace,
		FileSizeMax: spec.FileSizeMax,
		Bridge:      Bridge(spec),
	}
	// The process count holds without a cgroup too (sandboxinit/nproc.go).
	if spec.PidsMax > 0 {
		p.NProc, p.NProcBase = spec.PidsMax, sandboxinit.NProcBase(true)
	}
	// The plan goes first: a "term" or "kill" sent while it is being
	// written (the execution ended as it started) waits for it, and init
	// reads the plan, then the signal.
	ctl := &control{w: s.ctlW}
	ctl.mu.Lock()
	go func() {
		defer ctl.mu.Unlock()
		sandboxinit.WritePlan(ctl.w, &p)
	}()

	statusC := make(chan []sandboxinit.Status, 1)
	go func() {
		var all []sandboxinit.Status
		br := bufio.NewReader(s.stR)
		for {
			st, err := sandboxinit.ReadStatus(br)
			if err != nil {
				break
			}
			all = append(all, st)
		}
		statusC <- all
	}()

	waitErr := sandbox.Supervise(ctx, spec, res, s.waitC,
		func() { ctl.send("term") },
		func() {
			ctl.send("kill")
			// Last resort: bwrap's --die-with-parent takes the sandbox
			// down with it.
			time.AfterFunc(time.Second, func() { s.cmd.Process.Kill() })
		})
	s.ctlW.Close()
	// Once the sandbox is gone nothing can hold the pipes, but never wait
	// long for a writer that somehow survived.
	s.outPump.Wait(2 * time.Second)
	s.errPump.Wait(2 * time.Second)
	handOff := ""
	if spec.HandOff {
		handOff = spec.InitPath
	}
	blocked := guard.stop(handOff)
	statuses := <-statusC
	stdout.Finish()
	stderr.Finish()
	res.Duration = time.Since(t0)
	res.Stdout, res.Stderr = stdout.Stats(), stderr.Stats()
	res.Limits = sandbox.Limits{
		Tmpfs:      spec.TmpfsSize > 0,
		FileSize:   spec.FileSizeMax > 0,
		DaemonKill: true,
		Memory:     opt.Memory,
		NProc:      p.NProc > 0 && sandboxinit.NProcEnforced(true),
	}
	res.Limits.Pids = opt.Pids || res.Limits.NProc
	swept, sweepErr := survey.Sweep(opt.BlockedSuffix)
	if moved := dedup(append(blocked, swept...)); len(moved) > 0 {
		res.Blocked = moved
	}
	if sweepErr != nil {
		// The command ran; part of the workspace could not be checked for
		// what it planted. The event says so (the status is still the
		// command's).
		res.StatusReason = sandbox.ReasonSweepIncomplete
		res.Error = sweepErr.Error()
	}

	started := false
	var failure string
	for _, st := range statuses {
		switch st.Kind {
		case "started":
			started = true
			mode, reason, _ := strings.Cut(st.Detail, " ")
			res.Mode = sandbox.Mode(mode)
			res.SeccompReason = reason
		case "failed":
			// The exec of the shell itself can fail after "started".
			started = false
			failure = st.Detail
		}
	}
	exitCode := -1
	var ee *exec.ExitError
	switch {
	case waitErr == nil:
		exitCode = 0
	case errors.As(waitErr, &ee) && ee.Exited():
		// bwrap passes on the shell's status (128+N for a signal).
		exitCode = ee.ExitCode()
	}
	if !started {
		msg := failure
		if msg == "" {
			// bwrap's own message: its first line says it all.
			msg, _, _ = strings.Cut(strings.TrimSpace(s.stderrHead.String()), "\n")
		}
		if msg == "" {
			msg = fmt.Sprintf("bwrap exited: %v", waitErr)
		}
		if isNamespaceFailure(msg) || strings.Contains(failure, "seccomp") {
			res.Mode = sandbox.ModeUnavailableDenied
			return failed(sandbox.ReasonSandboxUnavailable, msg)
		}
		return failed(sandbox.ReasonSpawnError, msg)
	}
	switch {
	case res.TimedOut:
		res.Status = sandbox.StatusTimedOut
	case res.Status == sandbox.StatusKilled:
	case exitCode >= 0:
		res.Status = sandbox.StatusCompleted
		res.ExitCode = exitCode
	default:
		// bwrap itself was killed.
		res.Status = sandbox.StatusKilled
	}
	return res
}

// lateWriter delivers to a writer set after it is made: a warm sandbox's
// output pumps exist before the caller's writers are known. Before set,
// what arrives is dropped (the init writes nothing before its plan).
type lateWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lateWriter) set(w io.Writer) {
	l.mu.Lock()
	l.w = w
	l.mu.Unlock()
}

func (l *lateWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	w := l.w
	l.mu.Unlock()
	if w == nil {
		return len(p), nil
	}
	return w.Write(p)
}

// isNamespaceFailure recognises bwrap's messages for a host that does not
// allow the namespaces it needs.
func isNamespaceFailure(msg string) bool {
	for _, s := range []string{
		"No permissions to create new namespace",
		"Creating new namespace failed",
		"setting up uid map",
		"unprivileged user namespaces",
		"Operation not permitted",
	} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// control serialises writes of control lines to the init.
type control struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *control) send(line string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	io.WriteString(c.w, line+"\n")
}

// dedup returns paths without repeats, in their first order.
func dedup(paths []string) []string {
	seen := map[string]bool{}
	out := paths[:0]
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

func writerOrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
