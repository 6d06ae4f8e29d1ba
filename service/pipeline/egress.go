package pipeline

import (
	"context"

	"github.com/gatehouse-dev/gatehouse/sandbox"
	"github.com/gatehouse-dev/gatehouse/service/api"
)

// startEgress starts the execution's egress proxy, binds its socket into
// spec and points the proxy variables at the bridge. The returned stop
// function ends the proxy and fills ev.Egress; it is safe to call twice.
func (e *Executor) startEgress(ctx context.Context, req *api.ExecRequest, spec *sandbox.Spec, ev *api.Event) (stop func(), err error) {
	return func() {}, nil
}
