package pipeline

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// cgroupFor gives opt the cgroup of one execution (or warm sandbox)
// named name, where the host delegates one; the caller closes it.
func (e *Executor) cgroupFor(name string, spec *sandbox.Spec, opt *bwrap.RunOptions) io.Closer {
	d := limits.Detect()
	if !d.Memory && !d.Pids {
		return nil
	}
	g, err := d.NewGroup(name, spec.MemoryMax, spec.PidsMax)
	if err != nil {
		e.opts.Logger.Warn("cgroup limits not applied", "err", err)
		return nil
	}
	if fd, err := g.FD(); err == nil {
		opt.CgroupFD = fd
		opt.Memory, opt.Pids = d.Memory && spec.MemoryMax > 0, d.Pids && spec.PidsMax > 0
	}
	return g
}

// startSlot starts a warm sandbox for agent's commands under the
// configuration in force (pool.go): the mount plan of a command of agent,
// its cgroup, and the directory its egress proxy will listen in.
func (e *Executor) startSlot(agent string) (*warmSlot, error) {
	c := e.chooseBackend()
	if c.err != nil || c.backend != "bubblewrap" || c.initPath == "" {
		return nil, errNoWarm
	}
	roots, err := e.workspaceRoots()
	if err != nil {
		return nil, err
	}
	req := api.ExecRequest{Agent: agent}
	id := NewID()
	spec := e.spec(&req, "/", roots, id, 1, c)
	if spec.ToolCache != nil {
		if err := e.prepareToolCache(spec.ToolCache.Dir); err != nil {
			return nil, err
		}
	}
	dir, err := egressDir()
	if err != nil {
		return nil, err
	}
	spec.Egress = egressSpec(dir)
	opt := c.bwrapOpt
	g := e.cgroupFor("warm-"+id, spec, &opt)
	release := func() {
		if g != nil {
			g.Close()
		}
	}
	w, res := bwrap.StartWarm(spec, opt)
	if res != nil {
		release()
		os.RemoveAll(dir)
		return nil, errors.New(res.Error)
	}
	return &warmSlot{agent: agent, egressDir: dir, w: &bwrapWarm{w: w, opt: opt}, release: release}, nil
}

// bwrapWarm is a bubblewrap warm sandbox with the options it started
// with.
type bwrapWarm struct {
	w   *bwrap.Warm
	opt bwrap.RunOptions
}

func (b *bwrapWarm) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string) (*sandbox.Result, error) {
	opt := b.opt
	opt.BlockedSuffix = id[:8]
	return b.w.Run(ctx, spec, out, opt)
}

func (b *bwrapWarm) Alive() bool { return b.w.Alive() }
func (b *bwrapWarm) Pid() int    { return b.w.Pid() }
func (b *bwrapWarm) Close()      { b.w.Close() }

func (e *Executor) runBwrap(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string, opt bwrap.RunOptions) *sandbox.Result {
	opt.BlockedSuffix = id[:8]
	if g := e.cgroupFor("exec-"+id, spec, &opt); g != nil {
		defer g.Close()
	}
	return bwrap.Run(ctx, spec, out, opt)
}

func runSeatbelt(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: "sandbox_unavailable", Error: "seatbelt is macOS-only",
	}
}
