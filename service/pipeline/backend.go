package pipeline

import (
	"context"
	"os"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/backends"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// backendChoice is the backend picked for one call and its runner. The
// pipeline asks the backend for facts (sandbox.Backend's methods) and
// never compares its name.
type backendChoice struct {
	backend   sandbox.Backend
	why       string
	err       error
	bwrapPath string
	initPath  string         // the sandbox init every backend runs
	runner    sandbox.Runner // nil when err is set
}

// chooseBackend probes the host (per call: a sandbox that worked at start
// may have been removed since) and picks the configured backend and its
// runner.
func (e *Executor) chooseBackend() backendChoice {
	facts := probe.Gather(e.cfg.Exec.Sandbox.BwrapPath)
	chosen, why, err := probe.Select(e.cfg.Exec.Sandbox.Backend, facts)
	c := backendChoice{backend: chosen, why: why, err: err, bwrapPath: facts.BwrapPath}
	if err != nil {
		return c
	}
	// Every backend runs Gatehouse's init (mode none and Seatbelt its
	// sandbox-exec stage): a missing one fails the start, and one of
	// another build refuses it (init.go).
	in := e.FindInit()
	c.initPath = in.Path
	if in.Err != nil {
		c.runner = sandbox.Refusal{Result: *initFailed(chosen.Mode(), in)}
		return c
	}
	c.runner = backends.Runner(chosen, facts, e.opts.Logger)
	return c
}

// runFresh runs spec in a fresh sandbox of c's backend.
func runFresh(ctx context.Context, c backendChoice, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	res := c.runner.Run(ctx, spec, out)
	explainMismatch(res, spec.InitPath)
	return res
}

// startSlot starts a warm sandbox for agent's commands under the
// configuration in force (pool.go), when the backend starts them: the
// plan of a command of agent, and the directory its egress proxy will
// listen in.
func (e *Executor) startSlot(k slotKey) (*warmSlot, error) {
	agent := k.agent
	c := e.chooseBackend()
	ws, ok := c.runner.(sandbox.WarmStarter)
	if c.err != nil || !ok {
		return nil, errNoWarm
	}
	if k.net != nil && k.net.gone.Load() {
		return nil, errSessionGone
	}
	judge := e.rootJudge()
	roots, err := e.workspaceRootsBy(judge, agent)
	if err != nil {
		return nil, err
	}
	req := api.ExecRequest{Agent: agent}
	spec := e.spec(&req, "/", roots, judge, NewID(), 1, c)
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
	if k.net != nil {
		// Started in the session's network; the bridge's port comes with
		// the command.
		spec.Network = k.net.n.Network(api.NetworkSessionPrefix + k.net.key.id)
	}
	w, err := ws.StartWarm(spec)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return &warmSlot{slotKey: k, egressDir: dir, w: w}, nil
}

// PlanSpec returns the sandbox plan req would run with, without running
// anything (the tool cache it binds is created). It is for benchmarks and
// debugging (gatehouse exec --print-args).
func (e *Executor) PlanSpec(req api.ExecRequest) (*sandbox.Spec, error) {
	ev := newEvent(&req, filepath.Base(e.cfg.Exec.Shell))
	roots, dir, timeout, err := e.prologue(context.Background(), &req, ev, &decideRun{dry: true})
	if err != nil {
		return nil, err
	}
	c := e.chooseBackend()
	spec := e.spec(&req, dir, roots, e.rootJudge(), ev.ID, timeout, c)
	if spec.ToolCache != nil {
		if err := e.prepareToolCache(spec.ToolCache.Dir); err != nil {
			return nil, err
		}
	}
	return spec, nil
}
