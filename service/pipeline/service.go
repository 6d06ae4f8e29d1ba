package pipeline

import (
	"github.com/gatehouse-dev/gatehouse/service/api"
	"github.com/gatehouse-dev/gatehouse/service/policy"
)

// What the user service needs of an Executor beyond Decide and Run.

// Record records an event that has no outcome of its own: the decision
// event of a routed command (at admit time; its execution event is
// recorded by Run when the ticket is redeemed), and events of executions
// the service refused or that never ran (an expired ticket, the
// concurrency limit). It returns why ev is not on the record, nil when it
// is.
func (e *Executor) Record(ev *api.Event) error { return e.observe(ev, nil) }

// Config returns the configuration e was built with. It must not be
// modified.
func (e *Executor) Config() *policy.Config { return e.cfg }
