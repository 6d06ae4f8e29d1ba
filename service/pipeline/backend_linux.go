package pipeline

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/limits"
)

func (e *Executor) runBwrap(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string, opt bwrap.RunOptions) *sandbox.Result {
	opt.BlockedSuffix = id[:8]
	if d := limits.Detect(); d.Memory || d.Pids {
		g, err := d.NewGroup("exec-"+id, spec.MemoryMax, spec.PidsMax)
		if err != nil {
			e.opts.Logger.Warn("cgroup limits not applied", "err", err)
		} else {
			defer g.Close()
			if fd, err := g.FD(); err == nil {
				opt.CgroupFD = fd
				opt.Memory, opt.Pids = d.Memory && spec.MemoryMax > 0, d.Pids && spec.PidsMax > 0
			}
		}
	}
	return bwrap.Run(ctx, spec, out, opt)
}

func runSeatbelt(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: "sandbox_unavailable", Error: "seatbelt is macOS-only",
	}
}
