package pipeline

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// execPlan is what analysis fixed about one execution.
type execPlan struct {
	// pins are the inspected scripts bound over their paths.
	pins []sandbox.Pin
}

// analyze parses req's command, applies the policy rules and fills the
// event's analysis fields. A *Denial means nothing may run.
func (e *Executor) analyze(ctx context.Context, req *api.ExecRequest, dir string, ev *api.Event) (*execPlan, error) {
	return &execPlan{}, nil
}

// recheckPins verifies, immediately before the start, that every pinned
// script still has the bytes that were judged.
func (e *Executor) recheckPins(plan *execPlan, ev *api.Event) error {
	return nil
}
