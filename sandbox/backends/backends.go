// Package backends gives each sandbox backend its runner: the one place
// that knows which package implements which backend, so that the
// pipeline never names one.
package backends

import (
	"fmt"
	"log/slog"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/sandbox/bwrap"
	"github.com/gatehouse-dev/gatehouse/sandbox/direct"
	"github.com/gatehouse-dev/gatehouse/sandbox/probe"
	"github.com/gatehouse-dev/gatehouse/sandbox/seatbelt"
)

// Runner returns the runner of backend b (as Select chose it) on a host
// with facts f. logger reports limits that could not be applied; nil
// discards. A backend that cannot run here gets a runner that refuses
// every execution, saying why.
func Runner(b sandbox.Backend, f probe.Facts, logger *slog.Logger) sandbox.Runner {
	switch b {
	case sandbox.BackendBubblewrap:
		return &bwrap.Runner{Options: bwrap.Options{DisableUserns: probe.BwrapAtLeast(f, 0, 8, 0)}, Logger: logger}
	case sandbox.BackendNone:
		return direct.Runner{}
	case sandbox.BackendSeatbelt:
		return seatbelt.Runner{}
	}
	return sandbox.Refusal{Result: sandbox.Result{
		Mode: sandbox.ModeUnavailableDenied, Status: sandbox.StatusFailedToStart,
		StatusReason: sandbox.ReasonSandboxUnavailable, Error: fmt.Sprintf("no runner for sandbox backend %q", b),
	}}
}
