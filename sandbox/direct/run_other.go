//go:build !linux && !darwin

// Package direct runs a command with no kernel isolation (sandbox mode
// "none"). The governed shell does not run on this operating system.
package direct

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Run refuses: the governed shell does not start on this operating system.
func Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return &sandbox.Result{
		Status:       sandbox.StatusFailedToStart,
		StatusReason: sandbox.ReasonSpawnError,
		Error:        "the governed shell does not run on this operating system",
	}
}
