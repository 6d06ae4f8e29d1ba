package bwrap

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// A Warm sandbox is bwrap and the init started ahead of their command,
// waiting on the control pipe for the plan: the service's pool takes
// bwrap's and the init's start off a command's path. It serves one
// command, and only one whose mount plan is exactly the one it was
// started with.
type Warm struct {
	s    *started
	once sync.Once // ends it: Close, or Run's taking it
}

// StartWarm starts a sandbox for spec's mount plan (spec's command,
// environment, working directory and stdin are not used: they come with
// the command; spec must have no stdin).
func StartWarm(spec *sandbox.Spec, opt RunOptions) (*Warm, *sandbox.Result) {
	// The mount plan alone: the survey a command is swept with is made
	// when it comes (Run).
	survey, err := discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny, false)
	if err != nil {
		return nil, failedResult(time.Now(), sandbox.ReasonSpawnError, "preparing mounts: "+err.Error())
	}
	w := *spec
	w.Stdin = nil
	s, res := start(&w, Args(&w, &survey.Mounts, opt.Options), opt)
	if res != nil {
		return nil, res
	}
	return &Warm{s: s}, nil
}

// Pid is bwrap's process id.
func (w *Warm) Pid() int { return w.s.cmd.Process.Pid }

// Alive reports whether the sandbox still waits for its command.
func (w *Warm) Alive() bool { return w.s.alive() }

// Run runs spec in the warm sandbox when spec's mount plan, computed from
// the host now, is the one the sandbox was started with; otherwise it
// discards the sandbox and returns ErrPlanChanged (or ErrWarmGone), and
// nothing ran. t0 is when the execution began.
func (w *Warm) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, opt RunOptions) (*sandbox.Result, error) {
	t0 := time.Now()
	taken := false
	w.once.Do(func() { taken = true })
	if !taken {
		return nil, ErrWarmGone
	}
	if len(spec.Stdin) > 0 {
		w.s.discard()
		return nil, ErrPlanChanged
	}
	survey, err := Discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny)
	if err != nil {
		w.s.discard()
		return discoverFailed(t0, err), nil
	}
	if !slices.Equal(Args(spec, &survey.Mounts, opt.Options), w.s.args) {
		survey.Close()
		w.s.discard()
		return nil, ErrPlanChanged
	}
	if !w.s.alive() {
		survey.Close()
		w.s.discard()
		return nil, ErrWarmGone
	}
	return w.s.run(ctx, spec, survey, out, opt, t0), nil
}

// Close ends a warm sandbox that will not be used; after Run it does
// nothing.
func (w *Warm) Close() { w.once.Do(w.s.discard) }
