//go:build !linux

package pipeline

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
)

func (e *Executor) runBwrap(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams, id string, opt bwrap.RunOptions) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: "sandbox_unavailable", Error: "bubblewrap is Linux-only",
	}
}

func runSeatbelt(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: "sandbox_unavailable",
		Error:        "the seatbelt backend is not implemented yet; set exec.sandbox.backend: none with policy.sandbox_required: false to run without isolation",
	}
}

func (e *Executor) startSlot(agent string) (*warmSlot, error) { return nil, errNoWarm }
