package bwrap

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
)

// Run runs spec in a fresh sandbox, in a cgroup of its own where the host
// delegates one.
func (r *Runner) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	opt := r.runOptions(spec.ID)
	if g := r.cgroupFor("exec-"+spec.ID, spec, &opt); g != nil {
		defer g.Close()
	}
	return Run(ctx, spec, out, opt)
}

// StartWarm starts a sandbox for spec's mount plan, in a cgroup of its own
// where the host delegates one.
func (r *Runner) StartWarm(spec *sandbox.Spec) (sandbox.Warm, error) {
	opt := r.runOptions(spec.ID)
	g := r.cgroupFor("warm-"+spec.ID, spec, &opt)
	w, res := StartWarm(spec, opt)
	if res != nil {
		if g != nil {
			g.Close()
		}
		return nil, errors.New(res.Error)
	}
	return &warmRun{w: w, opt: opt, group: g}, nil
}

func (r *Runner) runOptions(id string) RunOptions {
	return RunOptions{Options: r.Options, CgroupFD: -1, BlockedSuffix: suffix(id)}
}

// suffix is what names the files an execution's sweep moves aside.
func suffix(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

// cgroupFor gives opt the cgroup of one execution (or warm sandbox) named
// name, where the host delegates one; the caller closes it.
func (r *Runner) cgroupFor(name string, spec *sandbox.Spec, opt *RunOptions) io.Closer {
	d := limits.Detect()
	if !d.Memory && !d.Pids {
		return nil
	}
	g, err := d.NewGroup(name, spec.MemoryMax, spec.PidsMax)
	if err != nil {
		r.logger().Warn("cgroup limits not applied", "err", err)
		return nil
	}
	if fd, err := g.FD(); err == nil {
		opt.CgroupFD = fd
		opt.Memory, opt.Pids = d.Memory && spec.MemoryMax > 0, d.Pids && spec.PidsMax > 0
	}
	return g
}

// warmRun is a warm sandbox with the options and the cgroup it started
// with.
type warmRun struct {
	w     *Warm
	opt   RunOptions
	group io.Closer
}

func (b *warmRun) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) (*sandbox.Result, error) {
	opt := b.opt
	opt.BlockedSuffix = suffix(spec.ID)
	return b.w.Run(ctx, spec, out, opt)
}

func (b *warmRun) Alive() bool { return b.w.Alive() }
func (b *warmRun) Pid() int    { return b.w.Pid() }

func (b *warmRun) Close() {
	b.w.Close()
	if b.group != nil {
		b.group.Close()
	}
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}
