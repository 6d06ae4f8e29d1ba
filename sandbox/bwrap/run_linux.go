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
	start := time.Now()
	res := &sandbox.Result{Mode: sandbox.ModeBubblewrap}
	failed := func(reason, msg string) *sandbox.Result {
		res.Status = sandbox.StatusFailedToStart
		res.StatusReason = reason
		res.Error = msg
		res.Duration = time.Since(start)
		return res
	}

	plan, err := Discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny)
	if err != nil {
		return failed("spawn_error", fmt.Sprintf("preparing mounts: %v", err))
	}
	args := Args(spec, &plan.Mounts, opt.Options)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File) {
		if err != nil {
			return nil, nil
		}
		r, w, err = os.Pipe()
		files = append(files, r, w)
		return r, w
	}
	ctlR, ctlW := pipe()
	stR, stW := pipe()
	argR, argW := pipe()
	if err != nil {
		closeAll()
		return failed("spawn_error", fmt.Sprintf("creating pipes: %v", err))
	}
	defer closeAll()

	stdout := &sandbox.CapWriter{W: out.Stdout, Max: spec.OutputMax}
	stderrHead := &headBuffer{max: 4096}
	stderr := &sandbox.CapWriter{W: io.MultiWriter(stderrHead, writerOrDiscard(out.Stderr)), Max: spec.OutputMax}

	cmd := exec.Command(spec.BwrapPath, append([]string{"--args", "5"}, InitCommand...)...)
	// bwrap and everything below it see only the constructed environment:
	// nothing of the launcher's reaches /proc/*/environ in the sandbox.
	cmd.Env = append([]string{}, spec.Env...)
	cmd.ExtraFiles = []*os.File{ctlR, stW, argR}
	outPump, err := sandbox.NewPump(stdout)
	if err != nil {
		return failed("spawn_error", fmt.Sprintf("creating pipes: %v", err))
	}
	defer outPump.Close()
	errPump, err := sandbox.NewPump(stderr)
	if err != nil {
		return failed("spawn_error", fmt.Sprintf("creating pipes: %v", err))
	}
	defer errPump.Close()
	cmd.Stdout, cmd.Stderr = outPump.W, errPump.W
	if len(spec.Stdin) > 0 {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	if opt.CgroupFD >= 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: opt.CgroupFD}
	}
	// The guard watches before anything runs. Without it (inotify
	// limits reached) the command runs all the same and Sweep alone moves
	// aside what it created at a watched path, after it ends; Result has
	// no field for that, so the fallback is silent.
	guard, _ := startGuard(plan.Watch, opt.BlockedSuffix)
	if err := cmd.Start(); err != nil {
		guard.stop()
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			res.Mode = sandbox.ModeUnavailableDenied
			return failed("sandbox_unavailable", fmt.Sprintf("%s not found; install bubblewrap", spec.BwrapPath))
		}
		return failed("spawn_error", fmt.Sprintf("starting bwrap: %v", err))
	}
	ctlR.Close()
	stW.Close()
	argR.Close()
	outPump.W.Close()
	errPump.W.Close()

	// Arguments and plan go through pipes so that neither appears in any
	// command line inside the sandbox.
	go func() {
		var b bytes.Buffer
		for _, a := range args {
			b.WriteString(a)
			b.WriteByte(0)
		}
		argW.Write(b.Bytes())
		argW.Close()
	}()
	p := sandboxinit.Stage1Spec{
		Shell:       spec.Shell,
		Argv:        []string{spec.Shell, "--noprofile", "--norc", "-c", spec.Command},
		Seccomp:     string(spec.Seccomp),
		AllowPtrace: spec.AllowPtrace,
		FileSizeMax: spec.FileSizeMax,
		Bridge:      Bridge(spec),
	}
	// The process count holds without a cgroup too (sandboxinit/nproc.go).
	if spec.PidsMax > 0 {
		p.NProc, p.NProcBase = spec.PidsMax, sandboxinit.NProcBase(true)
	}
	if strings.HasSuffix(spec.Shell, "/sh") {
		p.Argv = []string{spec.Shell, "-c", spec.Command}
	}
	// The plan goes first: a "term" or "kill" sent while it is being
	// written (the execution ended as it started) waits for it, and init
	// reads the plan, then the signal.
	ctl := &control{w: ctlW}
	ctl.mu.Lock()
	go func() {
		defer ctl.mu.Unlock()
		sandboxinit.WritePlan(ctl.w, &p)
	}()

	statusC := make(chan []sandboxinit.Status, 1)
	go func() {
		var all []sandboxinit.Status
		br := bufio.NewReader(stR)
		for {
			s, err := sandboxinit.ReadStatus(br)
			if err != nil {
				break
			}
			all = append(all, s)
		}
		statusC <- all
	}()

	waitC := make(chan error, 1)
	go func() { waitC <- cmd.Wait() }()

	waitErr := sandbox.Supervise(ctx, spec, res, waitC,
		func() { ctl.send("term") },
		func() {
			ctl.send("kill")
			// Last resort: bwrap's --die-with-parent takes the sandbox
			// down with it.
			time.AfterFunc(time.Second, func() { cmd.Process.Kill() })
		})
	ctlW.Close()
	// Once the sandbox is gone nothing can hold the pipes, but never wait
	// long for a writer that somehow survived.
	outPump.Wait(2 * time.Second)
	errPump.Wait(2 * time.Second)
	blocked := guard.stop()
	statuses := <-statusC
	stdout.Finish()
	stderr.Finish()
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr = stdout.Stats(), stderr.Stats()
	res.Limits = sandbox.Limits{
		Tmpfs:      spec.TmpfsSize > 0,
		FileSize:   spec.FileSizeMax > 0,
		DaemonKill: true,
		Memory:     opt.Memory,
		NProc:      p.NProc > 0 && sandboxinit.NProcEnforced(true),
	}
	res.Limits.Pids = opt.Pids || res.Limits.NProc
	if moved := dedup(append(blocked, plan.Sweep(opt.BlockedSuffix)...)); len(moved) > 0 {
		res.Blocked = moved
	}

	started := false
	var failure string
	for _, s := range statuses {
		switch s.Kind {
		case "started":
			started = true
			mode, reason, _ := strings.Cut(s.Detail, " ")
			res.Mode = sandbox.Mode(mode)
			res.SeccompReason = reason
		case "failed":
			// The exec of the shell itself can fail after "started".
			started = false
			failure = s.Detail
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
			msg, _, _ = strings.Cut(strings.TrimSpace(stderrHead.String()), "\n")
		}
		if msg == "" {
			msg = fmt.Sprintf("bwrap exited: %v", waitErr)
		}
		if isNamespaceFailure(msg) || strings.Contains(failure, "seccomp") {
			res.Mode = sandbox.ModeUnavailableDenied
			return failed("sandbox_unavailable", msg)
		}
		return failed("spawn_error", msg)
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

// headBuffer keeps the first max bytes written to it.
type headBuffer struct {
	mu  sync.Mutex
	max int
	b   bytes.Buffer
}

func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if room := h.max - h.b.Len(); room > 0 {
		if len(p) < room {
			room = len(p)
		}
		h.b.Write(p[:room])
	}
	return len(p), nil
}

func (h *headBuffer) String() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.b.String()
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
