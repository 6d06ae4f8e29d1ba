//go:build !linux

package bwrap

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Run refuses: bubblewrap is Linux-only.
func (r *Runner) Run(context.Context, *sandbox.Spec, sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: sandbox.ReasonSandboxUnavailable, Error: "bubblewrap is Linux-only",
	}
}
