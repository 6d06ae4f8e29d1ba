package direct

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
)

// Runner runs executions with no kernel isolation: the sandbox.Runner of
// the backend none.
type Runner struct{}

// Run is Run.
func (Runner) Run(ctx context.Context, spec *sandbox.Spec, out sandbox.Streams) *sandbox.Result {
	return Run(ctx, spec, out)
}
