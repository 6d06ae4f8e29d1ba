package pipeline

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/service/api"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/direct"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
)

var defaultWriteDeny = bwrap.DefaultWriteDeny

// backendChoice is the backend picked for one call and how to run it.
type backendChoice struct {
	backend   string // bubblewrap, seatbelt or none
	why       string
	err       error
	bwrapPath string
	initPath  string // the sandbox init, for bubblewrap and none
	// bwrapOpt are the options of a bubblewrap run (warm sandboxes start
	// with them).
	bwrapOpt bwrap.RunOptions
	run      func(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string) *sandbox.Result
}

// chooseBackend probes the host (per call: a sandbox that worked at start
// may have been removed since) and picks the configured backend.
func (e *Executor) chooseBackend() backendChoice {
	facts := probe.Gather(e.cfg.Exec.Sandbox.BwrapPath)
	chosen, why, err := probe.Select(e.cfg.Exec.Sandbox.Backend, facts)
	c := backendChoice{backend: chosen, why: why, err: err, bwrapPath: facts.BwrapPath}
	if err != nil {
		return c
	}
	// Both run Gatehouse's init (the none mode its sandbox-exec stage):
	// a missing one fails the start, and one of another build refuses it
	// (init.go).
	var in Init
	if chosen == "bubblewrap" || chosen == "none" {
		in = e.FindInit()
		c.initPath = in.Path
	}
	switch {
	case in.Err != nil:
		mode := sandbox.ModeBubblewrap
		if chosen == "none" {
			mode = sandbox.ModeNone
		}
		c.run = func(context.Context, *sandbox.Spec, sandbox.Streams, string) *sandbox.Result {
			return initFailed(mode, in)
		}
	case chosen == "bubblewrap":
		opt := bwrap.RunOptions{CgroupFD: -1}
		opt.DisableUserns = probe.BwrapAtLeast(facts, 0, 8, 0)
		c.bwrapOpt = opt
		c.run = func(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string) *sandbox.Result {
			res := e.runBwrap(ctx, spec, out, id, opt)
			explainMismatch(res, spec.InitPath)
			return res
		}
	case chosen == "none":
		c.run = func(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string) *sandbox.Result {
			res := direct.Run(ctx, spec, out)
			explainMismatch(res, spec.InitPath)
			return res
		}
	default:
		c.run = func(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string) *sandbox.Result {
			return runSeatbelt(ctx, spec, out)
		}
	}
	return c
}

// BwrapArgs returns the bubblewrap arguments req would run with, without
// running anything. It is for benchmarks and debugging.
func (e *Executor) BwrapArgs(req api.ExecRequest) ([]string, error) {
	if err := e.checkArgs(&req); err != nil {
		return nil, err
	}
	roots, err := e.workspaceRoots()
	if err != nil {
		return nil, &Denial{Code: DenyWorkspaceRoot, Reason: err.Error()}
	}
	dir, err := e.resolveCwd(req.Cwd, roots)
	if err != nil {
		return nil, &Denial{Code: DenyCwdOutside, Reason: err.Error()}
	}
	c := e.chooseBackend()
	spec := e.spec(&req, dir, roots, NewID(), e.timeout(req.TimeoutSeconds), c)
	// The tool cache is bound: it must exist (it is the agent's own).
	if spec.ToolCache != nil {
		if err := e.prepareToolCache(spec.ToolCache.Dir); err != nil {
			return nil, err
		}
	}
	plan, err := bwrap.Discover(spec.WorkspaceRoots, spec.DenyRead, spec.WriteDeny)
	if err != nil {
		return nil, err
	}
	a := bwrap.Args(spec, &plan.Mounts, bwrap.Options{DisableUserns: probe.BwrapAtLeast(probe.Gather(e.cfg.Exec.Sandbox.BwrapPath), 0, 8, 0)})
	return append(a, bwrap.InitCommand...), nil
}
