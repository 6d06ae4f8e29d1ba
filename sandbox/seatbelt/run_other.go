//go:build !darwin

package seatbelt

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Run refuses: Seatbelt is macOS-only.
func (Runner) Run(context.Context, *sandbox.Spec, sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: sandbox.ReasonSandboxUnavailable, Error: "seatbelt is macOS-only",
	}
}
