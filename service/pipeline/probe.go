package pipeline

import (
	"context"
	"time"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// ProbeSandbox starts one sandbox of the configured backend with the
// configured shell running "exit 0", and reports what came up: the mode
// (which says whether the seccomp stage installed), or why nothing started.
// It runs no agent command and binds no workspace; under read: workspace
// it hides what that posture hides and binds read_allow back, so that a
// plan the backend cannot make shows here.
func (e *Executor) ProbeSandbox(ctx context.Context) (backend sandbox.Backend, why string, res *sandbox.Result, err error) {
	c := e.chooseBackend()
	if c.err != nil {
		return c.backend, c.why, nil, c.err
	}
	spec := &sandbox.Spec{
		Shell:       e.cfg.Exec.Shell,
		Command:     "exit 0",
		Dir:         "/",
		Env:         []string{"PATH=/usr/bin:/bin"},
		Seccomp:     sandbox.SeccompLevel(e.cfg.Exec.Sandbox.Seccomp),
		AllowPtrace: e.cfg.Exec.Sandbox.AllowPtrace,
		Timeout:     30 * time.Second,
		TmpfsSize:   int64(e.cfg.Exec.Limits.TmpfsSize),
		FileSizeMax: int64(e.cfg.Exec.Limits.FileSizeMax),
		OutputMax:   4096,
		InitPath:    c.initPath,
		BwrapPath:   c.bwrapPath,
	}
	spec.Read, spec.ReadHide, spec.ReadAllow = e.readPlan(nil, nil)
	spec.ID = NewID()
	return c.backend, c.why, runFresh(ctx, c, spec, sandbox.Streams{}), nil
}
