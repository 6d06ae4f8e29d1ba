package pipeline

import (
	"github.com/gatehouse-dev/gatehouse/sandbox"
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

// DenyRead returns the paths no command may read, which no agent file
// tool may touch either: the mandatory deny-read set, Gatehouse's private
// paths and exec.sandbox.deny_read.
func (e *Executor) DenyRead() []string { return e.denyRead() }

// WorkspaceRoots returns the effective workspace roots of any agent,
// symlinks resolved; roots that do not exist are left out.
func (e *Executor) WorkspaceRoots() []string { return e.roots() }

// WorkspaceRootsFor returns agent's workspace roots: the policy's, and
// those trusted for every agent or for agent by name.
func (e *Executor) WorkspaceRootsFor(agent string) []string {
	roots, err := e.workspaceRoots(agent)
	if err != nil {
		return nil
	}
	return roots
}

// WriteDeny returns the write-deny set: names relative to each workspace
// root (and each repository in it) that commands may not write, a
// directory's with a final "/".
func (e *Executor) WriteDeny() []string {
	return append(append([]string{}, sandbox.DefaultWriteDeny...), e.cfg.Exec.Sandbox.WriteDeny...)
}
